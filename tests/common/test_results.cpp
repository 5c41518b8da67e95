#include "results/build_info.hpp"
#include "results/results.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include "support/relocated_path.hpp"

namespace kmini {

namespace {
// One format_si expectation: value, unit, the text expected.
struct SiCase {
  double value;
  const char* unit;
  const char* expect;
};
template <std::size_t N>
void expect_si(const SiCase (&cases)[N]) {
  for (const auto& c : cases) EXPECT_EQ(format_si(c.value, c.unit), c.expect) << c.value << " " << c.unit;
}
}  // namespace

TEST(FormatSi, ThreeSignificantDigitsWithThePrefixThatKeepsThemBelow1000) {
  const SiCase cases[] = {
      {1.33e12, "bitop/s", "1.33 Tbitop/s"},
      {47.94e9, "B/s", "47.9 GB/s"},
      {393e9, "bitop/s", "393 Gbitop/s"},
      {12345, "B/s", "12.3 kB/s"},
      {2.25e9, "op/s", "2.25 Gop/s"},
      {5e15, "B/s", "5.00 PB/s"},
      {0.5, "B/s", "500 mB/s"},
      {-4.2e6, "B/s", "-4.20 MB/s"},
  };
  expect_si(cases);
}

TEST(FormatSi, BoundariesRoundBeforeChoosingThePrefix) {
  const SiCase cases[] = {
      {1, "", "1.00"},
      {999, "", "999"},
      {999.4, "", "999"},
      {999.9, "", "1.00 k"},  // rounds to 1000: the next prefix
      {1000, "", "1.00 k"},
      {1001, "", "1.00 k"},
      {9.994, "", "9.99"},
      {9.996, "", "10.0"},
      {99.96, "", "100"},
      {999.9e3, "B/s", "1.00 MB/s"},
      {999.4e9, "B/s", "999 GB/s"},
      {0.9999, "", "1.00"},
      {0.999, "", "999 m"},
  };
  expect_si(cases);
}

TEST(FormatSi, ZeroNonFiniteAndOutOfRange) {
  const SiCase cases[] = {
      {0, "B/s", "0 B/s"},
      {0, "", "0"},
      {NAN, "B/s", "-"},
      {std::numeric_limits<double>::infinity(), "B/s", "-"},
      {999e18, "B/s", "999 EB/s"},
      {1e21, "B/s", "1e+21 B/s"},  // beyond exa: plain exponent
      {1.5e-12, "B/s", "1.50 pB/s"},
      {1e-13, "B/s", "1e-13 B/s"},
  };
  expect_si(cases);
}

namespace {
SummaryRow row(const std::string& label, double rate, double aggregate, double roof_fraction, const char* roof) {
  SummaryRow r;
  r.label = label;
  r.size = "n=10";
  r.seconds = 0.00125;
  r.throughput = rate;
  r.aggregate = aggregate;
  r.unit = label.rfind("gram", 0) == 0 ? "bitop/s" : "B/s";
  r.roof_fraction = roof_fraction;
  r.roof = roof;
  r.verified = true;
  return r;
}
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}
}  // namespace

TEST(SummaryTable, OneRankNamesTheRoofAndFitsLargeRates) {
  std::ostringstream os;
  print_summary_table(os,
                      {row("stream.add_f64", 47.9e9, 47.9e9, 1.0, kRoofStream),
                       row("discount.per_date_f64.e2e", 23.3e9, 23.3e9, NAN, ""),
                       row("gram.counts", 1.33e12, 1.33e12, 0.0338, kRoofPopcount)},
                      1, true);
  const auto lines = lines_of(os.str());
  ASSERT_EQ(lines.size(), 9u) << os.str();
  EXPECT_EQ(lines[0],
            "kernel    variant                  size                    seconds      throughput  of roof          "
            "verified");
  EXPECT_EQ(lines[2],
            "stream    add_f64                  n=10                    0.00125       47.9 GB/s    100% stream BW    "
            "  yes");
  EXPECT_EQ(lines[3],
            "discount  per_date_f64.e2e         n=10                    0.00125       23.3 GB/s      -               "
            "  yes");
  EXPECT_EQ(lines[4],
            "gram      counts                   n=10                    0.00125   1.33 Tbitop/s   3.38% popcount     "
            "  yes");
  for (std::size_t i = 2; i <= 4; ++i) EXPECT_EQ(lines[i].size(), lines[0].size()) << lines[i];
  EXPECT_EQ(lines[5], "seconds: the slowest rank's (best of repeat where a kernel repeats)");
  EXPECT_EQ(lines[6],
            "of roof: stream BW = the best stream bandwidth per rank measured in this run; popcount = gram's "
            "AND+popcount probe; gram's fraction divides the executed bit-ops/s by the probe's, not the useful ones");
  EXPECT_EQ(lines[7], "e2e: host->device inputs + kernel + device->host results, timed like the kernel row above it");
  EXPECT_EQ(lines[8], "     (device memory is host memory here: the copies are no-ops, e2e = the kernel within noise)");
}

TEST(SummaryTable, SeveralRanksShowPerRankAndAggregateRates) {
  std::ostringstream os;
  SummaryRow unverified = row("gram.baseline_sgemm", 2.25e9, NAN, NAN, "");
  unverified.unit = "op/s";
  unverified.verified.reset();
  print_summary_table(os, {row("rk4.per_stage_c8", 5.49e9, 10.98e9, 0.0558, kRoofStream), unverified}, 2, false);
  const auto lines = lines_of(os.str());
  ASSERT_EQ(lines.size(), 6u) << os.str();
  EXPECT_EQ(lines[0],
            "kernel    variant                  size                    seconds        per rank     all 2 ranks  of "
            "roof          verified");
  EXPECT_EQ(
      lines[2],
      "rk4       per_stage_c8             n=10                    0.00125       5.49 GB/s       11.0 GB/s   5.58% "
      "stream BW      yes");
  EXPECT_EQ(lines[3],
            "gram      baseline_sgemm           n=10                    0.00125      2.25 Gop/s               -      - "
            "            skipped");
  EXPECT_EQ(lines[4],
            "seconds: the slowest rank's (best of repeat where a kernel repeats); rates per rank and of all 2 ranks "
            "together");
  EXPECT_EQ(lines[5], "of roof: stream BW = the best stream bandwidth per rank measured in this run");
}

}  // namespace kmini

namespace kmini {

TEST(StatsOverRanks, MinMedianMaxAndTheSlowestRank) {
  EXPECT_EQ(stats_over_ranks({3.0, 1.0, 2.0}).dump(0),
            "{\"min\":1.0,\"median\":2.0,\"max\":3.0,\"slowest_rank\":0,\"ranks\":3}");
  // An even count: the mean of the middle two.
  EXPECT_EQ(stats_over_ranks({0.5, 4.0, 1.0, 2.0}).dump(0),
            "{\"min\":0.5,\"median\":1.5,\"max\":4.0,\"slowest_rank\":1,\"ranks\":4}");
  EXPECT_EQ(stats_over_ranks({0.25}).dump(0),
            "{\"min\":0.25,\"median\":0.25,\"max\":0.25,\"slowest_rank\":0,\"ranks\":1}");
  // Ties: the lowest rank among the slowest.
  EXPECT_EQ(stats_over_ranks({1.0, 2.0, 2.0}).dump(0),
            "{\"min\":1.0,\"median\":2.0,\"max\":2.0,\"slowest_rank\":1,\"ranks\":3}");
}

namespace {
std::string cpu_model_of(const std::string& text) {
  const std::string path = kmini::test::relocated(KMINI_TEST_TMP) + "/cpuinfo_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::ofstream(path) << text;
  return cpu_model(path);
}
}  // namespace

TEST(BuildInfo, CpuModelFromProcCpuinfoOfX86AndArm) {
  EXPECT_EQ(cpu_model_of("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
                         "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"),
            "Intel(R) Xeon(R) Platinum 8480+");
  // Raspberry Pi style: "Model" at the end; "Hardware" when there is no Model.
  EXPECT_EQ(cpu_model_of("processor\t: 0\nBogoMIPS\t: 108.00\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4\n"),
            "Raspberry Pi 4");
  EXPECT_EQ(cpu_model_of("processor\t: 0\nHardware\t: Qualcomm Technologies\n"), "Qualcomm Technologies");
  EXPECT_EQ(cpu_model_of("processor\t: 0\nCPU implementer\t: 0x41\nmodel name\t:\n"), "unknown");
  EXPECT_EQ(cpu_model("/no/such/cpuinfo"), "unknown");
}

TEST(BuildInfo, DescribesTheBuildAndEveryEnabledBackend) {
  const Json b = build_description();
  for (const char* key : {"git_revision", "build_type", "cxx_flags", "options"}) ASSERT_NE(b.find(key), nullptr) << key;
  EXPECT_FALSE(b.find("git_revision")->as_string().empty());
  EXPECT_FALSE(b.find("compiler")->find("id")->as_string().empty());
  EXPECT_FALSE(b.find("compiler")->find("version")->as_string().empty());
  // The default execution space is one of the listed backends.
  const Json k = kokkos_description();
  const std::string space = k.find("execution_space")->as_string();
  const auto backends = kokkos_backends();
  EXPECT_NE(std::find(backends.begin(), backends.end(), space), backends.end()) << space;
  EXPECT_EQ(k.find("backends")->items().size(), backends.size());
}

}  // namespace kmini

namespace kmini {

TEST(SummaryTable, LastLineGivesEachKernelsFigureOfMerit) {
  std::ostringstream os;
  FomLine stream{"stream", {"bandwidth_bytes_per_s", "B/s", "", kRoofStream, true}, 47.9e9, {}};
  stream.roof = {kRoofStream, "B/s", 50e9, 0.958};
  FomLine gram{"gram", {"useful_bit_ops_per_s", "bitop/s", "", kRoofPopcount, true}, 1.33e12, {}};
  FomLine unmeasured{"rk4", {"element_steps_per_s", "element-step/s", "", kRoofStream, true}, NAN, {}};
  print_summary_table(os, {}, 1, false, {stream, gram, unmeasured});
  const std::string text = os.str();
  const std::string last = text.substr(text.rfind('\n', text.size() - 2) + 1);
  EXPECT_EQ(last,
            "figure of merit, all ranks: stream bandwidth_bytes_per_s = 47.9 GB/s (95.8% of stream BW); gram "
            "useful_bit_ops_per_s = 1.33 Tbitop/s\n");
}

}  // namespace kmini
