// kmini: a Kokkos mini-app of three device-resident kernels (RK4 fields,
// discount broadcast multiply, bit-packed Gram product) plus stream probes.
#include "core/environment.hpp"
#include "driver/app.hpp"

#include <iostream>

int main(int argc, char** argv) {
  kmini::Environment env(argc, argv);
  return kmini::run_app(env, argc, argv, std::cout, std::cerr);
}
