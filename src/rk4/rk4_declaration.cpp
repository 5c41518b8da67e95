// The rk4 kernel, declared once: its deck keys, figure of merit, decks and run settings.
#include "rk4/impl/rk4_detail.hpp"
#include "rk4/rk4.hpp"
#include "rk4/rk4_checkpoint.hpp"

#include <string>

namespace kmini::rk4 {

namespace {

// rk4.init.F and rk4.init.G take the same three forms.
void add_init(std::vector<DeckKey>& keys, const std::string& field, const std::vector<double>& fill) {
  const std::string p = "init." + field;
  keys.push_back(DeckKey::section(p, field + "(0): exactly one of fill, file or random (absent: fill [1, 0])"));
  keys.push_back(
      DeckKey::reals(p + ".fill", fill, 2).with("", "Every element of " + field + "(0) = re + i im, as [re, im]"));
  keys.push_back(DeckKey::text(p + ".file").with("", field + "(0) from an n x n complex64 or complex128 .npy file"));
  keys.push_back(DeckKey::section(p + ".random", field + "(0) with random real and imaginary parts"));
  keys.push_back(DeckKey::integer(p + ".random.seed", 1, 0).with("", "Seed of the random values"));
  keys.push_back(DeckKey::real(p + ".random.scale", 1.0, 0, detail::kMaxReal)
                     .with("", "Real and imaginary parts uniform in [-scale, scale]"));
}

// The figure of merit, the decks, how the kernel scales and its short runs.
void add_measurement(KernelDeclaration& k) {
  k.fom = {"element_steps_per_s", "element-step/s", "one element of F and G advanced by one RK4 step", kRoofStream,
           true};
  k.decks = {"inputs/rk4.yaml",
             "inputs/rk4_original.yaml",
             "inputs/bench/rk4.yaml",
             "inputs/bench/rk4_kerr.yaml",
             "inputs/gpu/rk4.yaml",
             "inputs/gpu/rk4_chunk4.yaml",
             "inputs/gpu/rk4_full_occupancy.yaml",
             "inputs/gpu/rk4_items.yaml",
             "inputs/gpu/rk4_per_stage.yaml",
             "inputs/gpu/rk4_per_stage_full_occupancy.yaml",
             "inputs/gpu/rk4_per_stage_items.yaml",
             "inputs/gpu/rk4_vector.yaml",
             "inputs/gpu/rk4_wave.yaml",
             "inputs/gpu/rk4_wave_full_occupancy.yaml"};
  k.scaling = {"n", Growth::Sqrt, "the fields are n x n elements, their rows split over the ranks"};
  k.figures = {{"element-steps/s", {"element_steps_per_s"}, "Gelem-steps/s", 1e-9},
               {"bytes per element-step", {"bytes_per_element_step"}, "B", 1.0},
               {"effective bandwidth", {"effective_bandwidth_bytes_per_s_per_rank"}, "GB/s", 1e-9}};
  k.small_run = {"rk4.n=64", "rk4.steps=4"};
  // Large enough that the step kernels' launches and their gaps dominate the trace.
  k.profile_run = {"rk4.n=4096", "rk4.steps=20", "rk4.precision=single", "rk4.coupling=per_step"};
}

}  // namespace

const KernelDeclaration& declaration() {
  static const KernelDeclaration d = [] {
    const Config c;  // the defaults are the structs' own
    const Problem& p = c.problem;
    KernelDeclaration k;
    k.name = "rk4";
    k.summary = "Classical RK4 for coupled complex fields F, G whose coupling delta = g * sum(F) is a global sum";
    auto& keys = k.keys;
    keys = {
        DeckKey::integer("n", static_cast<long long>(p.n), 1, static_cast<double>(kMaxN))
            .with("elements per side", "The fields are n x n complex values, rows split over the ranks"),
        DeckKey::real("dt", p.dt, 0, detail::kMaxReal, true).with("time units", "Time step"),
        DeckKey::integer("steps", static_cast<long long>(p.steps), 0).with("steps", "RK4 steps to take"),
        DeckKey::real("g", "auto", -detail::kMaxReal, detail::kMaxReal)
            .or_auto()
            .with("", "Coupling constant in delta = g * sum(F); auto is 1/n^2"),
        DeckKey::choice("coupling", "per_stage", {"per_step", "per_stage"})
            .with("", "per_stage recomputes delta at every RK stage (4th order); per_step once per step (1st order)"),
        DeckKey::reals("delta0", {0, 0}, 2)
            .with("", "delta(0) as [re, im] for coupling per_step (per_stage computes it from F(0))"),
        DeckKey::real("kerr", 0.0, -detail::kMaxReal, detail::kMaxReal)
            .with("", "Kerr term: dF/dt gains -i kerr |F|^2 F (nonzero makes the model nonlinear)"),
        DeckKey::choice("method", "auto", {"auto", "affine", "stages"})
            .with("", "affine: one fused update per step (linear model only); stages: the four stages; auto picks"),
        DeckKey::choice("precision", "single", {"single", "double"}).with("", "Precision of F and G (delta is double)"),
        DeckKey::choice("chunk", "auto", {"auto", "1", "4"}).with("", "Elements per thread in the step kernels"),
        DeckKey::choice("occupancy", "auto", {"auto", "full"})
            .with("", "full: launch bounds for every SM's full occupancy on GPUs (ignored on hosts)"),
        DeckKey::choice("grid", "auto", {"auto", "items", "wave"})
            .with("",
                  "items: a thread per element; wave: one wave of threads, each looping over elements with the "
                  "grid's stride; auto: wave on CUDA builds, else items"),
        DeckKey::choice("loads", "auto", {"auto", "scalar", "vector"})
            .with("",
                  "vector: the step kernels load and store 16-byte packs (4 single, 2 double elements); auto: vector "
                  "on CUDA builds where rk4.chunk is auto, else scalar"),
        DeckKey::section("init", "Initial values of F and G"),
    };
    add_init(keys, "F", {1, 0});
    add_init(keys, "G", {1, 0});
    const std::vector<DeckKey> rest = {
        DeckKey::section("write", "Output files (relative to --out unless absolute)"),
        DeckKey::output_path("write.delta", {".npy", ".csv"}).with("", "The delta history, steps + 1 values"),
        DeckKey::output_path("write.F", {".npy"}).with("", "F at the end, n x n complex"),
        DeckKey::output_path("write.G", {".npy"}).with("", "G at the end, n x n complex"),
        DeckKey::section("progress", "Progress lines during the time loop"),
        DeckKey::integer("progress.every", 0, 0).with("steps", "A progress line every this many steps (0: none)"),
        DeckKey::boolean("progress.invariant", false).with("", "Add the invariant's drift to each progress line"),
        DeckKey::integer("check_every", static_cast<long long>(c.check_every), 1)
            .with("steps", "Steps between checks that F and G are finite"),
        DeckKey::section("checkpoint", "Checkpoints for a restart"),
        DeckKey::integer("checkpoint.every", 0, 0).with("steps", "A checkpoint every this many steps (0: none)"),
        DeckKey::output_path("checkpoint.path", {".npy"}, "rk4_checkpoint.npy").with("", "The checkpoint file"),
        DeckKey::text("restart").with("", "Continue from this checkpoint (it must match the deck)"),
        DeckKey::integer("verify_steps", static_cast<long long>(c.verify_steps), 0)
            .with("steps", "Steps checked against the host reference when run.verify is true"),
    };
    keys.insert(keys.end(), rest.begin(), rest.end());
    add_measurement(k);
    return k;
  }();
  return d;
}

}  // namespace kmini::rk4
