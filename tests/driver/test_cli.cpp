#include "core/environment.hpp"
#include "core/kokkos_compat.hpp"
#include "driver/app.hpp"
#include "driver/cli.hpp"
#include "driver/kernels.hpp"
#include "support/test_support.hpp"

#include <sstream>

namespace kmini {

TEST(CommandLine, ParsesDeckSetsOutAndFlags) {
  const char* argv[] = {"kmini", "deck.yaml", "--set",     "rk4.n=5", "--set=run.verify=false",
                        "--out", "o",         "--dry-run", "--quiet", "--kokkos-num-threads=2"};
  const auto cl = parse_command_line(10, argv);
  EXPECT_EQ(cl.deck, "deck.yaml");
  ASSERT_EQ(cl.sets.size(), 2u);
  EXPECT_EQ(cl.sets[0], "rk4.n=5");
  EXPECT_EQ(cl.sets[1], "run.verify=false");
  EXPECT_EQ(cl.out_dir, "o");
  EXPECT_TRUE(cl.dry_run);
  EXPECT_TRUE(cl.quiet);
  EXPECT_FALSE(cl.help);
}

TEST(CommandLine, DefaultsWithoutArguments) {
  const char* argv[] = {"kmini"};
  const auto cl = parse_command_line(1, argv);
  EXPECT_TRUE(cl.deck.empty());
  EXPECT_EQ(cl.out_dir, "kmini-out");
  EXPECT_FALSE(cl.quiet);
}

TEST(CommandLine, RejectsBadUsage) {
  const char* unknown[] = {"kmini", "--bogus"};
  KMINI_EXPECT_THROW_MSG(parse_command_line(2, unknown), UsageError, "unknown option '--bogus'");
  const char* missing[] = {"kmini", "--set"};
  KMINI_EXPECT_THROW_MSG(parse_command_line(2, missing), UsageError, "--set needs a value");
  const char* two[] = {"kmini", "a.yaml", "b.yaml"};
  KMINI_EXPECT_THROW_MSG(parse_command_line(3, two), UsageError, "more than one deck");
}

namespace {
std::string usage_message(int argc, const char* const* argv) {
  try {
    parse_command_line(argc, argv);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}
std::string flag_message(const std::vector<std::string>& flags, int version) {
  try {
    compat::kokkos_flags(flags, version);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}
constexpr int kKokkos34 = 30401, kKokkos42 = 40200, kKokkos46 = 40600;
}  // namespace

TEST(CommandLine, OutGivenTwiceIsAnError) {
  const char* two[] = {"kmini", "--out", "a", "--out=b"};
  EXPECT_EQ(usage_message(4, two), "--out given twice ('a' and 'b')");
  const char* same[] = {"kmini", "--out=a", "--out=a"};
  EXPECT_EQ(usage_message(3, same), "--out given twice ('a' and 'a')");
}

TEST(CommandLine, EchoedArgumentsAreEscapedAndCut) {
  const std::string long_option = "--" + std::string(1000, 'x');
  const char* unknown[] = {"kmini", long_option.c_str()};
  EXPECT_EQ(usage_message(2, unknown),
            "unknown option '--" + std::string(55, 'x') + "..." + std::string(20, 'x') + "' (1002 chars) (see --help)");
  const char* newline[] = {"kmini", "a.yaml", "b\n.yaml"};
  EXPECT_EQ(usage_message(3, newline), "more than one deck given ('a.yaml' and 'b\\n.yaml')");
  const char* empty[] = {"kmini", ""};
  EXPECT_EQ(usage_message(2, empty), "empty deck name");
}

TEST(KokkosFlags, SpelledForTheKokkosInUse) {
  using V = std::vector<std::string>;
  const V user{"--kokkos-num-threads=4",       "--kokkos-device=1",       "--kokkos-tools-libs=libkp.so",
               "--kokkos-disable-warnings=no", "--kokkos-tune-internals", "--kokkos-tools-args=-c x"};
  EXPECT_EQ(compat::kokkos_flags(user, kKokkos34),
            (V{"--kokkos-threads=4", "--kokkos-device-id=1", "--kokkos-tools-library=libkp.so",
               "--kokkos-tune-internals", "--kokkos-tools-args=-c x"}));
  EXPECT_EQ(compat::kokkos_flags(user, kKokkos46),
            (V{"--kokkos-num-threads=4", "--kokkos-device-id=1", "--kokkos-tools-libs=libkp.so",
               "--kokkos-disable-warnings=false", "--kokkos-tune-internals=true", "--kokkos-tools-args=-c x"}));
  EXPECT_EQ(compat::kokkos_flags({"--kokkos-threads=2", "--kokkos-ndevices=2,1", "--kokkos-numa=1"}, kKokkos34),
            (V{"--kokkos-threads=2", "--kokkos-num-devices=2,1", "--kokkos-numa=1"}));
  EXPECT_EQ(compat::kokkos_flags({"--kokkos-map-device-id-by=mpi_rank", "--kokkos-print-configuration=YES"}, kKokkos46),
            (V{"--kokkos-map-device-id-by=mpi_rank", "--kokkos-print-configuration=true"}));
  EXPECT_EQ(compat::kokkos_flags({"--kokkos-num-devices=2"}, kKokkos42), (V{"--kokkos-num-devices=2"}));
  EXPECT_EQ(compat::kokkos_flags({}, kKokkos46), V{});
}

TEST(KokkosFlags, ToolsLibraryFromTheEnvironmentReachesKokkos34) {
  using V = std::vector<std::string>;
  // 3.4 reads only KOKKOS_PROFILE_LIBRARY: KOKKOS_TOOLS_LIBS is passed on as its flag.
  EXPECT_EQ(compat::tools_flags_from_environment({}, "libkp.so", nullptr, kKokkos34),
            V{"--kokkos-tools-library=libkp.so"});
  // Not when a library is already named (the flag wins, as on Kokkos 4), nor twice.
  EXPECT_EQ(compat::tools_flags_from_environment({"--kokkos-tools-library=a.so"}, "b.so", nullptr, kKokkos34), V{});
  EXPECT_EQ(compat::tools_flags_from_environment({}, "b.so", "a.so", kKokkos34), V{});
  EXPECT_EQ(compat::tools_flags_from_environment({}, "", nullptr, kKokkos34), V{});
  EXPECT_EQ(compat::tools_flags_from_environment({}, nullptr, nullptr, kKokkos34), V{});
  // Kokkos 4 reads KOKKOS_TOOLS_LIBS itself.
  EXPECT_EQ(compat::tools_flags_from_environment({}, "libkp.so", nullptr, kKokkos46), V{});
}

TEST(KokkosFlags, MalformedValuesAreUsageErrors) {
  for (int v : {kKokkos34, kKokkos46}) {
    EXPECT_EQ(flag_message({"--kokkos-threads=abc"}, v),
              "--kokkos-threads=abc: got 'abc', expected --kokkos-threads=N with N a whole number >= 1");
    EXPECT_EQ(flag_message({"--kokkos-num-threads=abc"}, v),
              "--kokkos-num-threads=abc: got 'abc', expected --kokkos-num-threads=N with N a whole number >= 1");
    EXPECT_EQ(flag_message({"--kokkos-num-threads"}, v),
              "--kokkos-num-threads: no value, expected --kokkos-num-threads=N with N a whole number >= 1");
    for (const char* bad : {"0", "-2", "+2", " 2", "2x", "4294967296", "99999999999", ""})
      EXPECT_NE(flag_message({std::string("--kokkos-num-threads=") + bad}, v).find("expected --kokkos-num-threads=N"),
                std::string::npos)
          << bad;
    EXPECT_EQ(flag_message({"--kokkos-device-id=-1"}, v),
              "--kokkos-device-id=-1: got '-1', expected --kokkos-device-id=N with N a whole number >= 0");
    EXPECT_EQ(flag_message({"--kokkos-disable-warnings=maybe"}, v),
              "--kokkos-disable-warnings=maybe: got 'maybe', expected --kokkos-disable-warnings alone or "
              "=true|false (yes|no, 1|0)");
    EXPECT_EQ(flag_message({"--kokkos-help=1"}, v), "--kokkos-help=1: got '1', expected --kokkos-help without a value");
    EXPECT_EQ(flag_message({"--kokkos-tools-libs="}, v),
              "--kokkos-tools-libs=: got '', expected --kokkos-tools-libs=LIBRARY, not empty");
    EXPECT_EQ(flag_message({"--kokkos-ndevices=2,x"}, v).substr(0, 37), "--kokkos-ndevices=2,x: got '2,x', exp");
    EXPECT_EQ(flag_message({"--kokkos-map-device-id-by=nearest"}, v),
              "--kokkos-map-device-id-by=nearest: got 'nearest', expected --kokkos-map-device-id-by=random or "
              "=mpi_rank");
    EXPECT_EQ(flag_message({"--kokkos-num-threads=2", "--kokkos-threads=3"}, v),
              "--kokkos-num-threads given twice ('--kokkos-num-threads=2' and '--kokkos-threads=3')");
    // A value with a newline stays on one line.
    EXPECT_EQ(flag_message({"--kokkos-threads=1\n2"}, v),
              "--kokkos-threads=1\\n2: got '1\\n2', expected --kokkos-threads=N with N a whole number >= 1");
  }
}

TEST(KokkosFlags, UnknownAndUnsupportedFlagsAreUsageErrors) {
  EXPECT_EQ(flag_message({"--kokkos-foo=1"}, kKokkos34),
            "unknown Kokkos flag '--kokkos-foo=1' (Kokkos 3.4.1 knows --kokkos-num-threads, --kokkos-numa, "
            "--kokkos-device-id, --kokkos-num-devices, --kokkos-disable-warnings, --kokkos-tune-internals, "
            "--kokkos-help, --kokkos-tools-help, --kokkos-tools-libs, --kokkos-tools-args)");
  EXPECT_EQ(flag_message({"--kokkos-"}, kKokkos46),
            "unknown Kokkos flag '--kokkos-' (Kokkos 4.6.0 knows --kokkos-num-threads, --kokkos-device-id, "
            "--kokkos-map-device-id-by, --kokkos-disable-warnings, --kokkos-print-configuration, "
            "--kokkos-tune-internals, --kokkos-help, --kokkos-tools-help, --kokkos-tools-libs, --kokkos-tools-args)");
  EXPECT_EQ(flag_message({"--kokkos-num-threadsx=2"}, kKokkos46).substr(0, 47),
            "unknown Kokkos flag '--kokkos-num-threadsx=2' (");
  EXPECT_EQ(flag_message({"--kokkos-map-device-id-by=random"}, kKokkos34),
            "--kokkos-map-device-id-by=random: not supported by Kokkos 3.4.1 (use --kokkos-device-id=N or "
            "--kokkos-num-devices=N)");
  EXPECT_EQ(flag_message({"--kokkos-numa=2"}, kKokkos46),
            "--kokkos-numa=2: not supported by Kokkos 4.6.0 (Kokkos ignores it)");
  EXPECT_EQ(flag_message({"--kokkos-ndevices=2"}, kKokkos46),
            "--kokkos-ndevices=2: not supported by Kokkos 4.6.0 (use --kokkos-map-device-id-by=mpi_rank)");
}

// A bad flag leaves Kokkos alone: Environment records it, run_app reports it
// (exit 2, one line) before touching Kokkos, and the destructor finalises nothing
// it did not initialise. (This process's Kokkos belongs to the test main.)
TEST(KokkosFlags, EnvironmentReportsABadFlagThroughRunApp) {
  const char* args[] = {"kmini", "--dry-run", "--kokkos-threads=abc", nullptr};
  int argc = 3;
  char** argv = const_cast<char**>(args);
  {
    Environment env(argc, argv);
    EXPECT_EQ(env.usage_problem(),
              "--kokkos-threads=abc: got 'abc', expected --kokkos-threads=N with N a whole number >= 1");
    std::ostringstream out, err;
    EXPECT_EQ(run_app(env, argc, args, out, err), kExitUsage);
    EXPECT_EQ(out.str(), "");
    EXPECT_EQ(err.str(), "kmini: error: " + env.usage_problem() + "\n");
  }
  EXPECT_TRUE(Kokkos::is_initialized());
}

}  // namespace kmini

namespace kmini {

TEST(Describe, ParsesKernelAndFormat) {
  const char* json[] = {"kmini", "describe", "rk4", "--json"};
  const CommandLine a = parse_command_line(4, json);
  EXPECT_TRUE(a.describe);
  EXPECT_EQ(a.describe_kernel, "rk4");
  EXPECT_EQ(a.describe_format, "json");
  const char* all[] = {"kmini", "describe", "--markdown"};
  const CommandLine b = parse_command_line(3, all);
  EXPECT_TRUE(b.describe_kernel.empty());
  EXPECT_EQ(b.describe_format, "markdown");
  const char* bad[] = {"kmini", "describe", "--yaml"};
  EXPECT_THROW(parse_command_line(3, bad), UsageError);
  const char* two[] = {"kmini", "describe", "rk4", "gram"};
  EXPECT_THROW(parse_command_line(4, two), UsageError);
}

TEST(Describe, OneKernelOrAllAndUnknownNamesTheChoices) {
  const std::string rk4 = describe("rk4", "json");
  EXPECT_NE(rk4.find("\"name\": \"rk4\""), std::string::npos);
  EXPECT_EQ(rk4.find("\"name\": \"gram\""), std::string::npos);
  EXPECT_NE(rk4.find("\"key\": \"rk4.coupling\""), std::string::npos);
  const std::string text = describe("", "text");
  for (const char* line :
       {"run: ", "stream: ", "rk4: ", "discount: ", "gram: ", "  rk4.coupling (choice, default per_stage)"})
    EXPECT_NE(text.find(line), std::string::npos) << line;
  try {
    describe("rk5", "text");
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "describe: unknown kernel 'rk5' (expected one of run, stream, rk4, discount, gram)");
  }
}

}  // namespace kmini
