#include "kernel.hpp"
int from_second_unit() { return run(1.0); }
// No argument: only the second unit's lambda runs (the crash); "both": the
// first unit's runs first and sets the helper the merged function reads.
int main(int argc, char**) {
  const int sum = argc > 1 ? from_first_unit() + from_second_unit() : from_second_unit();
  std::printf("%d\n", sum);
  return sum == (argc > 1 ? 20 : 10) ? 0 : 1;
}
