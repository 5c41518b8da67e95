#pragma once
#include <string>

namespace kmini::fault {
// Writes the rules file deck_keys() reads (see deck_key_rules_writer.cpp); 0 on success.
int write_deck_key_rules(const std::string& file);
}  // namespace kmini::fault
