// The registry: every kernel kmini can run, in documentation order.
#include "driver/kernels.hpp"
#include "discount/discount.hpp"
#include "gram/gram.hpp"
#include "rk4/rk4.hpp"
#include "stream/stream.hpp"

namespace kmini {

std::vector<std::unique_ptr<Kernel>> make_all_kernels() {
  std::vector<std::unique_ptr<Kernel>> k;
  k.push_back(std::make_unique<stream::StreamKernel>());
  k.push_back(std::make_unique<rk4::Rk4Kernel>());
  k.push_back(std::make_unique<discount::DiscountKernel>());
  k.push_back(std::make_unique<gram::GramKernel>());
  return k;
}

RunSettings configure_all(Deck& deck, std::vector<std::unique_ptr<Kernel>>& kernels, const Environment& env) {
  std::vector<std::string> names;
  for (const auto& k : kernels) names.push_back(k->name());
  DeckNode root = deck.root();
  DeckNode run = root.child("run");
  RunSettings s;
  s.order = run.choice_list("kernels", names, names);
  s.verify = run.boolean("verify", true);
  s.seed = run.integer("seed", 12345, 0);
  for (auto& k : kernels) k->configure(root.child(k->name()), env);
  return s;
}

std::function<double(RunContext&)> bandwidth_probe() {
  // 8 Mi elements (192 MiB for a, b, c) is out of every cache the probe met, best of 5.
  return [](RunContext& ctx) { return stream::measure_add_bandwidth(ctx, 1 << 23, 5); };
}

}  // namespace kmini
