#pragma once
// Every output a run will write is checked on every rank before anything
// runs: a bad path is exit 2 up front, not a failure (or a hang) after hours
// of computation.
#include <mpi.h>

#include <string>
#include <vector>

namespace kmini {

struct OutputFile {
  std::string origin;  // who asked for it: "deck.yaml:12: gram.write.C" or "--out DIR"
  std::string path;    // where it goes (already resolved against --out)
};

// Throws UsageError "<origin>: cannot write '<path>': <why>" when the file
// could not be written atomically: its directory is missing or not writable
// (a probe file is created and removed), its name is empty or longer than the
// file system allows, it is a directory or not a regular file. A symbolic
// link is checked as the file it points to, where outputs are written
// (output_target); one whose target cannot be resolved is refused.
void check_output_file(const OutputFile& out);

// Every output checked here, and no two of them the same file (links
// followed): the first problem's UsageError.
void check_output_files_here(const std::vector<OutputFile>& outs);

// Collective: checks every output on every rank and that no two outputs are
// the same file; every rank throws the same UsageError (the lowest failing
// rank's) or none does.
void check_output_files(MPI_Comm comm, const std::vector<OutputFile>& outs);

}  // namespace kmini
