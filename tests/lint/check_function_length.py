#!/usr/bin/env python3
"""Every C++ function body under SRC_DIR (.cpp, .hpp, .cu files) is at most MAX lines long, counted
from the line of the function's name to its closing brace.

A brace-matching scan, not a parser: comments, string and character literals and preprocessor lines
are blanked first (every branch of an #if is read: a brace opened differently in two branches stops
the scan of that file, reported as `cannot scan`). A `{` at namespace or class scope opens a
function body when what precedes it ends in a parameter list, optionally followed by qualifiers
(const, noexcept, override, ...), a trailing return type or a constructor's initialiser list.
Namespace, class, struct, union and enum bodies are scopes to look inside; any other brace there
(an initialiser) is skipped. Inside a body, braces (blocks, lambdas, local classes) only nest: they
count towards the enclosing function.

Usage: check_function_length.py SRC_DIR [--max 80]
       check_function_length.py --self-test DATA_DIR
Prints `file:line: name: N lines` for each longer function; exit 1 if any, 0 otherwise. The self
test checks DATA_DIR/*.cpp with --max 10 against DATA_DIR/expected.txt (exit 1 on a difference)."""
import argparse
import re
import sys
from pathlib import Path

SUFFIXES = (".cpp", ".hpp", ".cu")
SCOPE_KEYWORD = re.compile(r"\b(namespace|class|struct|union|enum)\b")
EXTERN_C = re.compile(r'^\s*extern\s*"\s*"\s*$')
# After the parameter list (parenthesised groups already collapsed to "()").
QUALIFIERS = r"(?:\s*(?:const|volatile|noexcept|override|final|mutable|throw|&&|&)(?:\s*\(\))?)*"
FUNCTION_TAIL = re.compile(r"^" + QUALIFIERS + r"\s*(?:->[^=]*)?$")
WORDS = r"[\w:<>~]+(?:\s+[\w:<>~]+)*"
INIT_ITEM = r"\s*" + WORDS + r"\s*(?:\(\)|\{\})\s*"
# A constructor's initialiser list, complete (the body's brace follows) or open at a member's
# brace initialiser (`: a_(x), b_{` ... `}`).
CTOR_TAIL = re.compile(r"^" + QUALIFIERS + r"\s*:(?!:)(?:" + INIT_ITEM + r",)*" + INIT_ITEM + r"$")
CTOR_OPEN = re.compile(r"^" + QUALIFIERS + r"\s*:(?!:)(?:" + INIT_ITEM + r",)*\s*" + WORDS + r"\s*$")
TEMPLATE_ARGS = r"(?:\s*<[^<>()]*(?:<[^<>()]*>[^<>()]*)*>)?"  # one level of nesting
NAME = re.compile(r"((?:[\w~]+" + TEMPLATE_ARGS + r"\s*::\s*)*(?:operator\s*\(\)|operator\b[^()]*|~?\w+" +
                  TEMPLATE_ARGS + r"))\s*$")


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (lines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A directive, with its continuation lines.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
            continue
        if c not in " \t":
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or raw_string_at(text, i):
            j = literal_end(text, i)
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + '"' if j - i >= 2 else " ")
            i = j
        elif c == "'" and not (i and text[i - 1].isalnum()):  # not a digit separator (1'000)
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def raw_string_at(text, i):
    """Whether a raw string literal (R"d(...)d", maybe after u8, u, U or L) starts at i."""
    if not text.startswith('R"', i):
        return False
    before = text[:i]
    return not re.search(r"\w$", re.sub(r"(?<!\w)(?:u8|u|U|L)$", "", before[-3:]))


def literal_end(text, i):
    """The index after the string literal that starts at i (`"..."` or `R"d(...)d"`)."""
    if text[i] == "R":
        open_paren = text.index("(", i)
        delim = text[i + 2:open_paren]
        close = text.find(")" + delim + '"', open_paren)
        return len(text) if close < 0 else close + len(delim) + 2
    j = i + 1
    while j < len(text) and text[j] != '"' and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return min(j + 1, len(text))


def blank_templates(head):
    """head with its `template <...>` parameter lists replaced by spaces (offsets kept)."""
    out = list(head)
    for m in re.finditer(r"\btemplate\s*<", head):
        depth, j = 0, m.end() - 1
        while j < len(head):
            depth += {"<": 1, ">": -1}.get(head[j], 0)
            out[j] = " "
            j += 1
            if depth == 0:
                break
        out[m.start():m.end() - 1] = " " * (m.end() - 1 - m.start())
    return "".join(out)


def paren_groups(text):
    """The (start, end) offsets of text's top-level (...) groups."""
    groups, depth, start = [], 0, 0
    for j, c in enumerate(text):
        if c == "(":
            if depth == 0:
                start = j
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                groups.append((start, j))
    return groups


def collapse(text):
    """text with each top-level (...) and {...} group reduced to "()" or "{}"."""
    out, depth = [], 0
    for c in text:
        if c in "({":
            if depth == 0:
                out.append("()" if c == "(" else "{}")
            depth += 1
        elif c in ")}":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def classify(head):
    """What a `{` after `head` (at namespace or class scope) opens: ("function", offset of the name
    in head, name), ("init",) for a member's brace initialiser inside a constructor's initialiser
    list, ("scope",) or ("other",)."""
    plain = blank_templates(head)
    groups = paren_groups(plain)
    for k, (start, end) in enumerate(groups):
        before = plain[:start]
        if re.search(r"\boperator\s*$", before) and k + 1 < len(groups) and not plain[end + 1:groups[k + 1][0]].strip():
            continue  # operator(): its parameter list is the next group
        tail = collapse(plain[end + 1:])
        if FUNCTION_TAIL.match(tail) or CTOR_TAIL.match(tail):
            if "=" in re.sub(r"\boperator\b\s*[^\s(]*", "", collapse(before)):
                return ("other",)  # a variable initialised with a lambda or a call
            m = NAME.search(before)
            if not m:
                return ("other",)
            return ("function", m.start(1), re.sub(r"\s+", "", m.group(1)))
        if CTOR_OPEN.match(tail) and re.search(r"[\w>]\s*$", tail):
            return ("init",)
    skel = collapse(plain)
    if EXTERN_C.match(skel) or SCOPE_KEYWORD.search(skel) and "=" not in skel:
        return ("scope",)
    return ("other",)


def functions(text):
    """(line, name, lines) of every function body in a C++ source text."""
    code = blank(text)
    line_of = [0] * (len(code) + 1)
    line = 1
    for j, c in enumerate(code):
        line_of[j] = line
        if c == "\n":
            line += 1
    line_of[len(code)] = line

    found = []
    head_start = 0  # where the text before the next `{` at scope level starts
    paren = 0  # parentheses open in that text (a brace inside them is an argument's)
    i, n = 0, len(code)

    def matching(j):
        depth = 0
        while j < n:
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    return j
            j += 1
        raise ValueError(f"unbalanced braces from line {line_of[min(j, n)]}")

    while i < n:
        c = code[i]
        if c == "(":
            paren += 1
        elif c == ")":
            paren -= 1
        elif c == ";" and paren == 0:
            head_start = i + 1
        elif c == "}" and paren == 0:
            head_start = i + 1  # the end of a scope
        elif c == "{":
            if paren > 0:
                i = matching(i) + 1
                continue
            head = code[head_start:i]
            kind = classify(head)
            if kind[0] == "scope":
                head_start = i + 1
            elif kind[0] == "init":
                i = matching(i) + 1
                continue
            else:
                close = matching(i)
                if kind[0] == "function":
                    first = line_of[head_start + kind[1]]
                    found.append((first, kind[2], line_of[close] - first + 1))
                i = close + 1
                head_start = i
                continue
        i += 1
    return found


def scan(src_dir, limit):
    root = Path(src_dir)
    shown = root.resolve().name
    long = []
    for path in sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file()):
        rel = f"{shown}/{path.relative_to(root).as_posix()}"
        try:
            found = functions(path.read_text(encoding="utf-8", errors="replace"))
        except ValueError as e:
            long.append(f"{rel}: cannot scan: {e}")
            continue
        long += [f"{rel}:{line}: {name}: {count} lines" for line, name, count in found if count > limit]
    return long


def self_test(data_dir):
    data = Path(data_dir)
    got = scan(data, 10)
    expected = [ln for ln in (data / "expected.txt").read_text(encoding="utf-8").splitlines() if ln.strip()]
    if got == expected:
        print(f"check_function_length: self test: the {len(expected)} expected long functions, nothing else")
        return 0
    print("check_function_length: self test failed")
    for ln in expected:
        if ln not in got:
            print(f"  expected, not found: {ln}")
    for ln in got:
        if ln not in expected:
            print(f"  found, not expected: {ln}")
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src_dir", nargs="?")
    ap.add_argument("--max", type=int, default=80, help="longest body allowed, in lines (default 80)")
    ap.add_argument("--self-test", metavar="DATA_DIR", help="check the scanner on DATA_DIR/*.cpp")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.self_test)
    if not args.src_dir:
        ap.error("SRC_DIR is required")
    long = scan(args.src_dir, args.max)
    for ln in long:
        print(ln)
    if long:
        print(f"check_function_length: {len(long)} function(s) longer than {args.max} lines; "
              "extract well-named helpers")
        return 1
    print(f"check_function_length: every function in {args.src_dir} is at most {args.max} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
