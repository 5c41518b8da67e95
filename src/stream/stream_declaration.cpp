// The stream kernel, declared once: its deck keys, figure of merit, decks and run settings.
#include "stream/stream.hpp"

namespace kmini::stream {

const KernelDeclaration& declaration() {
  static const KernelDeclaration d = [] {
    const Config c;  // the defaults are the struct's own
    KernelDeclaration k;
    k.name = "stream";
    k.summary =
        "Device memory bandwidth: c = a + b and a = a + b in float64, c = a + b in int32 and c = exp(a) in float32; "
        "the best is the roof of the others";
    k.keys = {
        DeckKey::integer("n", static_cast<long long>(c.n), 1).with("elements per rank", "Length of each array"),
        DeckKey::choice_list("ops", c.ops, {"add", "exp"})
            .with("",
                  "Operations to time: add (c = a + b in float64 and int32, and a = a + b in place in float64, "
                  "24 B/element, which moves no write-allocate line) and exp (c = exp(a), float32)"),
        DeckKey::integer("repeat", static_cast<long long>(c.repeat), 1, 100000)
            .with("", "Timed repeats of each operation; the best one is reported"),
    };
    k.fom = {"bandwidth_bytes_per_s", "B/s", "bytes read and written by c = a + b (float64, 24 per element)",
             kRoofStream, true};
    k.decks = {"inputs/bench/stream.yaml"};
    k.scaling = {"n", Growth::PerRank, "n is each rank's array length"};
    k.figures = {{"add f64 bandwidth", {"ops", "add_f64", "bandwidth_bytes_per_s"}, "GB/s", 1e-9},
                 {"add i32 bandwidth", {"ops", "add_i32", "bandwidth_bytes_per_s"}, "GB/s", 1e-9},
                 {"exp f32 bandwidth", {"ops", "exp_f32", "bandwidth_bytes_per_s"}, "GB/s", 1e-9},
                 {"roof (best op)", {"roof_bandwidth_bytes_per_s"}, "GB/s", 1e-9}};
    k.small_run = {"stream.n=4096", "stream.repeat=1"};
    return k;
  }();
  return d;
}

}  // namespace kmini::stream
