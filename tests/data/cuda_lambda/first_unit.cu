#include "kernel.hpp"
int from_first_unit() { return run(1.0); }
