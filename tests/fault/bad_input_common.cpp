// The family registry, case directories, and the checks every run of a bad
// input must pass: exit 2, one `kmini: error:` line naming what it should,
// nothing written.
#include "bad_input_cases.hpp"

#include <sys/stat.h>
#include "case_support.hpp"
#include "deck_cases.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kmini::fault {

namespace {

constexpr std::size_t kMaxLineLength = 300;
constexpr const char* kPrefix = "kmini: error: ";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Control characters shown as escapes, long text cut: for reports only.
std::string printable(const std::string& s, std::size_t max = 400) {
  std::string out;
  for (unsigned char ch : s) {
    if (out.size() >= max) {
      out += "...(" + std::to_string(s.size()) + " bytes)";
      break;
    }
    if (ch == '\n') out += "\\n";
    else if (ch == '\t') out += "\\t";
    else if (ch < 0x20 || ch == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      out += buf;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

bool names(const std::string& line, const std::string& expected) {
  std::size_t start = 0;
  while (true) {
    const auto bar = expected.find("||", start);
    if (line.find(expected.substr(start, bar - start)) != std::string::npos) return true;
    if (bar == std::string::npos) return false;
    start = bar + 2;
  }
}

void check_error_line(const BadCase& c, const std::string& line, std::vector<std::string>& problems) {
  if (line.rfind(kPrefix, 0) != 0) problems.push_back("the line does not start with '" + std::string(kPrefix) + "'");
  if (line.size() > kMaxLineLength)
    problems.push_back("the line has " + std::to_string(line.size()) + " characters (at most " +
                       std::to_string(kMaxLineLength) + ")");
  for (const auto& n : c.must_name)
    if (!names(line, n)) problems.push_back("the line does not name '" + printable(n, 80) + "'");
}

// What the run left in its directory beyond the case's own files, and any of
// those files it changed.
void check_nothing_written(const BadCase& c, const std::string& dir, std::vector<std::string>& problems) {
  std::set<std::string> inputs;
  for (const auto& f : c.files) {
    inputs.insert(f.name);
    const fs::path p = fs::path(dir) / f.name;
    if (f.directory) {
      std::error_code ec;
      if (!fs::is_directory(p) || !fs::is_empty(p, ec)) problems.push_back("input directory " + f.name + " changed");
    } else if (f.fifo) {
      if (!fs::is_fifo(p)) problems.push_back("named pipe " + f.name + " was changed or removed");
    } else if (!fs::is_regular_file(p) || read_file(p) != f.bytes) {
      problems.push_back("input file " + f.name + " was changed or removed");
    }
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (inputs.count(name)) continue;
    const bool is_out = std::find(c.out_dirs.begin(), c.out_dirs.end(), name) != c.out_dirs.end();
    if (is_out && entry.is_directory()) {
      std::string held;
      for (const auto& e : fs::recursive_directory_iterator(entry.path(), ec))
        held += (held.empty() ? "" : ", ") + fs::relative(e.path(), entry.path()).string();
      if (!held.empty()) problems.push_back("wrote into --out " + name + "/: " + printable(held, 200));
    } else {
      problems.push_back("left " + name + (entry.is_directory() ? "/" : "") + " in the case directory");
    }
  }
}

}  // namespace

// ---------------------------------------------------------------- registry ----

const std::vector<Family>& families() {
  static const std::vector<Family> all = [] {
    auto f = deck_families();
    auto n = npy_families();
    f.insert(f.end(), n.begin(), n.end());
    return f;
  }();
  return all;
}

const Family& family(const std::string& name) {
  for (const auto& f : families())
    if (f.name == name) return f;
  throw std::invalid_argument("no fault family " + name);
}

std::vector<BadCase> generate(const Family& f, std::uint64_t seed) {
  auto cases = f.generate(seed ^ hash_name(f.name));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    char num[32];
    std::snprintf(num, sizeof num, "%03zu", i);
    cases[i].family = f.name;
    cases[i].id = f.name + "." + num;
  }
  return cases;
}

std::uint64_t seed_from_environment() {
  if (const char* s = std::getenv("KMINI_FAULT_SEED"); s && *s) return std::strtoull(s, nullptr, 0);
  return 20240909;
}

std::vector<BadCase> controls() {
  std::vector<BadCase> out;
  BadCase base;
  base.what = "the base deck every deck case starts from";
  base.files = {CaseFile{"deck.yaml", base_deck().text(), false}};
  base.args = {"deck.yaml"};
  base.expect_exit = 0;
  out.push_back(base);
  for (const std::string k : {"rk4", "discount", "gram"}) {  // every kernel runs at the base sizes
    BadCase c = base;
    c.what = "the base deck running " + k;
    c.args = {"deck.yaml", "--set", "run.kernels=[" + k + "]"};
    out.push_back(c);
  }
  for (const std::string size : {"64M", "'1.5 GiB'", "67108864"}) {  // sizes with units run
    BadCase c = base;
    c.what = "the base deck running gram with memory_budget " + size;
    c.args = {"deck.yaml", "--set", "run.kernels=[gram]", "--set", "gram.memory_budget=" + size};
    out.push_back(c);
  }
  BadCase multi = base;  // the multi-document cases' safety --sets are valid
  multi.what = "the base deck with the safety --set options";
  const auto sets = safety_sets();
  multi.args.insert(multi.args.end(), sets.begin(), sets.end());
  out.push_back(multi);
  auto npy = npy_controls();
  out.insert(out.end(), npy.begin(), npy.end());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].family = "control";
    out[i].id = "control." + std::to_string(i);
  }
  return out;
}

// ---------------------------------------------------------- case directories --

std::vector<std::string> arguments(const BadCase& c) {
  std::vector<std::string> a = c.args;
  if (!c.own_out) {
    a.push_back("--out");
    a.push_back(c.out_dirs.front());
  }
  return a;
}

void materialise(const BadCase& c, const std::string& dir) {
  remove_tree(dir);
  fs::create_directories(dir);
  for (const auto& f : c.files) {
    const fs::path p = fs::path(dir) / f.name;
    if (f.directory) {
      fs::create_directories(p);
      continue;
    }
    if (f.fifo) {
      if (::mkfifo(p.c_str(), 0644) != 0) throw std::runtime_error("cannot make the named pipe " + p.string());
      continue;
    }
    std::ofstream o(p, std::ios::binary);
    o.write(f.bytes.data(), static_cast<std::streamsize>(f.bytes.size()));
    if (!o) throw std::runtime_error("cannot write " + p.string());
  }
}

void remove_tree(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// ------------------------------------------------------------------- checks ----

std::vector<std::string> check_run(const BadCase& c, const std::string& dir, int status,
                                   const std::string& stderr_text) {
  std::vector<std::string> problems;
  if (status != c.expect_exit)
    problems.push_back("exit status " + std::to_string(status) + ", expected " + std::to_string(c.expect_exit));
  if (c.expect_exit == 0) {
    if (!stderr_text.empty()) problems.push_back("stderr is not empty");
    if (!fs::exists(fs::path(dir) / c.out_dirs.front() / "results.json")) problems.push_back("no results.json");
    return problems;
  }
  const auto lines = lines_of(stderr_text);
  if (lines.size() != 1 || stderr_text.back() != '\n')
    problems.push_back(std::to_string(lines.size()) + " line(s) on stderr, expected exactly one");
  if (!lines.empty()) check_error_line(c, lines.front(), problems);
  check_nothing_written(c, dir, problems);
  return problems;
}

std::vector<std::string> check_mpi_run(const BadCase& c, const std::string& dir, int status,
                                       const std::string& stderr_text) {
  std::vector<std::string> problems;
  if (status != c.expect_exit)
    problems.push_back("exit status " + std::to_string(status) + ", expected " + std::to_string(c.expect_exit));
  std::vector<std::string> errors;
  for (const auto& l : lines_of(stderr_text))
    if (l.find("kmini: error:") != std::string::npos) errors.push_back(l);
  if (errors.size() != 1)
    problems.push_back(std::to_string(errors.size()) + " 'kmini: error:' line(s), expected one (rank 0's)");
  if (!errors.empty()) check_error_line(c, errors.front(), problems);
  check_nothing_written(c, dir, problems);
  return problems;
}

// --------------------------------------------------------------- reporting ----

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    bool plain = !w.empty();
    for (char ch : w) plain = plain && (std::isalnum(static_cast<unsigned char>(ch)) || std::strchr("-_./=:,+", ch));
    std::string q = w;
    if (!plain) {
      q = "'";
      for (char ch : w) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      q += "'";
    }
    out += (out.empty() ? "" : " ") + q;
  }
  return out;
}

std::string describe(const BadCase& c, const std::string& dir) {
  std::ostringstream os;
  os << c.id << ": " << c.what << "\n";
  os << "    reproduce: (cd " << dir << " && " << (c.env.empty() ? "" : shell_join(c.env) + " ") << "kmini "
     << printable(shell_join(arguments(c)), 600) << ")\n";
  for (const auto& f : c.files) {
    if (f.directory) {
      os << "    " << f.name << "/ (an empty directory)\n";
    } else if (f.fifo) {
      os << "    " << f.name << " (a named pipe)\n";
    } else if (f.name.size() > 5 && f.name.compare(f.name.size() - 5, 5, ".yaml") == 0) {
      os << "    " << f.name << ":\n";
      const auto ls = lines_of(f.bytes);
      for (std::size_t i = 0; i < ls.size() && i < 60; ++i)
        os << "      " << (i + 1 < 10 ? " " : "") << i + 1 << "| " << printable(ls[i], 160) << "\n";
    } else {
      os << "    " << f.name << ": " << f.bytes.size() << " bytes (kept in the directory above)\n";
    }
  }
  return os.str();
}

std::string report(const std::string& family, std::size_t cases, const std::vector<Failure>& failures,
                   std::uint64_t seed, double seconds) {
  constexpr std::size_t kInFull = 6;
  std::ostringstream os;
  char time[32];
  std::snprintf(time, sizeof time, "%.2f s", seconds);
  os << "[ fault    ] " << family << ": " << cases << " case(s), " << failures.size() << " failed (seed " << seed
     << ", " << time << ")\n";
  for (std::size_t i = 0; i < failures.size(); ++i) {
    const Failure& f = failures[i];
    std::string problems;
    for (const auto& p : f.problems) problems += (problems.empty() ? "" : "; ") + p;
    if (i < kInFull) {
      os << "  FAILED " << describe(f.c, f.dir);
      os << "    problems: " << problems << "\n";
      os << "    stderr: " << printable(f.stderr_text, 600) << "\n";
    } else {
      os << "  FAILED " << f.c.id << ": " << f.c.what << " -- " << problems
         << " -- stderr: " << printable(f.stderr_text, 160) << "\n";
    }
  }
  return os.str();
}

}  // namespace kmini::fault
