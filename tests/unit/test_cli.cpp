#include "driver/cli.hpp"
#include "test_support.hpp"

namespace kmini {

TEST(CommandLine, ParsesDeckSetsOutAndFlags) {
  const char* argv[] = {"kmini", "deck.yaml", "--set", "rk4.n=5", "--set=run.verify=false", "--out", "o",
                        "--dry-run", "--kokkos-num-threads=2"};
  const auto cl = parse_command_line(9, argv);
  EXPECT_EQ(cl.deck, "deck.yaml");
  ASSERT_EQ(cl.sets.size(), 2u);
  EXPECT_EQ(cl.sets[0], "rk4.n=5");
  EXPECT_EQ(cl.sets[1], "run.verify=false");
  EXPECT_EQ(cl.out_dir, "o");
  EXPECT_TRUE(cl.dry_run);
  EXPECT_FALSE(cl.help);
}

TEST(CommandLine, DefaultsWithoutArguments) {
  const char* argv[] = {"kmini"};
  const auto cl = parse_command_line(1, argv);
  EXPECT_TRUE(cl.deck.empty());
  EXPECT_EQ(cl.out_dir, "kmini-out");
}

TEST(CommandLine, RejectsBadUsage) {
  const char* unknown[] = {"kmini", "--bogus"};
  KMINI_EXPECT_THROW_MSG(parse_command_line(2, unknown), UsageError, "unknown option '--bogus'");
  const char* missing[] = {"kmini", "--set"};
  KMINI_EXPECT_THROW_MSG(parse_command_line(2, missing), UsageError, "--set needs a value");
  const char* two[] = {"kmini", "a.yaml", "b.yaml"};
  KMINI_EXPECT_THROW_MSG(parse_command_line(3, two), UsageError, "more than one deck");
}

}  // namespace kmini
