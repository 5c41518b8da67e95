// Inputs and limits: missing or wrong input files, keys fine alone and bad
// together, long values, sizes no machine holds, bad Kokkos flags; each case
// bad by construction, with what its error line must name.
#include "case_support.hpp"
#include "deck_case_helpers.hpp"
#include "deck_cases.hpp"

#include <algorithm>
#include <set>
#include <tuple>

namespace kmini::fault {

namespace {

// Input files named in the deck that are missing or are directories.
std::vector<BadCase> missing_input(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<BadCase> out;
  for (const std::string key : {"rk4.init.F.file", "rk4.init.G.file", "discount.init.mult_by.file",
                                "discount.init.discount.file", "gram.A.file", "rk4.restart"}) {
    const KeySpec& k = *find_key(key);
    for (const std::string name : {"nope.npy", "indir"}) {
      BadCase c = value_case(k, name, rng.below(2) == 0, name == "indir" ? "a directory as input" : "missing input");
      if (name == "indir") c.files.push_back(CaseFile{"indir", "", true});
      c.must_name.push_back(name);
      out.push_back(c);
    }
  }
  return out;
}

// Valid .npy files of the wrong dtype or shape for the key that reads them.
std::vector<BadCase> wrong_input(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<BadCase> out;
  auto file_of = [](const std::string& descr, const std::vector<std::int64_t>& shape) {
    std::int64_t count = 1;
    for (auto d : shape) count *= d;
    NpyParts p;
    p.descr = descr;
    p.shape = shape_text(shape);
    return npy_file(p, std::string(static_cast<std::size_t>(count) * descr_item_size(descr), '\0'));
  };
  struct Wrong {
    std::string key, descr;
    std::vector<std::int64_t> shape;
    std::vector<std::pair<std::string, std::string>> context;
  };
  const std::vector<Wrong> wrongs = {
      {"gram.A.file", "<f8", {8, 16}, {}},
      {"gram.A.file", "<i4", {8, 16}, {}},
      {"gram.A.file", "<c8", {8, 16}, {}},
      {"gram.A.file", "|u1", {16}, {}},
      {"gram.A.file", "|u1", {2, 4, 4}, {}},
      {"gram.A.file", "|u1", {0, 16}, {}},
      {"gram.A.file", "|u1", {8, 0}, {}},
      {"gram.A.file", "|b1", {8, 2}, {{"gram.A.packed", "true"}, {"gram.A.cols", "16"}}},
      {"gram.A.file", "|u1", {8, 3}, {{"gram.A.packed", "true"}, {"gram.A.cols", "16"}}},
      {"rk4.init.F.file", "<c8", {4, 4}, {}},
      {"rk4.init.F.file", "<f8", {8, 8}, {}},
      {"rk4.init.F.file", "<c8", {8, 8, 1}, {}},
      {"rk4.init.F.file", "<c16", {8, 9}, {}},
      {"rk4.init.G.file", "<i8", {8, 8}, {}},
      {"rk4.init.G.file", "<c8", {64}, {}},
      {"discount.init.mult_by.file", "<i4", {3, 2}, {}},
      {"discount.init.mult_by.file", "<c8", {3, 2}, {}},
      {"discount.init.mult_by.file", "<f8", {2, 3}, {}},
      {"discount.init.mult_by.file", "<f8", {3, 2, 1}, {}},
      {"discount.init.mult_by.file", "|u1", {3, 2}, {}},
      {"discount.init.discount.file", "<f8", {2, 3, 3}, {}},
      {"discount.init.discount.file", "<f4", {2, 3}, {}},
      {"discount.init.discount.file", "<c16", {2, 3, 2}, {}},
      {"discount.init.discount.file", "|b1", {2, 3, 2}, {}},
      {"rk4.restart", "<c8", {2, 2}, {}},
      {"rk4.restart", "<c16", {2, 2}, {}},
      {"rk4.restart", "<c16", {6, 2}, {}},
      {"rk4.restart", "<f8", {8, 2}, {}},
  };
  for (const auto& w : wrongs) {
    const KeySpec& k = *find_key(w.key);
    DeckTree deck = base_deck();
    for (const auto& [p, v] : w.context) deck.set(p, v);
    const std::string name = "in_" + w.descr.substr(1) + "_" + std::to_string(w.shape.size()) + "d.npy";
    BadCase c = value_case(k, name, rng.below(2) == 0,
                           "a valid " + w.descr + " " + shape_text(w.shape) + " file, wrong for the key", deck);
    c.files.push_back(CaseFile{name, file_of(w.descr, w.shape), false});
    c.must_name.push_back(name);
    out.push_back(c);
  }
  return out;
}

// Values fine alone, bad together.
std::vector<BadCase> cross_key(std::uint64_t) {
  std::vector<BadCase> out;
  auto add = [&](const std::string& what, std::vector<std::pair<std::string, std::string>> sets,
                 const std::string& named_key, const std::string& line_key, std::vector<CaseFile> extra = {}) {
    DeckTree deck = base_deck();
    for (const auto& [p, v] : sets) {
      if (v.empty()) deck.remove(p);
      else deck.set(p, v);
    }
    std::map<std::string, int> lines;
    BadCase c;
    c.what = what;
    c.files = {deck_file(deck.text(&lines))};
    c.files.insert(c.files.end(), extra.begin(), extra.end());
    c.args = {"deck.yaml"};
    // A block map's position is its first key's line: accept the key's line or the next.
    c.must_name = {at_line(lines[line_key]) + "||" + at_line(lines[line_key] + 1), named_key};
    out.push_back(c);
  };
  add("discount.write.reduced while discount.reduce is none", {{"discount.write.reduced", "r.npy"}},
      "discount.write.reduced", "discount.write.reduced");
  // The budget and the slice disagree: either line, and the budget, named.
  for (const std::string budget : {"1", "100"}) {
    add("gram.memory_budget of " + budget + " bytes with an explicit row_slice (must not be ignored)",
        {{"gram.memory_budget", budget}}, "memory_budget", "gram.memory_budget");
    std::map<std::string, int> lines;
    base_deck().text(&lines);
    out.back().must_name.front() += "||" + at_line(lines["gram.row_slice"]);
  }
  add("rk4.init.F with fill and random", {{"rk4.init.F.fill", "[1, 0]"}, {"rk4.init.F.random.seed", "1"}}, "rk4.init.F",
      "rk4.init.F");
  add("rk4.init.G with none of fill/file/random", {{"rk4.init.G", "{}"}}, "rk4.init.G", "rk4.init.G");
  add("discount.init.mult_by with arange and random",
      {{"discount.init.mult_by.arange", "{}"}, {"discount.init.mult_by.random.seed", "1"}}, "discount.init.mult_by",
      "discount.init.mult_by");
  add("gram.A with file and random", {{"gram.A.file", "A.npy"}}, "gram.A", "gram.A");
  NpyParts packed;
  packed.descr = "|u1";
  packed.shape = "(8, 2)";
  add("gram.A packed without cols", {{"gram.A.random", ""}, {"gram.A.file", "packed.npy"}, {"gram.A.packed", "true"}},
      "gram.A.cols", "gram.A", {CaseFile{"packed.npy", npy_file(packed, std::string(16, '\0')), false}});
  return out;
}

// Long values, keys and names: the line must stay short (values cut to ~80).
std::vector<BadCase> long_value(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<BadCase> out;
  std::string list = "[";
  for (int i = 0; i < 2000; ++i) list += i ? ", 1" : "1";
  list += "]";
  const std::string word(5000, 'x');
  const std::string digits(3000, '7');
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"stream.n", word},
           {"stream.n", digits},
           {"rk4.dt", list},
           {"rk4.coupling", word},
           {"run.kernels", "[" + word + "]"},
           {"gram.write.C", list},
           {"rk4.write.F", word + ".txt"},
           {"discount.precision", "{" + std::string(900, 'x') + ": 1}"},  // YAML keys stop at 1024 characters
           {"rk4.init.F.fill", list},
       })
    out.push_back(value_case(*find_key(key), value, rng.below(3) == 0, "a long value"));
  {  // A long unknown key: the line names it, cut.
    DeckTree deck = base_deck();
    const std::string key = "stream." + std::string(400, 'k');
    deck.set(key, "1");
    std::map<std::string, int> lines;
    BadCase c;
    c.what = "a 400-character unknown key in stream";
    c.files = {deck_file(deck.text(&lines))};
    c.args = {"deck.yaml"};
    c.must_name = {at_line(lines[key]), "stream.kkkk"};
    out.push_back(c);
  }
  {  // A long --set that is not KEY=VALUE.
    BadCase c;
    c.what = "a 3000-character --set without '='";
    c.files = {deck_file(base_deck().text())};
    c.args = {"deck.yaml", "--set", "stream." + std::string(3000, 'n')};
    c.must_name = {"--set stream.nnnn"};
    out.push_back(c);
  }
  {  // A long missing deck name.
    BadCase c;
    c.what = "a 250-character missing deck name";
    c.args = {std::string(250, 'd') + ".yaml"};
    c.must_name = {"dddddddddd"};
    out.push_back(c);
  }
  return out;
}

// Sizes the README allows that no machine holds: crash or
// hang, so only through the real binary.
std::vector<BadCase> oversize(std::uint64_t) {
  std::vector<BadCase> out;
  for (const auto& [key, value, kernels] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"stream.n", "4611686018427387904", "[stream]"},
           {"stream.n", "9223372036854775807", "[stream]"},
           {"stream.n", "1e18", "[stream]"},
           {"rk4.steps", "1152921504606846976", "[rk4]"},
           {"rk4.n", "2097152", "[rk4]"},
           {"gram.A.random.rows", "2147483647", "[gram]"},
           {"discount.dates", "1000000000000", "[discount]"},  // 96 TB: 1e9 (96 GB) ran on a 141 GB H200
       }) {
    DeckTree deck = base_deck();
    deck.set("run.kernels", kernels);
    BadCase c = value_case(*find_key(key), value, false, "a size no memory holds", deck);
    if (key == "gram.A.random.rows") {  // the cols too
      deck.set("gram.A.random.cols", "2147483647");
      c = value_case(*find_key(key), value, false, "a size no memory holds", deck);
    }
    c.time_limit_s = 10;  // a hang is a failure; each takes ~0.5 s
    out.push_back(c);
  }
  return out;
}

std::vector<BadCase> kokkos_flags(std::uint64_t) {
  std::vector<BadCase> out;
  for (const std::string flag : {"--kokkos-num-threads=abc", "--kokkos-threads=abc", "--kokkos-num-threads=4x"}) {
    BadCase c;
    c.what = "malformed Kokkos flag " + flag;
    c.files = {deck_file(base_deck().text())};
    c.args = {"deck.yaml", flag};
    c.must_name = {flag.substr(0, flag.find('='))};
    out.push_back(c);
  }
  return out;
}

// Inputs that are not regular files, or cannot be read: /dev/zero as the deck
// must not be read to the end, a named pipe must not block open(), and
// /proc/self/mem (EIO) must not run as an empty deck.
std::vector<BadCase> special_files(std::uint64_t) {
  std::vector<BadCase> out;
  auto deck_case = [&](const std::string& what, const std::string& deck_arg, std::vector<CaseFile> files,
                       std::vector<std::string> must_name) {
    BadCase c;
    c.what = what;
    c.files = std::move(files);
    c.args = {deck_arg};
    c.must_name = std::move(must_name);
    c.time_limit_s = 10;
    out.push_back(c);
  };
  deck_case("a named pipe as the deck", "deck.yaml", {CaseFile{"deck.yaml", "", false, true}},
            {"deck.yaml: is a named pipe", "regular file"});
  deck_case("/dev/zero as the deck", "/dev/zero", {}, {"/dev/zero: is a character device"});
  deck_case("a directory as the deck", "decks", {CaseFile{"decks", "", true}}, {"decks: is a directory"});
  deck_case("a deck whose read() fails (EIO)", "/proc/self/mem", {},
            {"/proc/self/mem: read error at byte 0 (Input/output error)"});
  deck_case("a 17 MiB deck", "deck.yaml",
            {CaseFile{"deck.yaml", base_deck().text() + "#" + std::string(17 << 20, 'x') + "\n", false}},
            {"deck.yaml", "16 MiB"});
  // Input files named in the deck.
  for (const auto& [key, value, kernels, special] : std::vector<std::tuple<std::string, std::string, std::string, int>>{
           {"gram.A.file", "A.npy", "[gram]", 1},
           {"rk4.init.F.file", "/dev/zero", "[rk4]", 0},
           {"rk4.restart", "ck.npy", "[rk4]", 1},
           {"discount.init.mult_by.file", "/proc/self/mem", "[discount]", 0},
       }) {
    DeckTree deck = base_deck();
    deck.set("run.kernels", kernels);
    BadCase c = value_case(*find_key(key), value, false, "not a regular file", deck);
    if (special) c.files.push_back(CaseFile{value, "", false, true});
    c.must_name.push_back(value + ": " +
                          (special                ? std::string("is a named pipe")
                           : value == "/dev/zero" ? "is a character device"
                                                  : "read error at byte 0"));
    c.time_limit_s = 10;
    out.push_back(c);
  }
  return out;
}

// Kokkos' environment and tools: KOKKOS_NUM_THREADS=abc must not abort
// (SIGABRT in Kokkos) and a tools library that does not load must not be
// skipped silently.
std::vector<BadCase> kokkos_environment(std::uint64_t) {
  std::vector<BadCase> out;
  auto add = [&](const std::string& what, std::vector<std::string> env, std::vector<std::string> flags,
                 std::vector<std::string> must_name, std::vector<CaseFile> extra = {}) {
    BadCase c;
    c.what = what;
    c.files = {deck_file(base_deck().text())};
    c.files.insert(c.files.end(), extra.begin(), extra.end());
    c.args = {"deck.yaml"};
    c.args.insert(c.args.end(), flags.begin(), flags.end());
    c.env = std::move(env);
    c.must_name = std::move(must_name);
    c.time_limit_s = 10;
    out.push_back(c);
  };
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"KOKKOS_NUM_THREADS", "abc"},
           {"KOKKOS_NUM_THREADS", "0"},
           {"KOKKOS_NUM_THREADS", "-4"},
           {"KOKKOS_DEVICE_ID", "-1"},
           {"KOKKOS_DEVICE_ID", "x1"},
           {"KOKKOS_DISABLE_WARNINGS", "maybe"},
           {"KOKKOS_TUNE_INTERNALS", "2"},
       })
    add("environment variable " + name + "=" + value, {name + "=" + value}, {},
        {"environment variable " + name + "=" + value + ": expected"});
  add("KOKKOS_TOOLS_LIBS naming a missing library", {"KOKKOS_TOOLS_LIBS=/nonexistent/libkp_none.so"}, {},
      {"KOKKOS_TOOLS_LIBS", "/nonexistent/libkp_none.so", "No such file or directory"});
  add("--kokkos-tools-libs naming a missing library", {}, {"--kokkos-tools-libs=/nonexistent/libkp_none.so"},
      {"--kokkos-tools-libs", "/nonexistent/libkp_none.so", "cannot load the Kokkos tools library"});
  add("--kokkos-tools-libs naming a library not on the search path", {}, {"--kokkos-tools-libs=libkp_not_here.so"},
      {"--kokkos-tools-libs", "libkp_not_here.so", "cannot open shared object file"});
  add("KOKKOS_PROFILE_LIBRARY naming a file that is no library", {"KOKKOS_PROFILE_LIBRARY=./deck.yaml"}, {},
      {"KOKKOS_PROFILE_LIBRARY", "./deck.yaml", "cannot load the Kokkos tools library"});
  add("KOKKOS_TOOLS_LIBS naming a named pipe", {"KOKKOS_TOOLS_LIBS=./tool.so"}, {},
      {"KOKKOS_TOOLS_LIBS", "is a named pipe"}, {CaseFile{"tool.so", "", false, true}});
  return out;
}

// Sizes with units; what is still refused lists the forms.
std::vector<BadCase> byte_sizes(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<BadCase> out;
  const KeySpec& k = *find_key("gram.memory_budget");
  for (const std::string value : {"12 furlongs", "-1G", "1e999", "0", "4 Gi", "512 MB/s", "G", "1.5.GiB"}) {
    BadCase c = value_case(k, "'" + value + "'", rng.below(2) == 0, "a size that is no size");
    c.must_name.push_back("512M, 4G, 1.5GiB");
    c.must_name.push_back("M = MiB");
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<Family> deck_input_families() {
  return {
      {"deck.missing_input", Where::InProcess, missing_input},
      {"deck.wrong_input", Where::InProcess, wrong_input},
      {"deck.cross_key", Where::InProcess, cross_key},
      {"deck.long_value", Where::InProcess, long_value},
      {"deck.oversize", Where::SubprocessOnly, oversize},
      {"deck.kokkos_flags", Where::SubprocessOnly, kokkos_flags},
      {"deck.special_files", Where::SubprocessOnly, special_files},
      {"deck.kokkos_environment", Where::SubprocessOnly, kokkos_environment},
      {"deck.byte_sizes", Where::InProcess, byte_sizes},
  };
}

}  // namespace kmini::fault
