#include "core/kokkos_compat.hpp"

#include "core/errors.hpp"
#include "core/file_kind.hpp"
#include "core/text.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace kmini::compat {

namespace {

// Kokkos' human_memory_size: "512 B", "1.5 K", "7.451e+09 G", "2 T"; < 0 if not one.
double parse_kokkos_size(const std::string& text) {
  double value = 0;
  char unit = 0;
  if (std::sscanf(text.c_str(), "%lf %c", &value, &unit) != 2 || value < 0) return -1;
  const std::string units = "BKMGT";
  const auto power = units.find(unit);
  if (power == std::string::npos) return -1;
  for (std::size_t i = 0; i < power; ++i) value *= 1024;
  return value;
}

}  // namespace

std::optional<AllocationFailure> allocation_failure(const std::exception& e) {
  const std::string what = e.what() ? e.what() : "";
  const bool bad_alloc = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
  if (!bad_alloc && what.find("failed to allocate") == std::string::npos &&
      what.find("Allocation of size") == std::string::npos)
    return std::nullopt;
  AllocationFailure f;
  for (const std::string open : {"label \"", "label=\""}) {
    const auto at = what.find(open);
    if (at == std::string::npos) continue;
    const auto end = what.find('"', at + open.size());
    f.label = what.substr(at + open.size(), end == std::string::npos ? std::string::npos : end - at - open.size());
    break;
  }
  for (const std::string before : {"Allocation of size ", "failed to allocate "}) {
    for (auto at = what.find(before); at != std::string::npos && f.bytes < 0; at = what.find(before, at + 1))
      f.bytes = parse_kokkos_size(what.substr(at + before.size(), 32));
  }
  // The first line, without 3.4's "... failed with the following error:" preamble, spaces collapsed.
  std::string line = what.substr(0, what.find('\n'));
  const std::string preamble = "with the following error:";
  if (const auto at = line.find(preamble); at != std::string::npos) line = line.substr(at + preamble.size());
  for (char c : line)
    if (c != ' ' || (!f.reason.empty() && f.reason.back() != ' ')) f.reason += c;
  while (!f.reason.empty() && f.reason.back() == ' ') f.reason.pop_back();
  if (f.reason.empty()) f.reason = bad_alloc ? "out of memory" : "unknown reason";
  return f;
}

std::vector<std::string> device_mapping_flags(int node_local_rank) {
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
  // The user (flags or environment) has the last word.
  if (std::getenv("KOKKOS_DEVICE_ID") || std::getenv("KOKKOS_MAP_DEVICE_ID_BY")) return {};
#if KMINI_KOKKOS_4
  // Kokkos 4 maps by node-local rank itself, reading the launcher's variables;
  // provide the rank we computed with MPI when the launcher set none of them.
  const char* launcher_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                 "SLURM_LOCALID", "PMI_LOCAL_RANK"};
  bool launcher_known = false;
  for (const char* v : launcher_vars) launcher_known = launcher_known || std::getenv(v);
  if (!launcher_known) setenv("MPI_LOCALRANKID", std::to_string(node_local_rank).c_str(), 0);
  return {"--kokkos-map-device-id-by=mpi_rank"};
#else
  int count = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
#endif
  if (count <= 0) return {};
  return {"--kokkos-device=" + std::to_string(node_local_rank % count)};
#endif
#else
  (void)node_local_rank;
  return {};
#endif
}

namespace {

enum class Kind { Count, Index, Devices, MapBy, Bool, Bare, Text };

struct FlagSpec {
  const char* name;   // after "--kokkos-": the spelling of Kokkos >= 3.7
  const char* alias;  // another accepted spelling (Kokkos 3.4's), or nullptr
  Kind kind;
  const char* expected;
  int first_version;  // the Kokkos versions that honour the flag: [first, last)
  int last_version;
  const char* instead;  // what to use where it is not honoured
};

constexpr int kAny = 0, kNever = 1000000;
// 3.7 renamed threads/device/tools-library and added values to the booleans;
// 4.3 removed the old names, numa and num-devices.
const FlagSpec kFlags[] = {
    {"num-threads", "threads", Kind::Count, "=N with N a whole number >= 1", kAny, kNever, ""},
    {"numa", nullptr, Kind::Count, "=N with N a whole number >= 1", kAny, 30700, "Kokkos ignores it"},
    {"device-id", "device", Kind::Index, "=N with N a whole number >= 0", kAny, kNever, ""},
    {"num-devices", "ndevices", Kind::Devices, "=N or =N,SKIP with whole numbers N >= 1, SKIP >= 0", kAny, 40300,
     "use --kokkos-map-device-id-by=mpi_rank"},
    {"map-device-id-by", nullptr, Kind::MapBy, "=random or =mpi_rank", 30700, kNever,
     "use --kokkos-device-id=N or --kokkos-num-devices=N"},
    {"disable-warnings", nullptr, Kind::Bool, " alone or =true|false (yes|no, 1|0)", kAny, kNever, ""},
    {"print-configuration", nullptr, Kind::Bool, " alone or =true|false (yes|no, 1|0)", 30700, kNever,
     "kmini's plan and results.json name the configuration"},
    {"tune-internals", nullptr, Kind::Bool, " alone or =true|false (yes|no, 1|0)", kAny, kNever, ""},
    {"help", nullptr, Kind::Bare, " without a value", kAny, kNever, ""},
    {"tools-help", nullptr, Kind::Bare, " without a value", kAny, kNever, ""},
    {"tools-libs", "tools-library", Kind::Text, "=LIBRARY, not empty", kAny, kNever, ""},
    {"tools-args", nullptr, Kind::Text, "=ARGS, not empty", kAny, kNever, ""},
};
constexpr int kNewSpellings = 30700;

std::string version_text(int version) {
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

// A decimal number of digits only (no sign, no spaces) in [min, INT_MAX].
bool whole_number(const std::string& s, long long min) {
  if (s.empty() || s.size() > 10) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  const long long v = std::atoll(s.c_str());
  return v >= min && v <= INT_MAX;
}

// Kokkos' boolean words, case-insensitive.
bool parse_bool(std::string s, bool& out) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "yes" || s == "true" || s == "1") out = true;
  else if (s == "no" || s == "false" || s == "0") out = false;
  else return false;
  return true;
}

bool valid_value(const FlagSpec& f, bool has_value, const std::string& value) {
  bool unused = false;
  switch (f.kind) {
    case Kind::Count: return has_value && whole_number(value, 1);
    case Kind::Index: return has_value && whole_number(value, 0);
    case Kind::Devices: {
      const auto comma = value.find(',');
      return has_value && whole_number(value.substr(0, comma), 1) &&
             (comma == std::string::npos || whole_number(value.substr(comma + 1), 0));
    }
    case Kind::MapBy: return has_value && (value == "random" || value == "mpi_rank");
    case Kind::Bool: return !has_value || parse_bool(value, unused);
    case Kind::Bare: return !has_value;
    case Kind::Text: return has_value && !value.empty();
  }
  return false;
}

// Kokkos' environment variables. Kokkos 3.4 parses the numbers with std::stoi
// (an uncaught std::invalid_argument: SIGABRT, exit 134, on
// KOKKOS_NUM_THREADS=abc), 4.x with strtol and Kokkos::abort on what it cannot
// convert; neither can be caught, so kmini checks them first.
struct EnvSpec {
  const char* name;
  Kind kind;
  const char* expected;
  int first_version, last_version;  // the Kokkos versions that read it
};
const EnvSpec kEnvironment[] = {
    {"KOKKOS_NUM_THREADS", Kind::Count, "a whole number N >= 1", kAny, kNever},
    {"KOKKOS_NUMA", Kind::Count, "a whole number N >= 1", kAny, 30700},
    {"KOKKOS_DEVICE_ID", Kind::Index, "a whole number N >= 0", kAny, kNever},
    {"KOKKOS_NUM_DEVICES", Kind::Count, "a whole number N >= 1", kAny, 30700},
    {"KOKKOS_SKIP_DEVICE", Kind::Index, "a whole number N >= 0", kAny, 30700},
    {"KOKKOS_RAND_DEVICES", Kind::Count, "a whole number N >= 1", kAny, 30700},
    {"KOKKOS_MAP_DEVICE_ID_BY", Kind::MapBy, "random or mpi_rank", 30700, kNever},
    {"KOKKOS_DISABLE_WARNINGS", Kind::Bool, "true|false (yes|no, 1|0)", kAny, kNever},
    {"KOKKOS_PRINT_CONFIGURATION", Kind::Bool, "true|false (yes|no, 1|0)", 30700, kNever},
    {"KOKKOS_TUNE_INTERNALS", Kind::Bool, "true|false (yes|no, 1|0)", kAny, kNever},
    {"KOKKOS_VISIBLE_DEVICES", Kind::Devices, "device ids N >= 0 separated by commas", 40000, kNever},
};

bool valid_environment_value(const EnvSpec& e, const std::string& value) {
  bool unused = false;
  switch (e.kind) {
    case Kind::Count: return whole_number(value, 1);
    case Kind::Index: return whole_number(value, 0);
    case Kind::MapBy: return value == "random" || value == "mpi_rank";
    case Kind::Bool: return parse_bool(value, unused);
    case Kind::Devices: {  // here: a list of ids
      std::size_t start = 0;
      for (;;) {
        const auto comma = value.find(',', start);
        if (!whole_number(value.substr(start, comma == std::string::npos ? comma : comma - start), 0)) return false;
        if (comma == std::string::npos) return true;
        start = comma + 1;
      }
    }
    default: return !value.empty();
  }
}

// The devices this process sees, or -1 where the backend has none or cannot tell.
int device_count() {
#if defined(KOKKOS_ENABLE_CUDA)
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
#else
  return -1;
#endif
}

// The libraries of one --kokkos-tools-libs / KOKKOS_TOOLS_LIBS value (Kokkos
// separates them with ';').
std::vector<std::string> split_libraries(const std::string& value) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto semi = value.find(';', start);
    const std::string lib = value.substr(start, semi == std::string::npos ? semi : semi - start);
    if (!lib.empty()) out.push_back(lib);
    if (semi == std::string::npos) return out;
    start = semi + 1;
  }
}
}  // namespace

std::vector<std::string> kokkos_flags(const std::vector<std::string>& args, int version) {
  const std::string prefix = "--kokkos-", kokkos = "Kokkos " + version_text(version);
  const bool new_spellings = version >= kNewSpellings;
  std::vector<std::string> out;
  std::vector<std::pair<const FlagSpec*, std::string>> seen;
  for (const std::string& arg : args) {
    const auto eq = arg.find('=');
    const bool has_value = eq != std::string::npos;
    std::string name;  // between "--kokkos-" and "="
    if (arg.rfind(prefix, 0) == 0) name = arg.substr(prefix.size(), has_value ? eq - prefix.size() : std::string::npos);
    const std::string value = has_value ? arg.substr(eq + 1) : "";
    const FlagSpec* f = nullptr;
    for (const auto& spec : kFlags)
      if (!name.empty() && (name == spec.name || (spec.alias && name == spec.alias))) f = &spec;
    if (!f) {
      std::string known;
      for (const auto& spec : kFlags)
        if (version >= spec.first_version && version < spec.last_version)
          known += (known.empty() ? "" : ", ") + prefix + spec.name;
      throw UsageError("unknown Kokkos flag " + quoted_value(arg) + " (" + kokkos + " knows " + known + ")");
    }
    const std::string shown = escape_cut(arg), flag = prefix + f->name;
    if (!valid_value(*f, has_value, value))
      throw UsageError("" + shown + ": " + (has_value ? "got " + quoted_value(value) : "no value") + ", expected " +
                       prefix + name + f->expected);
    for (const auto& [other, other_arg] : seen)
      if (other == f)
        throw UsageError("" + flag + " given twice (" + quoted_value(other_arg) + " and " + quoted_value(arg) + ")");
    seen.emplace_back(f, arg);
    if (version < f->first_version || version >= f->last_version)
      throw UsageError("" + shown + ": not supported by " + kokkos + " (" + f->instead + ")");

    // Spelled as this version reads it.
    const std::string kind = f->name;
    if (kind == "num-threads") {
      out.push_back(prefix + (new_spellings ? "num-threads=" : "threads=") + value);
    } else if (kind == "tools-libs") {
      out.push_back(prefix + (new_spellings ? "tools-libs=" : "tools-library=") + value);
    } else if (f->kind == Kind::Bool) {
      bool on = true;
      if (has_value) parse_bool(value, on);
      if (new_spellings) out.push_back(flag + (on ? "=true" : "=false"));
      else if (on) out.push_back(flag);  // Kokkos 3.4 reads them bare (and "=false" as on)
    } else {
      out.push_back(flag + (has_value ? "=" + value : ""));
    }
  }
  return out;
}

std::vector<std::string> tools_flags_from_environment(const std::vector<std::string>& flags, const char* tools_libs,
                                                      const char* profile_library, int version) {
  if (version >= kNewSpellings || !tools_libs || !*tools_libs || (profile_library && *profile_library)) return {};
  for (const auto& f : flags)
    if (f.rfind("--kokkos-tools-library=", 0) == 0) return {};
  return {std::string("--kokkos-tools-library=") + tools_libs};
}

}  // namespace kmini::compat

namespace kmini::compat {

void check_environment(const Getenv& get, int version) {
  const std::string kokkos = "Kokkos " + version_text(version);
  for (const auto& e : kEnvironment) {
    const char* raw = get(e.name);
    if (!raw || version < e.first_version || version >= e.last_version) continue;
    const std::string value = raw;
    if (!valid_environment_value(e, value))
      throw UsageError(std::string("environment variable ") + e.name + "=" + escape_cut(value) + ": expected " +
                       e.expected + " (" + kokkos + " cannot start with it)");
  }
  const char* tools = get("KOKKOS_TOOLS_LIBS");
  const char* profile = get("KOKKOS_PROFILE_LIBRARY");
  if (version >= kNewSpellings && tools && profile && std::strcmp(tools, profile) != 0)
    throw UsageError(std::string("environment variables KOKKOS_TOOLS_LIBS=") + escape_cut(tools) +
                     " and KOKKOS_PROFILE_LIBRARY=" + escape_cut(profile) +
                     " name different tool libraries, expected one of them (or the same library)");
}

void check_device_ids(const std::vector<std::string>& flags, const Getenv& get) {
  const int count = device_count();
  if (count < 0) return;
  auto check = [count](const std::string& where, const std::string& id) {
    if (std::atoll(id.c_str()) >= count)
      throw UsageError(where + ": device " + id + " does not exist, expected a device id below " +
                       std::to_string(count) + " (this process sees " + std::to_string(count) + " device" +
                       (count == 1 ? "" : "s") + ")");
  };
  for (const auto& f : flags)
    for (const char* prefix : {"--kokkos-device-id=", "--kokkos-device="})  // 4.x and 3.4 spellings
      if (f.rfind(prefix, 0) == 0) check(f, f.substr(std::strlen(prefix)));
  if (const char* id = get("KOKKOS_DEVICE_ID")) check(std::string("environment variable KOKKOS_DEVICE_ID=") + id, id);
}

namespace {

// A tools library asked for, and who asked: the flag or the variable.
struct ToolsLibrary {
  std::string source, library;
};

std::vector<ToolsLibrary> tools_libraries(const std::vector<std::string>& flags, const Getenv& get) {
  std::vector<ToolsLibrary> out;
  auto add = [&out](const std::string& source, const std::string& value) {
    for (auto& lib : split_libraries(value)) out.push_back({source, lib});
  };
  for (const auto& f : flags)
    for (const char* prefix : {"--kokkos-tools-libs=", "--kokkos-tools-library="})
      if (f.rfind(prefix, 0) == 0) add(f.substr(0, std::strlen(prefix) - 1), f.substr(std::strlen(prefix)));
  for (const char* var : {"KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY"})
    if (const char* v = get(var)) add(std::string("environment variable ") + var, v);
  return out;
}

// Loads each tools library as Kokkos will (dlopen, RTLD_NOW | RTLD_GLOBAL):
// one that does not load is a UsageError naming it and dlerror()'s reason.
// Kokkos itself prints a line and runs on without the tool.
void load_tools_libraries(const std::vector<std::string>& flags, const Getenv& get) {
  for (const auto& [source, lib] : tools_libraries(flags, get)) {
    const std::string where = source + " (" + escape_cut(lib) + ")";
    // A path is checked first: dlopen() of a named pipe blocks like open().
    if (lib.find('/') != std::string::npos) {
      int err = 0;
      const std::string kind = file_kind(lib, err);
      if (err) throw UsageError(where + ": cannot load the Kokkos tools library (" + std::strerror(err) + ")");
      if (!kind.empty())
        throw UsageError(where + ": is " + kind + ", expected a Kokkos tools library (a shared object)");
    }
    // The flags Kokkos uses: the handle stays open, so Kokkos' own dlopen finds it.
    if (!::dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char* why = ::dlerror();
      throw UsageError(where + ": cannot load the Kokkos tools library (" + escape_cut(why ? why : "unknown reason") +
                       ")");
    }
  }
}

}  // namespace

void check_before_initialize(const std::vector<std::string>& flags, const Getenv& get) {
  check_environment(get);
  check_device_ids(flags, get);
  load_tools_libraries(flags, get);
}

}  // namespace kmini::compat
