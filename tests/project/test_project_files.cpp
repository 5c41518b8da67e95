// The project's configuration files, parsed the way their tools would:
// spack.yaml against Spack's environment schema, CMakePresets.json's presets.
#include <yaml-cpp/yaml.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include "support/relocated_path.hpp"

namespace {

std::string source(const std::string& rel) { return kmini::test::relocated(KMINI_SOURCE_DIR) + "/" + rel; }

bool has_spec(const YAML::Node& specs, const std::string& name, const std::vector<std::string>& needles) {
  for (const auto& s : specs) {
    const std::string spec = s.as<std::string>();
    if (spec.rfind(name, 0) != 0) continue;
    const char next = spec.size() > name.size() ? spec[name.size()] : ' ';
    if (next != '@' && next != ' ' && next != '+' && next != '~') continue;
    bool all = true;
    for (const auto& n : needles) all = all && spec.find(n) != std::string::npos;
    if (all) return true;
  }
  return false;
}

}  // namespace

TEST(ProjectFiles, SpackEnvironmentFollowsTheSchemaAndProvidesTheCudaPreset) {
  const YAML::Node root = YAML::LoadFile(source("spack.yaml"));
  ASSERT_TRUE(root.IsMap());
  ASSERT_EQ(root.size(), 1u) << "a Spack environment has the single root key 'spack'";
  const YAML::Node spack = root["spack"];
  ASSERT_TRUE(spack.IsMap());
  const YAML::Node specs = spack["specs"];
  ASSERT_TRUE(specs.IsSequence());
  EXPECT_TRUE(has_spec(specs, "kokkos", {"@4", "+cuda", "+wrapper", "cuda_arch=90"}));
  EXPECT_TRUE(has_spec(specs, "kokkos-kernels", {"@4", "+cuda", "cuda_arch=90"}));
  EXPECT_TRUE(has_spec(specs, "kmini", {"+cuda", "cuda_arch=90"}));  // from spack/spack_repo/kmini
  EXPECT_TRUE(spack["repos"].IsSequence());
  EXPECT_EQ(spack["develop"]["kmini"]["path"].as<std::string>(), ".");
  for (const char* py : {"py-numpy", "py-matplotlib", "py-pyyaml"}) EXPECT_TRUE(has_spec(specs, py, {})) << py;
  EXPECT_TRUE(has_spec(specs, "mpi", {}));
  EXPECT_TRUE(has_spec(specs, "googletest", {}));
  EXPECT_TRUE(has_spec(specs, "yaml-cpp", {}));
  EXPECT_TRUE(has_spec(specs, "cmake", {}));
  EXPECT_TRUE(spack["view"].IsDefined());
  EXPECT_TRUE(spack["concretizer"]["unify"].as<bool>());
}

TEST(ProjectFiles, PresetsProvideDefaultOpenmpCudaAndSanitizer) {
  const YAML::Node presets = YAML::LoadFile(source("CMakePresets.json"));  // JSON is YAML
  std::map<std::string, YAML::Node> by_name;
  for (const auto& p : presets["configurePresets"]) by_name.emplace(p["name"].as<std::string>(), YAML::Node(p));
  ASSERT_TRUE(by_name.count("default") && by_name.count("openmp") && by_name.count("cuda") && by_name.count("asan"));
  EXPECT_EQ(by_name["default"]["binaryDir"].as<std::string>(), "${sourceDir}/build");
  EXPECT_EQ(by_name["openmp"]["binaryDir"].as<std::string>(), "${sourceDir}/build-openmp");
  EXPECT_EQ(by_name["cuda"]["binaryDir"].as<std::string>(), "${sourceDir}/build-cuda");
  ASSERT_TRUE(by_name.count("hip"));
  EXPECT_EQ(by_name["hip"]["binaryDir"].as<std::string>(), "${sourceDir}/build-hip");
  EXPECT_EQ(by_name["default"]["cacheVariables"]["CMAKE_BUILD_TYPE"].as<std::string>(), "Release");
  // Backend presets fail at configure without their backend; cmake/KminiBackend.cmake picks
  // $Kokkos_ROOT/bin/nvcc_wrapper for CUDA (no compiler path built from a maybe-empty variable).
  EXPECT_EQ(by_name["openmp"]["cacheVariables"]["KMINI_REQUIRE_BACKEND"].as<std::string>(), "OPENMP");
  EXPECT_EQ(by_name["cuda"]["cacheVariables"]["KMINI_REQUIRE_BACKEND"].as<std::string>(), "CUDA");
  EXPECT_FALSE(by_name["cuda"]["cacheVariables"]["CMAKE_CXX_COMPILER"].IsDefined());
  // HIP: the compiler Kokkos was built with (hipcc or clang++), picked the same way; host code not -march=native.
  EXPECT_EQ(by_name["hip"]["cacheVariables"]["KMINI_REQUIRE_BACKEND"].as<std::string>(), "HIP");
  EXPECT_FALSE(by_name["hip"]["cacheVariables"]["CMAKE_CXX_COMPILER"].IsDefined());
  EXPECT_EQ(by_name["hip"]["cacheVariables"]["KMINI_NATIVE"].as<std::string>(), "OFF");
  EXPECT_FALSE(by_name["default"]["cacheVariables"]["KMINI_REQUIRE_BACKEND"].IsDefined());
  EXPECT_EQ(by_name["asan"]["cacheVariables"]["KMINI_SANITIZE"].as<std::string>(), "ON");
  // Every configure preset can be built and tested by name.
  for (const char* list : {"buildPresets", "testPresets"}) {
    std::map<std::string, std::string> configure_of;
    for (const auto& p : presets[list])
      configure_of[p["name"].as<std::string>()] = p["configurePreset"].as<std::string>();
    for (const auto& [name, preset] : by_name) EXPECT_EQ(configure_of[name], name) << list << " lacks " << name;
  }
}
