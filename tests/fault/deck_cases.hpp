#pragma once
// The generated families, by kind (internal to tests/fault).
#include "bad_input_cases.hpp"

#include <vector>

namespace kmini::fault {

std::vector<Family> deck_families();         // deck_cases.cpp (all deck families)
std::vector<Family> deck_syntax_families();  // deck_syntax_cases.cpp
std::vector<Family> deck_input_families();   // deck_input_cases.cpp
std::vector<Family> npy_families();          // npy_cases.cpp
std::vector<BadCase> npy_controls();         // the valid files the npy families mutate

}  // namespace kmini::fault
