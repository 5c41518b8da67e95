// The registry: every kernel kmini can run, in documentation order.
#include "driver/kernels.hpp"
#include "discount/discount.hpp"
#include "gram/gram.hpp"
#include "rk4/rk4.hpp"
#include "stream/stream.hpp"

#include "core/errors.hpp"
#include "core/format.hpp"
#include "core/text.hpp"
#include "version.hpp"

#include <sstream>

namespace kmini {

std::vector<std::unique_ptr<Kernel>> make_all_kernels() {
  std::vector<std::unique_ptr<Kernel>> k;
  k.push_back(std::make_unique<stream::StreamKernel>());
  k.push_back(std::make_unique<rk4::Rk4Kernel>());
  k.push_back(std::make_unique<discount::DiscountKernel>());
  k.push_back(std::make_unique<gram::GramKernel>());
  return k;
}

std::vector<std::string> kernel_names(const std::vector<std::unique_ptr<Kernel>>& kernels) {
  std::vector<std::string> names;
  for (const auto& k : kernels) names.push_back(k->name());
  return names;
}

RunSettings configure_all(Deck& deck, std::vector<std::unique_ptr<Kernel>>& kernels, const Environment& env) {
  const KernelDeclaration run_keys = run_declaration(kernel_names(kernels));
  DeckNode root = deck.root();
  DeckNode run = root.child("run");
  RunSettings s;
  s.order = run.choice_list(run_keys.key("kernels"));
  s.verify = run.boolean(run_keys.key("verify"));
  s.seed = run.integer(run_keys.key("seed"));
  for (auto& k : kernels) k->configure(root.child(k->name()), env);
  return s;
}

namespace {

std::string describe_text(const KernelDeclaration& d) {
  std::ostringstream os;
  os << d.name << ": " << d.summary << "\n";
  if (!d.fom.name.empty())
    os << "  figure of merit: " << d.fom.name << " (" << d.fom.unit << ": " << d.fom.counts << "; roof: " << d.fom.roof
       << ")\n";
  for (const auto& deck : d.decks) os << "  deck: " << deck << "\n";
  if (!d.scaling.size_key.empty())
    os << "  scaling: " << d.name << "." << d.scaling.size_key << " grows " << growth_name(d.scaling.growth)
       << " in a weak study (" << d.scaling.why << ")\n";
  for (const auto& f : d.figures)
    os << "  reports: " << f.label << " (" << join(f.path, ".") << ", " << f.unit << ")\n";
  if (!d.small_run.empty()) os << "  small run: " << run_command(d.name, d.small_run) << "\n";
  if (!d.profile_run.empty()) os << "  profile run: " << run_command(d.name, d.profile_run) << "\n";
  for (const auto& k : d.keys) {
    if (k.rule.kind == KeyRule::Kind::Section) continue;
    const Json j = k.to_json(d.name);
    std::string def = k.fallback.is_null()                      ? (k.required ? "required" : "none")
                      : k.fallback.type() == Json::Type::String ? k.fallback.as_string()
                                                                : k.fallback.dump(0);
    os << "  " << j.find("key")->as_string() << " (" << kind_name(k.rule.kind) << ", default " << def
       << (k.unit.empty() ? "" : ", " + k.unit) << "): " << k.help << "\n";
  }
  return os.str();
}

}  // namespace

std::string describe(const std::string& kernel, const std::string& format) {
  const auto kernels = make_all_kernels();
  std::vector<KernelDeclaration> all;
  all.push_back(run_declaration(kernel_names(kernels)));
  for (const auto& k : kernels) all.push_back(k->declaration());
  std::vector<const KernelDeclaration*> chosen;
  for (const auto& d : all)
    if (kernel.empty() || d.name == kernel) chosen.push_back(&d);
  if (chosen.empty()) {
    std::vector<std::string> names;
    for (const auto& d : all) names.push_back(d.name);
    throw UsageError("describe: unknown kernel " + quoted_value(kernel) + " (expected one of " + join(names, ", ") +
                     ")");
  }
  if (format == "json") {
    Json j = Json::object();
    j["schema_version"] = 1;
    j["kmini_version"] = kVersion;
    Json list = Json::array();
    for (const auto* d : chosen) list.push_back(d->to_json());
    j["kernels"] = list;
    return j.dump(2) + "\n";
  }
  std::string text;
  if (format == "markdown" && kernel.empty())
    text =
        "# Deck reference\n\n"
        "Every key of every kernel's deck section: what it accepts, its default, its unit and what it means. "
        "Generated from the kernels' declarations by `kmini describe --markdown > docs/deck-reference.md` "
        "(a test fails when this page is stale); `kmini describe --json` gives the same for scripts. A key "
        "`--set` overrides by its dotted path, e.g. `--set rk4.steps=500`.\n\n";
  for (const auto* d : chosen) text += format == "markdown" ? declaration_markdown(*d) : describe_text(*d);
  return text;
}

std::function<double(RunContext&)> bandwidth_probe(const std::string& kernel) {
  // 8 Mi elements (192 MiB for a, b, c) is out of every cache the probe met, best of 5.
  const std::string prefix = "kmini::" + kernel + "::roof_probe";
  return [prefix](RunContext& ctx) { return stream::measure_add_bandwidth(ctx, 1 << 23, 5, prefix); };
}

}  // namespace kmini
