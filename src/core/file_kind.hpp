#pragma once
// What a path names, for messages about files kmini reads (decks, inputs,
// tool libraries): "" for a regular file, else "a named pipe", "a character
// device", "a directory", ... Follows symbolic links, as open() does.
#include <sys/types.h>
#include <string>

namespace kmini {

std::string file_kind(mode_t mode);
// errno_out: 0, or the stat() error (the path does not exist, ...), then "".
std::string file_kind(const std::string& path, int& errno_out);

}  // namespace kmini
