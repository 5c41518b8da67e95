"""gram's file input read in blocks, checked and packed in one pass: bad values
in files of several read blocks (the first bad element named, wherever it is:
the first element, a later block, the last element), 1 bits in a packbits row's
padding, and a file shorter than its header says, at 1, 2 and 4 ranks; each is
exit 2 with one line from kmini (over all ranks) naming the file and the element, and nothing written.
A file cut while it is read and a block that cannot be read (EIO), injected by
the LD_PRELOAD library PRELOAD, are exit 1 with one line naming the file, the
rows and the reason, and nothing written. The
same files without the bad byte run verified (the host reference re-reads the
file and packs it bit by bit), and results.json's read roof counts every byte of
the data once, without the probe.

usage: check_gram_read_faults.py KMINI PRELOAD MPIEXEC [MPIEXEC FLAGS...]
"""
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile

kmini, preload, mpiexec, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]

# Larger than a GPU's 16 MiB read block: the last element is in the second (and the 18th of 1 MiB on hosts).
ROWS, COLS = 260, 70001


def npy_header(descr, shape):
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (descr, *shape)
    pad = 64 - (10 + len(text) + 1) % 64
    text += " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode()


def write_npy(path, descr, shape, data):
    with open(path, "wb") as f:
        f.write(npy_header(descr, shape))
        f.write(data)


def random_packbits(rows, cols, seed):
    """Random numpy packbits rows: column k in bit 7 - k % 8 of byte k / 8, the padding bits 0."""
    rng = random.Random(seed)
    nb = (cols + 7) // 8
    out = bytearray(rng.randbytes(rows * nb))
    pad = (0xFF << (8 - cols % 8)) & 0xFF if cols % 8 else 0xFF
    for r in range(rows):
        out[r * nb + nb - 1] &= pad
    return out


def unpack(packed, rows, cols):
    """The 0/1 bytes of packbits rows, as numpy's unpackbits cut to cols."""
    nb = (cols + 7) // 8
    tables = [bytes((b >> (7 - i)) & 1 for b in range(256)) for i in range(8)]
    out = bytearray()
    for r in range(rows):
        row, bits = packed[r * nb:(r + 1) * nb], bytearray(nb * 8)
        for i in range(8):
            bits[i::8] = row.translate(tables[i])
        out += bits[:cols]
    return out


def run(ranks, out, args, env=()):
    cmd = [mpiexec, "-n", str(ranks), *flags, "env", *env, kmini, "--set", "run.kernels=[gram]", *args, "--out", out]
    return cmd, subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def expect_error(ranks, tmp, name, args, message, status=2, env=()):
    out = os.path.join(tmp, f"out_{name}_{ranks}")
    cmd, p = run(ranks, out, args, env)
    lines = [line for line in p.stderr.splitlines() if line.startswith("kmini:")]  # mpiexec adds its own
    assert p.returncode == status, (cmd, p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert len(lines) == 1 and message in lines[0], (cmd, message, lines)
    assert not os.path.exists(out) or not os.listdir(out), (cmd, os.listdir(out))
    print(f"{ranks} rank(s), {name}: {lines[0]}")
    return lines[0]


def expect_verified(ranks, tmp, name, args, data_bytes):
    """Exit 0, verified, and the read roof of results.json: every byte of the file's data read once
    over the ranks, the reads part of read + pack."""
    out = os.path.join(tmp, f"out_{name}_{ranks}")
    cmd, p = run(ranks, out, ["--set", "run.verify=true", *args])
    assert p.returncode == 0, (cmd, p.stdout[-2000:], p.stderr[-2000:])
    with open(os.path.join(out, "results.json")) as f:
        gram = json.load(f)["kernels"]["gram"]
    assert gram["verified"] is True and gram["verification"]["mismatches"] == 0, gram["verification"]
    roof = gram["read_roof"]
    assert roof["bytes"] == data_bytes, (roof, data_bytes)
    assert 0 < roof["raw_read_seconds"] <= roof["read_and_pack_seconds"] == gram["pack_seconds"], roof
    assert math.isclose(roof["read_and_pack_over_raw_read"], roof["read_and_pack_seconds"] / roof["raw_read_seconds"])
    assert math.isclose(roof["raw_read_bytes_per_s"], data_bytes / roof["raw_read_seconds"])
    assert "probe" not in gram["phases"] and gram["fraction_of_peak"] is None, gram["phases"]
    print(f"{ranks} rank(s), {name}: verified, read roof {roof['raw_read_bytes_per_s'] / 1e9:.3g} GB/s, "
          f"read + pack {roof['read_and_pack_over_raw_read']:.3g} x the reads")


def main():
    packed = random_packbits(ROWS, COLS, 7)
    good = unpack(packed, ROWS, COLS)
    with tempfile.TemporaryDirectory() as tmp:
        def bad_file(name, changes, descr="|u1"):
            m = bytearray(good)
            for (r, k), v in changes.items():
                m[r * COLS + k] = v
            path = os.path.join(tmp, name)
            write_npy(path, descr, (ROWS, COLS), m)
            return path

        good_path = bad_file("good.npy", {})
        cases = [
            ("last_element", bad_file("last.npy", {(ROWS - 1, COLS - 1): 2}), f"element ({ROWS - 1}, {COLS - 1}) is 2"),
            ("first_element", bad_file("first.npy", {(0, 0): 255}, "|b1"), "element (0, 0) is 255"),
            ("first_of_two", bad_file("two.npy", {(130, 0): 3, (200, 5): 2}), "element (130, 0) is 3"),
            ("high_bit", bad_file("high.npy", {(129, 64): 129}), "element (129, 64) is 129"),
        ]
        packed_cols = COLS  # 8751 bytes per row, 7 bits of padding at the end of each
        nb = (packed_cols + 7) // 8
        packed_path = os.path.join(tmp, "packed.npy")
        write_npy(packed_path, "|u1", (ROWS, nb), packed)
        padded = bytearray(packed)
        padded[(ROWS - 1) * nb + nb - 1] |= 1
        padded_path = os.path.join(tmp, "padded.npy")
        write_npy(padded_path, "|u1", (ROWS, nb), padded)
        short_path = os.path.join(tmp, "short.npy")
        write_npy(short_path, "|u1", (ROWS, COLS), good[:-1000])
        def injected(kind, at, message):
            """A fault at byte `at` of the good file's data (a fresh copy: a cut one is shorter after)."""
            path = bad_file(f"{kind}.npy", {})
            env = [f"LD_PRELOAD={preload}", f"KMINI_READ_FAULT={kind}", f"KMINI_READ_FAULT_FILE={path}",
                   f"KMINI_READ_FAULT_AT={os.path.getsize(path) - ROWS * COLS + at}"]
            line = expect_error(ranks, tmp, kind, ["--set", f"gram.A={{file: {path}}}"], message, 1, env)
            first, last = map(int, re.search(r"\.npy: read of rows (\d+)\.\.(\d+) ", line).groups())
            assert first <= at // COLS <= last, (line, at // COLS)

        for ranks in (1, 2, 4):
            # in the middle of row 200 (rank 3's at 4 ranks); the read of its block names the rows
            at = 200 * COLS + COLS // 2
            injected("eio", at, "Input/output error")
            injected("shrink", at, "bytes (the file is shorter than its header says: was it cut while being read?)")
            for name, path, message in cases:
                expect_error(ranks, tmp, name, ["--set", f"gram.A={{file: {path}}}"],
                             f"{os.path.basename(path)}: {message} (expected 0 or 1)")
            expect_error(ranks, tmp, "padding",
                         ["--set", f"gram.A={{file: {padded_path}, packed: true, cols: {packed_cols}}}"],
                         f"padded.npy: row {ROWS - 1} has 1 bits past column {packed_cols}")
            expect_error(ranks, tmp, "short", ["--set", f"gram.A={{file: {short_path}}}"], "short.npy")
            expect_verified(ranks, tmp, "unpacked", ["--set", f"gram.A={{file: {good_path}}}", "--set",
                                                     "gram.probe=false"], ROWS * COLS)
            expect_verified(ranks, tmp, "packed",
                            ["--set", f"gram.A={{file: {packed_path}, packed: true, cols: {packed_cols}}}",
                             "--set", "gram.probe=false"], ROWS * nb)


main()
