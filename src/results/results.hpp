#pragma once
// results.json and the summary table printed at the end of a run.
#include "driver/kernel.hpp"
#include "io/json.hpp"

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace kmini {

class Results {
 public:
  Results(const Environment& env, const Json& resolved_deck);
  void add(const std::string& kernel, const KernelReport& report);
  const Json& json() const { return json_; }
  // Atomic write of DIR/results.json (call on rank 0).
  void write(const std::string& dir) const;
  void print_summary(std::ostream& os) const;

 private:
  Json json_;
  std::vector<SummaryRow> rows_;
};

// "1.23 GB/s"-style number formatting for the table.
std::string format_number(double v, int precision = 3);

}  // namespace kmini
