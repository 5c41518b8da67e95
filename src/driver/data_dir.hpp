#pragma once
// Where an installed kmini's decks (inputs/), example scripts (examples/) and
// benchmark / scaling / Slurm scripts (scripts/) are: `kmini --data-dir`.
#include <string>

namespace kmini {

// The kmini of a build tree: the source tree. An installed kmini:
// <prefix>/share/kmini found from the executable's own directory (so a moved
// prefix still works), else the install prefix it was configured for. Throws
// RuntimeFailure when none of them holds inputs/default.yaml.
std::string data_dir();

}  // namespace kmini
