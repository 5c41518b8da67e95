// The CLI's singleton settings apply only to a process no launcher started.
#include "core/environment.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

bool launched_with(const std::map<std::string, std::string>& env) {
  return kmini::started_by_launcher([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST(Environment, EachLaunchersVariableMarksALaunchedRank) {
  EXPECT_TRUE(launched_with({{"OMPI_COMM_WORLD_SIZE", "2"}}));         // Open MPI's mpirun
  EXPECT_TRUE(launched_with({{"PMIX_RANK", "0"}}));                    // srun or prterun with PMIx
  EXPECT_TRUE(launched_with({{"PMI_RANK", "1"}, {"PMI_SIZE", "4"}}));  // MPICH's Hydra
  EXPECT_TRUE(launched_with({{"PMI_FD", "5"}}));                       // Slurm's PMI-2
  EXPECT_TRUE(launched_with({{"MV2_COMM_WORLD_SIZE", "8"}}));          // MVAPICH
}

TEST(Environment, WithoutThemTheProcessIsASingleton) {
  EXPECT_FALSE(launched_with({}));
  // A Slurm job's or a batch system's own variables do not start MPI ranks.
  EXPECT_FALSE(launched_with({{"SLURM_JOB_ID", "42"}, {"OMPI_MCA_pml", "ucx"}, {"PATH", "/usr/bin"}}));
}
