#include "core/text.hpp"
#include "deck/deck.hpp"
#include "support/relocated_path.hpp"
#include "support/test_support.hpp"

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

TEST(Deck, OptionalStringsNotGivenAreNotRecorded) {
  // An unset output path is not recorded as "" (which a re-run refuses); a
  // default that is a real string is.
  Deck d = deck("sec:\n  write: {C: c.npy}\n");
  DeckNode w = d.root().child("sec").child("write");
  EXPECT_EQ(w.text("C", ""), "c.npy");
  EXPECT_EQ(w.text("summary", ""), "");
  EXPECT_EQ(d.root().child("sec").text("mode", "auto"), "auto");
  EXPECT_NO_THROW(d.check_all_keys_known());
  EXPECT_EQ(d.resolved().dump(0), "{\"sec\":{\"write\":{\"C\":\"c.npy\"},\"mode\":\"auto\"}}");
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
  KMINI_EXPECT_THROW_MSG(s.integer("n", 1, 1, 10), UsageError,
                         "t.yaml:2: s.n: got '0', expected an integer in [1, 10]");
  KMINI_EXPECT_THROW_MSG(s.real("x", 1.0, 0.0, 1.0, true), UsageError,
                         "t.yaml:3: s.x: got '-1', expected a finite number > 0");
  KMINI_EXPECT_THROW_MSG(s.boolean("flag", true), UsageError, "t.yaml:4: s.flag: got 'yes', expected true or false");
  KMINI_EXPECT_THROW_MSG(s.choice("m", "a", {"a", "b"}), UsageError, "t.yaml:5: s.m: got 'c', expected one of a | b");
  KMINI_EXPECT_THROW_MSG(s.reals("v", {0, 0}, 2), UsageError, "s.v: got '[1]', expected a list of 2 finite numbers");
  KMINI_EXPECT_THROW_MSG(s.required_integer("missing", 1), UsageError,
                         "t.yaml:2: s.missing: missing, expected an integer");
}

TEST(Deck, UnknownKeysAreErrorsListingTheKnownOnes) {
  Deck d = deck("s:\n  n: 1\n  typo: 2\n");
  d.root().child("s").integer("n", 1, 1);
  d.root().child("s").integer("m", 1, 1);
  KMINI_EXPECT_THROW_MSG(d.check_all_keys_known(), UsageError,
                         "t.yaml:3: unknown key 's.typo' (expected one of: m, n)");
}

TEST(Deck, AnUnknownKeyNearOneKnownKeyNamesIt) {
  Deck d = deck("s:\n  repeat: 1\n  reapet: 2\n  nn: 3\n");
  d.root().child("s").integer("repeat", 1, 1);
  d.root().child("s").integer("n", 1, 1);
  KMINI_EXPECT_THROW_MSG(d.check_all_keys_known(), UsageError,
                         "t.yaml:3: unknown key 's.reapet' (did you mean 'repeat'?)");
  Deck short_keys = deck("s:\n  n: 1\n  m: 2\n");  // one letter from n: too short to guess
  short_keys.root().child("s").integer("n", 1, 1);
  KMINI_EXPECT_THROW_MSG(short_keys.check_all_keys_known(), UsageError,
                         "t.yaml:3: unknown key 's.m' (expected one of: n)");
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
  KMINI_EXPECT_THROW_MSG(d.apply_set("s..n=1"), UsageError, "--set s..n=1: empty component in key 's..n'");
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
  KMINI_EXPECT_THROW_MSG(Deck::from_file("/nonexistent/deck.yaml"), UsageError,
                         "cannot open a YAML deck file (No such file or directory)");
}

TEST(Deck, SectionThatIsNotAMapIsAnError) {
  Deck d = deck("s: 3\n");
  KMINI_EXPECT_THROW_MSG(d.root().child("s"), UsageError, "t.yaml:1: s: expected a map of keys");
}

// The message of the UsageError `statement` throws (fails the test if none).
#define KMINI_USAGE_MESSAGE(statement)             \
  [&]() -> std::string {                           \
    try {                                          \
      statement;                                   \
    } catch (const UsageError& e) {                \
      return e.what();                             \
    }                                              \
    ADD_FAILURE() << "no UsageError: " #statement; \
    return "";                                     \
  }()

TEST(Deck, DuplicateKeysNameTheFileAndBothLines) {
  EXPECT_EQ(KMINI_USAGE_MESSAGE(deck("stream:\n  n: 1000\n  n: -5\n")),
            "t.yaml:3: stream.n: key given twice (lines 2 and 3)");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(deck("s: {n: 1, \"n\": 2}\n")), "t.yaml:1: s.n: key given twice (line 1)");
  // Inside lists of maps and deeper maps too.
  EXPECT_EQ(KMINI_USAGE_MESSAGE(deck("a:\n  b:\n    - {x: 1}\n    - x: 1\n      y: 2\n      x: 3\n")),
            "t.yaml:6: a.b[1].x: key given twice (lines 4 and 6)");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(deck("rk4:\n  init:\n    F: {fill: [1, 0]}\n    F: {random: {}}\n")),
            "t.yaml:4: rk4.init.F: key given twice (lines 3 and 4)");
}

TEST(Deck, DuplicateSectionsAreErrors) {
  EXPECT_EQ(KMINI_USAGE_MESSAGE(deck("stream: {n: 1}\nrun: {verify: true}\nstream: {n: 2}\n")),
            "t.yaml:3: stream: section given twice (lines 1 and 3)");
}

// yaml-cpp accepts both; YAML does not (generator cases malformed_yaml.023, .025).
TEST(Deck, UnterminatedQuotesAndControlCharactersAreErrors) {
  EXPECT_EQ(KMINI_USAGE_MESSAGE(deck("stream: {n: 5}\ngram:\n  write:\n    C: \"C.npy\n")),
            "t.yaml:4: unterminated double-quoted value, expected a closing \"");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(deck("stream:\n  n: 5\nrk4:\n  write:\n    F: 'F.npy\n")),
            "t.yaml:5: unterminated single-quoted value, expected a closing '");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(deck("stream: {n: 5}\nrk4:\n  write: {F: \"F\x01.npy\"}\n")),
            "t.yaml:3: control character '\\x01' in the deck, expected printable text (YAML allows only tab and "
            "line breaks)");
  // Quotes, escaped quotes and doubled single quotes that do close stay valid.
  Deck d =
      deck("stream: {n: 5}\nrk4:\n  write:\n    F: 'it''s \"F\".npy'\n    G: \"a\\\\\\\"b.npy\"\r\n    H: 'x\ty'\n");
  EXPECT_EQ(d.root().child("rk4").child("write").text("F", ""), "it's \"F\".npy");
  EXPECT_EQ(d.root().child("rk4").child("write").text("G", ""), "a\\\"b.npy");
  EXPECT_EQ(d.root().child("rk4").child("write").text("H", ""), "x\ty");
}

TEST(Deck, OneDocumentOnly) {
  EXPECT_EQ(KMINI_USAGE_MESSAGE(deck("---\n---\nrun: {kernels: [bogus]}\n")),
            "t.yaml:2: a second YAML document starts here; a deck is one document");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(deck("stream: {n: 5}\n---\nstream: {n: 6}\n")),
            "t.yaml:2: a second YAML document starts here; a deck is one document");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(deck("stream: {n: 5}\n...\n---\n")),
            "t.yaml:3: a second YAML document starts here; a deck is one document");
  // One document, with or without markers, and an empty deck stay valid.
  for (const char* text : {"---\nstream: {n: 5}\n", "stream: {n: 5}\n...\n", "---\nstream: {n: 5}\n...\n"}) {
    Deck d = deck(text);
    EXPECT_EQ(d.root().child("stream").integer("n", 1, 1), 5) << text;
    EXPECT_NO_THROW(d.check_all_keys_known());
  }
  for (const char* text : {"", "# only a comment\n", "---\n"}) {
    Deck d = deck(text);
    EXPECT_EQ(d.root().child("stream").integer("n", 7, 1), 7) << text;
    EXPECT_NO_THROW(d.check_all_keys_known());
  }
}

TEST(Deck, SetKeysAreNamesJoinedBySingleDots) {
  Deck d = deck("rk4:\n  n: 8\n");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.apply_set("rk4.n.=5")),
            "--set rk4.n.=5: empty component in key 'rk4.n.', expected names joined by single dots such as rk4.init.F");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.apply_set(".rk4.n=5")),
            "--set .rk4.n=5: empty component in key '.rk4.n', expected names joined by single dots such as rk4.init.F");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.apply_set("rk4..n=5")),
            "--set rk4..n=5: empty component in key 'rk4..n', expected names joined by single dots such as rk4.init.F");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.apply_set("rk4. n=5")),
            "--set rk4. n=5: key 'rk4. n' contains ' ', expected names of letters, digits, _ and - joined by dots");
  EXPECT_EQ(
      KMINI_USAGE_MESSAGE(d.apply_set("rk4.\tn=5")),
      "--set rk4.\\tn=5: key 'rk4.\\tn' contains '\\t', expected names of letters, digits, _ and - joined by dots");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.apply_set("rk4.n\x01=5")),
            "--set rk4.n\\x01=5: key 'rk4.n\\x01' contains '\\x01', expected names of letters, digits, _ and - joined "
            "by dots");
  // Nothing was set by the rejected assignments.
  EXPECT_EQ(d.root().child("rk4").integer("n", 1, 1), 8);
  EXPECT_NO_THROW(d.check_all_keys_known());
}

TEST(Deck, SetValuesAreOneLineOfOneDocument) {
  Deck d = deck("s:\n  n: 1\n");
  const std::string second_document = KMINI_USAGE_MESSAGE(d.apply_set("s.n=1\n---\nrun: {kernels: [bogus]}"));
  EXPECT_EQ(second_document,
            "--set s.n=1\\n---\\nrun: {kernels: [bogus]}: the value contains the control character '\\n' at offset "
            "1, expected YAML on one line");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.apply_set("s.n=5\r")),
            "--set s.n=5\\r: the value contains the control character '\\r' at offset 1, expected YAML on one line");
  EXPECT_EQ(
      KMINI_USAGE_MESSAGE(d.apply_set(std::string("s.n=5\0", 6))),
      "--set s.n=5\\x00: the value contains the control character '\\x00' at offset 1, expected YAML on one line");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.apply_set("s.n=\x1b[31m5")),
            "--set s.n=\\x1b[31m5: the value contains the control character '\\x1b' at offset 0, expected YAML on one "
            "line");
  // A tab is flow-style whitespace.
  d.apply_set("s.v=[1,\t2]");
  EXPECT_EQ(d.root().child("s").reals("v", {}, 2), (std::vector<double>{1, 2}));
  EXPECT_EQ(d.root().child("s").integer("n", 1, 1), 1);
}

TEST(Deck, SetValueMapsWithAKeyGivenTwiceAreErrors) {
  Deck d = deck("s:\n  n: 1\n");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.apply_set("s={n: 1000, n: -5}")), "--set s={n: 1000, n: -5}: s.n: key given twice");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.apply_set("t.u={a: {b: 1, b: 2}}")),
            "--set t.u={a: {b: 1, b: 2}}: t.u.a.b: key given twice");
  EXPECT_EQ(d.root().child("s").integer("n", 7, 1), 1);
}

TEST(Deck, UnknownKeysFromSetNameTheSet) {
  Deck d = deck("s:\n  n: 1\n");
  d.apply_set("bogus.x=1");
  d.root().child("s").integer("n", 1, 1);
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.check_all_keys_known()), "--set bogus.x=1: unknown key 'bogus' (expected one of: s)");
  Deck e = deck("s:\n  n: 1\n");
  e.apply_set("s.deep.typo=1");
  e.root().child("s").integer("n", 1, 1);
  EXPECT_EQ(KMINI_USAGE_MESSAGE(e.check_all_keys_known()),
            "--set s.deep.typo=1: unknown key 's.deep' (expected one of: n)");
}

TEST(Deck, BlockMapValuesPrintOnOneLine) {
  Deck d = deck("s:\n  n:\n    a: 1\n    b: [1,\n      2]\n  m: |\n    two\n    lines\n");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.root().child("s").integer("n", 1, 1)),
            "t.yaml:3: s.n: got '{a: 1, b: [1, 2]}', expected an integer >= 1");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(d.root().child("s").choice("m", "a", {"a"})),
            "t.yaml:6: s.m: got 'two\\nlines\\n', expected one of a");
}

TEST(Deck, LongValuesAreCutInMessages) {
  const std::string ones(1000000, '1');
  Deck d = deck("s:\n  n: " + ones + "\n");
  const std::string msg = KMINI_USAGE_MESSAGE(d.root().child("s").integer("n", 1, 1, 10));
  EXPECT_EQ(msg, "t.yaml:2: s.n: got '" + std::string(57, '1') + "..." + std::string(20, '1') +
                     "' (1000000 chars), expected an integer in [1, 10]");
  Deck e = deck("s:\n  n: 1\n");
  e.apply_set("s.n=" + ones);
  const std::string set_msg = KMINI_USAGE_MESSAGE(e.root().child("s").integer("n", 1, 1, 10));
  EXPECT_EQ(set_msg, "--set s.n=" + std::string(53, '1') + "..." + std::string(20, '1') + ": s.n: got '" +
                         std::string(57, '1') + "..." + std::string(20, '1') +
                         "' (1000000 chars), expected an integer in [1, 10]");
  // A long unknown key is cut too.
  Deck f = deck(std::string(500, 'k') + ": 1\n");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(f.check_all_keys_known()),
            "t.yaml:1: unknown key '" + std::string(57, 'k') + "..." + std::string(20, 'k') + "' (500 chars)");
}

TEST(Deck, LocatedNamesTheLineOrSetAndTheKey) {
  Deck d = deck("rk4:\n  init:\n    F: {file: a.npy}\n");
  d.apply_set("rk4.restart=r.npy");
  EXPECT_EQ(d.root().child("rk4").child("init").child("F").located("file"), "t.yaml:3: rk4.init.F.file");
  EXPECT_EQ(d.root().child("rk4").located("restart"), "--set rk4.restart=r.npy: rk4.restart");
}

TEST(Deck, ADirectoryIsNotADeck) {
  EXPECT_EQ(KMINI_USAGE_MESSAGE(Deck::from_file(kmini::test::relocated(KMINI_TEST_DATA))),
            kmini::test::relocated(KMINI_TEST_DATA) + ": is a directory, expected a YAML deck file (a regular file)");
}

TEST(Deck, DeckFilesAreCheckedLikeText) {
  const std::string path = test::work_path("dup_deck.yaml");
  test::write_bytes(path, "run:\n  kernels: [stream]\nstream:\n  n: 1000\n  n: -5\n");
  EXPECT_EQ(KMINI_USAGE_MESSAGE(Deck::from_file(path)), path + ":5: stream.n: key given twice (lines 4 and 5)");
  test::write_bytes(path, "");
  EXPECT_NO_THROW(Deck::from_file(path).check_all_keys_known());
}

TEST(MessageText, EscapesControlCharactersAndCutsLongText) {
  EXPECT_EQ(escape("a\nb\tc\\d\x7f"), "a\\nb\\tc\\\\d\\x7f");
  EXPECT_EQ(quoted_value("short"), "'short'");
  EXPECT_EQ(quoted_value(std::string(80, 'x')), "'" + std::string(80, 'x') + "'");
  EXPECT_EQ(quoted_value(std::string(81, 'x')),
            "'" + std::string(57, 'x') + "..." + std::string(20, 'x') + "' (81 chars)");
  // Never cut inside an escape ("\n" is two characters) ...
  const std::string lines(100, '\n');
  std::string head, tail;
  for (int i = 0; i < 28; ++i) head += "\\n";
  for (int i = 0; i < 10; ++i) tail += "\\n";
  EXPECT_EQ(escape_cut(lines), head + "..." + tail);
  EXPECT_EQ(quoted_value(lines), "'" + head + "..." + tail + "' (100 chars)");
  // ... nor inside a UTF-8 sequence.
  std::string greek;
  for (int i = 0; i < 60; ++i) greek += "\xce\xb1";  // alpha, two bytes
  const std::string cut = escape_cut(greek);
  EXPECT_EQ(cut, std::string(greek, 0, 56) + "..." + std::string(greek, 100, 20));
}

// Sizes as HPC tools and Slurm write them, M = MiB.
TEST(Deck, ByteSizesTakeBinaryUnits) {
  const std::vector<std::pair<std::string, double>> good = {{"65536", 65536.0},
                                                            {"512M", 512.0 * (1 << 20)},
                                                            {"4G", 4.0 * (1u << 30)},
                                                            {"1.5GiB", 1.5 * (1u << 30)},
                                                            {"'512 MiB'", 512.0 * (1 << 20)},
                                                            {"2k", 2048.0},
                                                            {"3KB", 3072.0},
                                                            {"1T", 1099511627776.0},
                                                            {"100B", 100.0},
                                                            {"1e6", 1e6},
                                                            {"0.5K", 512.0},
                                                            {"2p", 2.0 * 1125899906842624.0}};
  for (const auto& [text, bytes] : good) {
    Deck d = deck("s:\n  b: " + text + "\n");
    EXPECT_EQ(d.root().child("s").byte_size("b", 1, 1e18), bytes) << text;
  }
  for (const std::string bad : {"12 furlongs", "-1G", "1e999", "0", "0.3", "5E", "1GG", "G", "' 4G'", "1.5.GiB", "[4G]",
                                "nan", "2e18", "4 Gi"}) {
    Deck d = deck("s:\n  b: " + bad + "\n");
    const std::string message = KMINI_USAGE_MESSAGE(d.root().child("s").byte_size("b", 1, 1e18));
    EXPECT_EQ(message.rfind("t.yaml:2: s.b: got ", 0), 0u) << bad << ": " << message;
    EXPECT_NE(message.find("expected a size of 1 to 1e+18 bytes: a number, or one with a binary unit K, M, G, T or P"),
              std::string::npos)
        << bad << ": " << message;
    EXPECT_NE(message.find("M = MiB = 2^20"), std::string::npos) << message;
  }
}

}  // namespace kmini
