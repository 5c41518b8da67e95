#include "driver/app.hpp"

#include "core/collective.hpp"
#include "core/device_memory.hpp"
#include "core/errors.hpp"
#include "core/format.hpp"
#include "core/kokkos_compat.hpp"
#include "core/termination.hpp"
#include "core/timer.hpp"
#include "default_deck.hpp"
#include "driver/cli.hpp"
#include "driver/data_dir.hpp"
#include "driver/kernels.hpp"
#include "kernel/kernel.hpp"
#include "results/results.hpp"
#include "results/validity.hpp"
#include "version.hpp"

#include <filesystem>
#include <ostream>

namespace kmini {

namespace {

// Rank 0 creates --out DIR; every rank learns whether it worked, so a failure
// is the same usage error everywhere instead of a rank stuck in a collective.
// Returns the directories rank 0 created, deepest last.
std::vector<std::filesystem::path> make_output_directory(const Environment& env, const std::string& dir) {
  std::string problem;
  std::vector<std::filesystem::path> created;
  if (env.is_root()) {
    std::error_code ec;
    std::filesystem::path missing = std::filesystem::absolute(dir, ec);
    for (auto p = missing; !p.empty() && !std::filesystem::exists(p, ec) && p != p.parent_path(); p = p.parent_path())
      created.insert(created.begin(), p);
    std::filesystem::create_directories(dir, ec);
    if (ec) problem = ec.message();
    else if (!std::filesystem::is_directory(dir)) problem = "exists and is not a directory";
    if (!problem.empty()) created.clear();
  }
  agree_or_throw(env.comm(), problem.empty() ? kExitSuccess : kExitUsage,
                 "--out " + dir + ": cannot create the output directory (" + problem + ")");
  return created;
}

// A failed run leaves no empty directories it created behind ("nothing written").
void remove_if_empty(const std::vector<std::filesystem::path>& created) {
  for (auto it = created.rbegin(); it != created.rend(); ++it) {
    std::error_code ec;
    if (std::filesystem::is_empty(*it, ec) && !ec) std::filesystem::remove(*it, ec);
  }
}

int run_kernels(const Environment& env, const CommandLine& cl, const Deck& deck, const std::vector<std::string>& order,
                std::vector<std::unique_ptr<Kernel>>& kernels, bool verify, std::int64_t seed, std::ostream& out,
                std::ostream& err);

// Checks the plans of the kernels that run against this rank's share of its
// device before anything is allocated: the same UsageError on every rank
// (the memory is agreed). A dry run only reports plans that do not fit here,
// so decks for larger machines can be planned anywhere; plans that overflow
// 64-bit byte counts fit nowhere and are errors in both modes.
int plan_and_run(const Environment& env, const CommandLine& cl, Deck& deck, std::ostream& out, std::ostream& err);

std::vector<std::string> check_device_memory(const Environment& env, const std::vector<const Kernel*>& kernels,
                                             bool verify, bool dry_run) {
  const RankMemory memory = device_memory_per_rank(env.comm());
  std::vector<std::string> notes;
  for (const Kernel* k : kernels)
    for (const MemoryNeed& need : k->memory_needs(env, verify)) {
      const std::string shortfall = memory_shortfall(need.bytes, memory);
      if (shortfall.empty()) continue;
      if (!dry_run || !need.bytes.fits()) throw UsageError(need.setting + ": " + shortfall);
      notes.push_back(need.setting + ": " + shortfall +
                      (memory.named ? " (a run on that device stops with exit 2)" : " (a run here stops with exit 2)"));
    }
  return notes;
}

int run_checked(const Environment& env, int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  // A bad --kokkos-* flag: Kokkos is not initialised, so nothing below may run.
  if (!env.usage_problem().empty()) throw UsageError(env.usage_problem());
  const CommandLine cl = parse_command_line(argc, argv);
  if (cl.help) {
    if (env.is_root()) out << usage_text();
    return kExitSuccess;
  }
  if (cl.describe) {
    const std::string text = describe(cl.describe_kernel, cl.describe_format);  // throws on every rank alike
    if (env.is_root()) out << text;
    return kExitSuccess;
  }
  if (cl.version) {
    if (env.is_root())
      out << "kmini " << kVersion << " (Kokkos " << compat::version_string() << ", " << compat::execution_space_name()
          << ")\n";
    return kExitSuccess;
  }
  if (cl.data_dir) {
    const std::string dir = data_dir();  // throws on every rank alike
    if (env.is_root()) out << dir << "\n";
    return kExitSuccess;
  }

  Deck deck = cl.deck.empty() ? Deck::from_text(kDefaultDeck, "built-in default deck") : Deck::from_file(cl.deck);
  for (const auto& s : cl.sets) deck.apply_set(s);
  if (cl.devices > 0) {
    // Planned from one process for N ranks, one device each (a login node).
    if (env.size() > 1)
      throw UsageError("--devices " + std::to_string(cl.devices) + " plans from one process; this run has " +
                       std::to_string(env.size()) + " ranks");
    const Environment planned(env, cl.devices);
    return plan_and_run(planned, cl, deck, out, err);
  }
  return plan_and_run(env, cl, deck, out, err);
}

int plan_and_run(const Environment& env, const CommandLine& cl, Deck& deck, std::ostream& out, std::ostream& err) {
  if (cl.device_memory > 0) plan_for_device_memory(cl.device_memory);

  // Validate everything before running anything.
  auto kernels = make_all_kernels();
  const RunSettings settings = configure_all(deck, kernels, env);
  const auto& order = settings.order;
  const bool verify = settings.verify;
  const auto seed = settings.seed;
  deck.check_all_keys_known();
  if (env.is_root())
    for (const auto& k : kernels)
      for (const auto& w : k->warnings()) err << "kmini: warning: " << w << "\n";

  auto find = [&](const std::string& name) -> Kernel& {
    for (auto& k : kernels)
      if (k->name() == name) return *k;
    throw UsageError("unknown kernel " + name);  // unreachable: names were validated
  };
  std::vector<const Kernel*> running;
  for (const auto& name : order) running.push_back(&find(name));
  const auto memory_notes = check_device_memory(env, running, verify, cl.dry_run);

  if (env.is_root()) {
    out << "kmini " << kVersion << ": deck " << deck.origin() << ", " << env.size() << " MPI rank(s), Kokkos "
        << compat::version_string() << " on " << compat::execution_space_name() << " (" << ExecSpace().concurrency()
        << " threads/lanes per rank)\n";
    if (cl.device_memory > 0 || cl.devices > 0)
      out << "planned for another machine: " << env.size() << " rank(s), one device each"
          << (cl.device_memory > 0 ? " of " + format_bytes(double(cl.device_memory)) : std::string(" as here")) << "\n";
    out << (cl.dry_run ? "plan (dry run, nothing is executed):\n" : "plan:\n");
    for (const auto& name : order) {
      out << "  ";
      find(name).print_plan(out, env);
    }
    for (const auto& note : memory_notes) out << "note: " << note << "\n";
  }
  if (cl.dry_run) return kExitSuccess;

  const auto created = make_output_directory(env, cl.out_dir);
  try {
    return run_kernels(env, cl, deck, order, kernels, verify, seed, out, err);
  } catch (...) {
    if (env.is_root()) remove_if_empty(created);
    throw;
  }
}

int run_kernels(const Environment& env, const CommandLine& cl, const Deck& deck, const std::vector<std::string>& order,
                std::vector<std::unique_ptr<Kernel>>& kernels, bool verify, std::int64_t seed, std::ostream& out,
                std::ostream& err) {
  auto find = [&](const std::string& name) -> Kernel& {
    for (auto& k : kernels)
      if (k->name() == name) return *k;
    throw UsageError("unknown kernel " + name);  // unreachable: names were validated
  };
  RunContext ctx(env, ExecSpace(), verify, static_cast<std::uint64_t>(seed), cl.out_dir, out, err);
  ctx.progress = !cl.quiet;
  // Every output is checked before anything runs (exit 2 on every rank).
  std::vector<OutputFile> outputs{{"--out " + cl.out_dir, cl.out_dir + "/results.json"}};
  for (const auto& name : order)
    for (const auto& o : find(name).outputs()) outputs.push_back({o.origin, ctx.output_path(o.path)});
  check_output_files(env.comm(), outputs);

  Results results(env, deck.resolved());
  LoadMonitor load(env.comm());  // the machine's load during the kernels (results.json "load")
  std::vector<std::string> failed;
  double ready = 0;  // seconds since the start when the previous kernel was done
  for (const auto& name : order) {
    if (env.is_root()) out << "running " << name << " ..." << std::endl;
    KernelReport report;
    try {
      // Every kernel's run is one region, "kmini::<name>", its phases nested in it.
      ScopedRegion region("kmini::" + name);
      ctx.measure_stream_bandwidth = bandwidth_probe(name);  // its probes run in this kernel's region
      FencedTimer<ExecSpace> timer(ctx.exec);
      const double started = env.seconds_since_start();
      report = find(name).run(ctx);
      report.seconds = timer.seconds();
      // The start-up before the kernel's phases: MPI, Kokkos, the deck and the
      // plans for the first kernel, the driver's time since the previous one for the others.
      if (report.phases.empty()) report.phases.emplace_back("run", report.seconds);
      report.phases.insert(report.phases.begin(), {"startup", started - ready});
      ready = env.seconds_since_start();
    } catch (...) {
      rethrow_one_line(name);  // e.g. an allocation that failed although the plan fitted
    }
    if (report.verified && !*report.verified) failed.push_back(name);
    results.add(find(name).declaration(), report);
  }
  results.judge(load.finish());
  on_root_collectively(env.comm(), [&] { results.write(cl.out_dir); });
  if (env.is_root()) {
    out << "\n";
    results.print_summary(out);
    out << "\nresults: " << cl.out_dir << "/results.json\n";
  }
  if (!failed.empty()) {
    std::string list;
    for (const auto& f : failed) list += (list.empty() ? "" : ", ") + f;
    throw RuntimeFailure("verification failed: " + list + " (see results.json)");
  }
  return kExitSuccess;
}

}  // namespace

int run_app(const Environment& env, int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  int status = kExitSuccess;
  std::string message;
  try {
    status = run_checked(env, argc, argv, out, err);
  } catch (const UsageError& e) {
    status = kExitUsage;
    message = e.what();
  } catch (const RuntimeFailure& e) {
    status = kExitFailure;
    message = e.what();
  } catch (const std::exception& e) {
    status = kExitFailure;
    message = std::string("runtime error: ") + e.what();
  }
  status = agree_on_status(env.comm(), status, message);
  termination::status_decided(status);
  if (status != kExitSuccess && env.is_root()) err << "kmini: error: " << message << std::endl;
  return status;
}

}  // namespace kmini
