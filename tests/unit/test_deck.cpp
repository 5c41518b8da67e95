#include "deck/deck.hpp"
#include "test_support.hpp"

namespace kmini {

namespace {
Deck deck(const std::string& text) { return Deck::from_text(text, "t.yaml"); }
}  // namespace

TEST(Deck, ReadsTypedValuesAndRecordsDefaults) {
  Deck d = deck("sec:\n  n: 12\n  x: 2.5\n  on: false\n  mode: b\n  v: [1, 2]\n");
  DeckNode s = d.root().child("sec");
  EXPECT_EQ(s.integer("n", 1, 1), 12);
  EXPECT_DOUBLE_EQ(s.real("x", 0.0, 0.0, 10.0), 2.5);
  EXPECT_FALSE(s.boolean("on", true));
  EXPECT_EQ(s.choice("mode", "a", {"a", "b"}), "b");
  EXPECT_EQ(s.reals("v", {0, 0}, 2), (std::vector<double>{1, 2}));
  EXPECT_EQ(s.integer("absent", 7, 1), 7);
  EXPECT_NO_THROW(d.check_all_keys_known());
  EXPECT_EQ(d.resolved().dump(0),
            "{\"sec\":{\"n\":12,\"x\":2.5,\"on\":false,\"mode\":\"b\",\"v\":[1.0, 2.0],\"absent\":7}}");
}

TEST(Deck, IntegersAcceptExponentNotationButNotFractions) {
  Deck d = deck("s:\n  a: 1e6\n  b: 2.5\n");
  EXPECT_EQ(d.root().child("s").integer("a", 1, 1), 1000000);
  KMINI_EXPECT_THROW_MSG(d.root().child("s").integer("b", 1, 1), UsageError,
                         "t.yaml:3: s.b: got '2.5', expected an integer >= 1");
}

TEST(Deck, OutOfRangeAndWrongTypesNameFileLineKeyAndExpectation) {
  Deck d = deck("s:\n  n: 0\n  x: -1\n  flag: yes\n  m: c\n  v: [1]\n");
  DeckNode s = d.root().child("s");
  KMINI_EXPECT_THROW_MSG(s.integer("n", 1, 1, 10), UsageError, "t.yaml:2: s.n: got '0', expected an integer in [1, 10]");
  KMINI_EXPECT_THROW_MSG(s.real("x", 1.0, 0.0, 1.0, true), UsageError, "t.yaml:3: s.x: got '-1', expected a finite number > 0");
  KMINI_EXPECT_THROW_MSG(s.boolean("flag", true), UsageError, "t.yaml:4: s.flag: got 'yes', expected true or false");
  KMINI_EXPECT_THROW_MSG(s.choice("m", "a", {"a", "b"}), UsageError, "t.yaml:5: s.m: got 'c', expected one of a | b");
  KMINI_EXPECT_THROW_MSG(s.reals("v", {0, 0}, 2), UsageError, "s.v: got '[1]', expected a list of 2 finite numbers");
  KMINI_EXPECT_THROW_MSG(s.required_integer("missing", 1), UsageError, "t.yaml:2: s.missing: missing, expected an integer");
}

TEST(Deck, UnknownKeysAreErrorsListingTheKnownOnes) {
  Deck d = deck("s:\n  n: 1\n  typo: 2\n");
  d.root().child("s").integer("n", 1, 1);
  d.root().child("s").integer("m", 1, 1);
  KMINI_EXPECT_THROW_MSG(d.check_all_keys_known(), UsageError,
                         "t.yaml:3: unknown key 's.typo' (expected one of: m, n)");
}

TEST(Deck, UnknownSectionIsAnError) {
  Deck d = deck("s: {n: 1}\nother: {x: 1}\n");
  d.root().child("s").integer("n", 1, 1);
  KMINI_EXPECT_THROW_MSG(d.check_all_keys_known(), UsageError, "unknown key 'other'");
}

TEST(Deck, SetOverridesAreTypedAndNamedInErrors) {
  Deck d = deck("s:\n  n: 1\n");
  d.apply_set("s.n=5");
  d.apply_set("s.v=[3, 4]");
  d.apply_set("t.deep.k=x");
  EXPECT_EQ(d.root().child("s").integer("n", 1, 1), 5);
  EXPECT_EQ(d.root().child("s").reals("v", {}, 2), (std::vector<double>{3, 4}));
  EXPECT_EQ(d.root().child("t").child("deep").text("k", ""), "x");
  d.apply_set("s.n=-2");
  KMINI_EXPECT_THROW_MSG(d.root().child("s").integer("n", 1, 1), UsageError,
                         "--set s.n=-2: s.n: got '-2', expected an integer >= 1");
  KMINI_EXPECT_THROW_MSG(d.apply_set("s.n"), UsageError, "expected KEY=VALUE");
  KMINI_EXPECT_THROW_MSG(d.apply_set("s..n=1"), UsageError, "empty component");
  KMINI_EXPECT_THROW_MSG(d.apply_set("s.n.x=1"), UsageError, "'n' is not a section or map");
}

TEST(Deck, OneOfDemandsExactlyOneAlternative) {
  Deck d = deck("init:\n  a: {fill: [1, 0]}\n  b: {fill: [1, 0], file: x.npy}\n  c: {}\n");
  EXPECT_EQ(d.root().child("init").child("a").one_of({"fill", "file", "random"}), "fill");
  KMINI_EXPECT_THROW_MSG(d.root().child("init").child("b").one_of({"fill", "file", "random"}), UsageError,
                         "init.b: got fill, file, expected exactly one of fill | file | random");
  KMINI_EXPECT_THROW_MSG(d.root().child("init").child("c").one_of({"fill", "file"}), UsageError, "got none");
}

TEST(Deck, InvalidYamlNamesTheLine) {
  KMINI_EXPECT_THROW_MSG(deck("a:\n  b: [1, 2\n"), UsageError, "t.yaml:");
  KMINI_EXPECT_THROW_MSG(Deck::from_file("/nonexistent/deck.yaml"), UsageError, "cannot open deck file");
}

TEST(Deck, SectionThatIsNotAMapIsAnError) {
  Deck d = deck("s: 3\n");
  KMINI_EXPECT_THROW_MSG(d.root().child("s"), UsageError, "t.yaml:1: s: expected a map of keys");
}

}  // namespace kmini
