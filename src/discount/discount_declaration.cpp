// The discount kernel, declared once: its deck keys, figure of merit, decks and run settings.
#include "discount/discount.hpp"

#include <string>

namespace kmini::discount {

namespace {

// discount.init.mult_by and discount.init.discount take the same three forms.
void add_input(std::vector<DeckKey>& keys, const std::string& name, long long seed, const std::string& shape) {
  const std::string p = "init." + name;
  keys.push_back(DeckKey::section(p, name + ": exactly one of arange, random or file (absent: arange)"));
  keys.push_back(DeckKey::section(p + ".arange", name + " = 0, 1, 2, ... in C order, like the original example"));
  keys.push_back(DeckKey::section(p + ".random", name + " with random values"));
  keys.push_back(DeckKey::integer(p + ".random.seed", seed, 0).with("", "Seed of the random values"));
  keys.push_back(DeckKey::text(p + ".file").with("", name + " from an f8 or f4 .npy file of shape " + shape));
}

}  // namespace

const KernelDeclaration& declaration() {
  static const KernelDeclaration d = [] {
    const Config c;  // the defaults are the struct's own
    KernelDeclaration k;
    k.name = "discount";
    k.summary = "cv[d][i][n] = multBy[i][n] * discount[d][i][n]: memory-bound, with and without transfers";
    auto& keys = k.keys;
    keys = {
        DeckKey::integer("dates", 100, 1)
            .with("dates", "D, the dates (split over the ranks); absent: from a file, else 100"),
        DeckKey::integer("ids", 4000, 1).with("ids", "M, the ids; absent: from a file, else 4000"),
        DeckKey::integer("terms", 5, 1).with("terms", "O, the terms; absent: from a file, else 5"),
        DeckKey::choice("precision", "double", {"double", "single"}).with("", "float64 or float32 arrays"),
        DeckKey::choice("reduce", "none", {"none", "per_date", "per_id"})
            .with("", "Also sum cv per date or per id, fused into the multiply (cv then not kept unless written)"),
        DeckKey::choice("policy", "auto", {"auto", "mdrange", "flat", "wave"})
            .with("",
                  "The multiply's iteration: a 3-D MDRange, one flat range, or one wave of threads striding over "
                  "it; auto: flat on GPUs, mdrange on hosts"),
        DeckKey::choice("loads", "auto", {"auto", "scalar", "vector"})
            .with("",
                  "vector: discount and cv as 16-byte packs (policy flat or wave, reduce none); auto: vector where it "
                  "can on CUDA builds, else scalar"),
        DeckKey::integer("repeat", static_cast<long long>(c.repeat), 1, 100000)
            .with("", "Timed repeats; the best one is reported"),
        DeckKey::choice("stores", "auto", {"auto", "regular", "streaming"})
            .with("", "cv's stores on hosts: streaming (non-temporal) or regular; auto decides by the problem's size"),
        DeckKey::section("init", "The inputs multBy (ids x terms) and discount (dates x ids x terms)"),
    };
    add_input(keys, "mult_by", 1, "ids x terms");
    add_input(keys, "discount", 2, "dates x ids x terms");
    const std::vector<DeckKey> rest = {
        DeckKey::section("write", "Output files (relative to --out unless absolute)"),
        DeckKey::text("write.cv").with("", "cv as a dates x ids x terms .npy file"),
        DeckKey::text("write.reduced").with("", "The per-date or per-id sums as a .npy file (needs reduce)"),
    };
    keys.insert(keys.end(), rest.begin(), rest.end());
    k.fom = {"bandwidth_bytes_per_s", "B/s", "bytes of multBy, discount and cv the multiply reads and writes",
             kRoofStream, true};
    k.decks = {"inputs/discount.yaml",          "inputs/bench/discount.yaml",
               "inputs/gpu/discount_flat.yaml", "inputs/gpu/discount_flat_vector.yaml",
               "inputs/gpu/discount_wave.yaml", "inputs/gpu/discount_wave_vector.yaml"};
    k.scaling = {"dates", Growth::Linear, "the dates are split over the ranks and the work is linear in them"};
    k.figures = {{"kernel bandwidth", {"kernel", "bandwidth_bytes_per_s_per_rank"}, "GB/s", 1e-9},
                 {"end-to-end seconds", {"end_to_end", "best_seconds"}, "s", 1.0}};
    k.small_run = {"discount.dates=8", "discount.ids=64", "discount.repeat=1"};
    k.profile_run = {"discount.dates=64", "discount.ids=65536", "discount.repeat=5"};
    return k;
  }();
  return d;
}

}  // namespace kmini::discount
