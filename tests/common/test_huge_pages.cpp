// core/huge_pages.hpp: the streamed arrays are advised into transparent huge
// pages (the VM_HUGEPAGE flag, "hg" in /proc/self/smaps) and still read as a
// zero-filled view.
#include "core/huge_pages.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kmini {
namespace {

// The VmFlags of the mapping that holds `address`, or "" when none does.
std::string vm_flags_at(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
      inside = begin <= a && a < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
  }
  return "";
}

bool transparent_huge_pages() { return std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good(); }

TEST(HugePages, HostViewIsAdvisedAndZero) {
  if (!transparent_huge_pages()) GTEST_SKIP() << "this kernel has no transparent huge pages";
  using View = Kokkos::View<double*, Kokkos::HostSpace>;
  const std::int64_t n = std::int64_t(8) << 20;  // 64 MiB: a mapping of its own
  const View v = huge_page_view<View>("huge_pages_test", n);
  ASSERT_EQ(v.extent(0), static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; i += 4099) ASSERT_EQ(v(i), 0.0) << "element " << i;
  EXPECT_EQ(v(n - 1), 0.0);
  EXPECT_NE(vm_flags_at(v.data() + n / 2).find(" hg "), std::string::npos)
      << "VmFlags:" << vm_flags_at(v.data() + n / 2);
}

TEST(HugePages, PlainViewIsNotAdvised) {  // the check above can fail
  if (!transparent_huge_pages()) GTEST_SKIP() << "this kernel has no transparent huge pages";
  const Kokkos::View<double*, Kokkos::HostSpace> v("plain_test", std::int64_t(8) << 20);
  const std::string flags = vm_flags_at(v.data() + v.extent(0) / 2);
  ASSERT_FALSE(flags.empty()) << "no mapping found for the view";
  EXPECT_EQ(flags.find(" hg "), std::string::npos) << "VmFlags:" << flags;
}

TEST(HugePages, PartialPagesAndEmptyRangesAreHarmless) {
  std::vector<char> bytes(10000, 1);
  advise_huge_pages(bytes.data() + 1, bytes.size() - 1);  // whole pages inside only
  advise_huge_pages(bytes.data() + 1, 0);
  advise_huge_pages(nullptr, 4096);
  for (const char b : bytes) ASSERT_EQ(b, 1);
  const Kokkos::View<float*, Kokkos::HostSpace> empty = huge_page_view<Kokkos::View<float*, Kokkos::HostSpace>>("e", 0);
  EXPECT_EQ(empty.extent(0), 0u);
}

}  // namespace
}  // namespace kmini
