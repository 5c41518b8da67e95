// The generator-driven bad-input test, in process: every generated bad
// deck, --set, option and mutated .npy file must give exit 2, exactly one
// `kmini: error:` line naming what it should, and write nothing. One test per
// family, so failures come grouped; each failure prints how to reproduce it
// with the real binary (KMINI_FAULT_SEED=N changes the generated cases).
#include "../support/relocated_path.hpp"
#include "bad_input_cases.hpp"
#include "case_support.hpp"
#include "core/errors.hpp"
#include "default_deck.hpp"
#include "driver/kernels.hpp"
#include "in_process.hpp"
#include "kernel/declaration.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

namespace kmini::fault {
namespace {

bool flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}
// KMINI_FAULT_VERBOSE=1: print every case's error line; KMINI_FAULT_KEEP=1:
// keep every case's directory (not only the failed ones').
bool verbose() { return flag("KMINI_FAULT_VERBOSE"); }
bool keep() { return flag("KMINI_FAULT_KEEP"); }

std::vector<Failure> run_cases(const std::vector<BadCase>& cases, const std::string& root) {
  std::vector<Failure> failures;
  for (const auto& c : cases) {
    const std::string dir = root + "/" + c.id;
    materialise(c, dir);
    const InProcessRun r = run_in_process(c, dir);
    if (verbose()) std::cout << "  " << c.id << " [" << c.what.substr(0, 100) << "] -> " << r.status << ": " << r.err;
    auto problems = check_run(c, dir, r.status, r.err);
    if (!r.exception.empty()) problems.insert(problems.begin(), "an exception escaped run_app: " + r.exception);
    if (!problems.empty()) failures.push_back(Failure{c, dir, problems, r.err});
    else if (!keep()) remove_tree(dir);
  }
  return failures;
}

// One family: every case through run_app, failures reported together.
class FamilyTest : public ::testing::Test {
 public:
  explicit FamilyTest(std::string name) : name_(std::move(name)) {}
  void TestBody() override {
    const Family& f = family(name_);
    const std::uint64_t seed = seed_from_environment();
    const auto cases = generate(f, seed);
    ASSERT_FALSE(cases.empty());
    const std::string root = work_dir() + "/" + f.name;
    remove_tree(root);
    const auto start = std::chrono::steady_clock::now();
    const auto failures = run_cases(cases, root);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << report(f.name, cases.size(), failures, seed, seconds) << std::flush;
    if (failures.empty() && !keep()) remove_tree(root);
    EXPECT_TRUE(failures.empty()) << f.name << ": " << failures.size() << " of " << cases.size()
                                  << " case(s) failed (listed above; their directories are kept under " << root << ")";
  }

 private:
  std::string name_;
};

}  // namespace

// Tests named after their family: deck.wrong_type runs as deck.wrong_type
// (ctest: fault.deck.wrong_type).
void register_family_tests() {
  for (const auto& f : families()) {
    if (f.where != Where::InProcess) continue;
    const auto dot = f.name.find('.');
    ::testing::RegisterTest(f.name.substr(0, dot).c_str(), f.name.substr(dot + 1).c_str(), nullptr, nullptr, __FILE__,
                            __LINE__, [name = f.name]() -> ::testing::Test* { return new FamilyTest(name); });
  }
}

namespace {

// Enough cases to cover every key: at least 200 generated bad decks and 200 mutated .npy
// files; every case names something and ids are unique.
TEST(FaultGenerator, CountsPerFamily) {
  const std::uint64_t seed = seed_from_environment();
  std::size_t decks = 0, npys = 0, subprocess = 0;
  std::set<std::string> ids;
  std::cout << "[ fault    ] generated cases per family (seed " << seed << "):\n";
  for (const auto& f : families()) {
    const auto cases = generate(f, seed);
    std::cout << "[ fault    ]   " << f.name << ": " << cases.size()
              << (f.where == Where::SubprocessOnly ? " (through the binary only)" : "") << "\n";
    for (const auto& c : cases) {
      EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id " << c.id;
      EXPECT_FALSE(c.must_name.empty()) << c.id << " names nothing to check";
      EXPECT_EQ(c.expect_exit, 2) << c.id;
    }
    if (f.where == Where::SubprocessOnly) subprocess += cases.size();
    else if (f.name.rfind("npy.", 0) == 0) npys += cases.size();
    else decks += cases.size();
  }
  std::cout << "[ fault    ] in process: " << decks << " bad decks/arguments, " << npys << " mutated .npy files; "
            << subprocess << " more through the binary only\n";
  EXPECT_GE(decks, 200u);
  EXPECT_GE(npys, 200u);
}

// Deterministic: the same seed gives the same cases, so a failure reproduces.
TEST(FaultGenerator, SameSeedSameCases) {
  for (const auto& f : families()) {
    const auto a = generate(f, 7), b = generate(f, 7);
    ASSERT_EQ(a.size(), b.size()) << f.name;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].args, b[i].args) << a[i].id;
      ASSERT_EQ(a[i].files.size(), b[i].files.size()) << a[i].id;
      for (std::size_t j = 0; j < a[i].files.size(); ++j)
        EXPECT_EQ(a[i].files[j].bytes, b[i].files[j].bytes) << a[i].id;
    }
  }
}

// The valid inputs the generators start from run (exit 0, results.json):
// a case fails only for what was made bad in it, and the "nothing written"
// check does see a run's outputs.
TEST(FaultGenerator, ControlsRunAndTheChecksSeeTheirOutputs) {
  const auto cases = controls();
  const std::string root = work_dir() + "/controls";
  remove_tree(root);
  for (const auto& c : cases) {
    const std::string dir = root + "/" + c.id;
    materialise(c, dir);
    const InProcessRun r = run_in_process(c, dir);
    EXPECT_EQ(r.exception, "") << c.id;
    const auto problems = check_run(c, dir, r.status, r.err);
    EXPECT_TRUE(problems.empty()) << describe(c, dir) << "stderr: " << r.err << "\nstdout: " << r.out;
    BadCase as_bad = c;  // the same run judged as a bad case must fail the checks
    as_bad.expect_exit = 2;
    as_bad.must_name = {"deck.yaml"};
    const auto seen = check_run(as_bad, dir, r.status, r.err);
    bool saw_output = false;
    for (const auto& p : seen)
      saw_output =
          saw_output || (p.rfind("wrote into --out out/", 0) == 0 && p.find("results.json") != std::string::npos);
    EXPECT_TRUE(saw_output) << c.id << ": the nothing-written check missed results.json";
  }
}

}  // namespace
}  // namespace kmini::fault

namespace kmini::fault {
namespace {

// Every key configure reads (with the base deck and each sample set) has a
// sample, so a key added to a kernel's configure gets its fault cases or is
// listed here with the reason it has none.
TEST(DeckKeyRules, EveryKeyConfigureReadsHasASample) {
  const std::set<std::string> without_cases = {
      // lists of thresholds: their own cases in deck_input_cases (real_list has no family)
      "gram.write.count_at_least",
  };
  std::vector<std::string> missing;
  for (const auto& [path, rule] : key_rules())
    if (!rule.sampled && !without_cases.count(path)) missing.push_back(path + " (" + rule.kind + ")");
  EXPECT_TRUE(missing.empty()) << "keys with no sample in key_samples() (tests/fault/case_support.cpp): "
                               << ::testing::PrintToString(missing);
}

}  // namespace
}  // namespace kmini::fault

namespace kmini::fault {
namespace {

// The declared key of a dotted deck path, or null ("rk4.init.F.fill" ->
// rk4's declaration of "init.F.fill"; "run.seed" -> the run section's).
const DeckKey* declared_key(const std::vector<KernelDeclaration>& all, const std::string& path) {
  const std::size_t dot = path.find('.');
  if (dot == std::string::npos) return nullptr;
  for (const auto& d : all)
    if (d.name == path.substr(0, dot)) return d.find(path.substr(dot + 1));
  return nullptr;
}

std::vector<KernelDeclaration> all_declarations() {
  const auto kernels = make_all_kernels();
  std::vector<KernelDeclaration> all{run_declaration(kernel_names(kernels))};
  for (const auto& k : kernels) all.push_back(k->declaration());
  return all;
}

// Configure reads every deck key through its kernel's declaration: each key
// read (the base deck and every sample) is declared with the rule it was
// checked by, and each declared key is read by some sample, so a declaration
// cannot promise a key, a range or an option that configure does not check.
TEST(DeckKeyRules, EveryKeyReadIsDeclaredWithTheRuleItIsCheckedBy) {
  const auto all = all_declarations();
  std::vector<std::string> problems;
  std::set<std::string> read;
  for (const auto& [path, rule] : key_rules()) {
    read.insert(path);
    if (path.find('.') == std::string::npos) continue;  // a kernel's section itself
    const DeckKey* k = declared_key(all, path);
    if (!k) {
      problems.push_back(path + ": read but not declared");
      continue;
    }
    if (kind_name(k->rule.kind) != rule.kind)
      problems.push_back(path + ": declared " + kind_name(k->rule.kind) + ", read as " + rule.kind);
    else if (k->rule.min != rule.min || k->rule.max != rule.max || k->rule.min_exclusive != rule.min_exclusive ||
             k->rule.count != rule.count || k->rule.options != rule.options)
      problems.push_back(path + ": its declared limits or options differ from the ones configure checks");
  }
  for (const auto& d : all)
    for (const auto& k : d.keys)
      if (!read.count(d.name + "." + k.key)) problems.push_back(d.name + "." + k.key + ": declared but never read");
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
}

// The declarations are complete: every key and section has a help line, and
// every kernel a figure of merit with its unit and roof, and its decks exist.
TEST(DeckKeyRules, EveryDeclarationIsComplete) {
  for (const auto& d : all_declarations()) {
    EXPECT_FALSE(d.summary.empty()) << d.name;
    for (const auto& k : d.keys) EXPECT_FALSE(k.help.empty()) << d.name << "." << k.key;
    if (d.name == "run") continue;
    EXPECT_FALSE(d.fom.name.empty() || d.fom.unit.empty() || d.fom.roof.empty() || d.fom.counts.empty()) << d.name;
    EXPECT_FALSE(d.decks.empty()) << d.name;
    for (const auto& deck : d.decks)
      EXPECT_TRUE(std::ifstream(test::relocated(std::string(KMINI_SOURCE_DIR) + "/" + deck)).good())
          << d.name << ": " << deck;
  }
}

// What the scripts take from a declaration names what the kernel declares:
// scripts/scaling.py sets the size key to whole numbers, so it is a declared
// integer key, grown one of the three ways; the small and profile runs'
// `--set`s name the kernel's own declared keys, and the built-in default deck
// with them, the kernel alone, passes configure (as scripts/gpu/run_gpu.sh
// runs them, on a GPU machine only).
TEST(DeckKeyRules, EveryDeclaredRunSettingNamesADeclaredKey) {
  for (const auto& d : all_declarations()) {
    if (d.name == "run") {
      EXPECT_TRUE(d.scaling.size_key.empty() && d.figures.empty() && d.small_run.empty() && d.profile_run.empty());
      continue;
    }
    const DeckKey* size = d.find(d.scaling.size_key);
    EXPECT_TRUE(size && size->rule.kind == KeyRule::Kind::Integer)
        << d.name << ": scaling.size_key '" << d.scaling.size_key << "' is not a declared integer key";
    const std::string growth = growth_name(d.scaling.growth);
    EXPECT_TRUE(growth == "linear" || growth == "sqrt" || growth == "per_rank") << d.name << ": " << growth;
    EXPECT_FALSE(d.scaling.why.empty()) << d.name;
    EXPECT_FALSE(d.figures.empty()) << d.name;
    for (const auto& f : d.figures)
      EXPECT_FALSE(f.label.empty() || f.path.empty() || f.unit.empty() || !(f.scale > 0)) << d.name << ": " << f.label;
    EXPECT_FALSE(d.small_run.empty()) << d.name << ": no small run";
    for (const auto* sets : {&d.small_run, &d.profile_run}) {
      if (sets->empty()) continue;
      Deck deck = Deck::from_text(kDefaultDeck, "built-in default deck");
      deck.apply_set("run.kernels=[" + d.name + "]");
      for (const auto& s : *sets) {
        const std::string key = s.substr(0, s.find('='));
        const std::string own = d.name + ".";
        EXPECT_TRUE(s.find('=') != std::string::npos && key.rfind(own, 0) == 0 && d.find(key.substr(own.size())))
            << d.name << ": --set " << s << " names no declared key of " << d.name;
        deck.apply_set(s);
      }
      auto kernels = make_all_kernels();
      try {
        configure_all(deck, kernels, environment());
        deck.check_all_keys_known();
      } catch (const UsageError& e) {
        ADD_FAILURE() << d.name << ": " << run_command(d.name, *sets) << ": " << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace kmini::fault
