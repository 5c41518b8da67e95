// The stream kernel, declared once: its deck keys, figure of merit and decks.
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
    return k;
  }();
  return d;
}

}  // namespace kmini::stream
