#include "kernel/declaration.hpp"

#include "core/format.hpp"
#include "core/text.hpp"

#include <cctype>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace kmini {

Json FigureOfMerit::to_json() const {
  Json j = Json::object();
  j["name"] = name;
  j["unit"] = unit;
  j["counts"] = counts;
  j["roof"] = roof;
  j["higher_is_better"] = higher_is_better;
  return j;
}

const char* growth_name(Growth g) {
  switch (g) {
    case Growth::Linear: return "linear";
    case Growth::Sqrt: return "sqrt";
    case Growth::PerRank: return "per_rank";
  }
  return "linear";
}

Json Scaling::to_json(const std::string& section) const {
  Json j = Json::object();
  j["size_key"] = section + "." + size_key;
  j["growth"] = growth_name(growth);
  j["why"] = why;
  return j;
}

Json Figure::to_json() const {
  Json j = Json::object();
  j["label"] = label;
  j["path"] = Json::array_of(path);
  j["unit"] = unit;
  j["scale"] = scale;
  return j;
}

const DeckKey* KernelDeclaration::find(std::string_view k) const {
  for (const auto& d : keys)
    if (d.key == k) return &d;
  return nullptr;
}

const DeckKey& KernelDeclaration::key(std::string_view k) const {
  if (const DeckKey* d = find(k)) return *d;
  throw std::logic_error(name + ": no deck key " + std::string(k) + " is declared");
}

Json KernelDeclaration::to_json() const {
  Json j = Json::object();
  j["name"] = name;
  j["summary"] = summary;
  Json ks = Json::array();
  for (const auto& k : keys) ks.push_back(k.to_json(name));
  j["keys"] = ks;
  j["fom"] = fom.name.empty() ? Json() : fom.to_json();
  j["decks"] = Json::array_of(decks);
  j["scaling"] = scaling.size_key.empty() ? Json() : scaling.to_json(name);
  Json fs = Json::array();
  for (const auto& f : figures) fs.push_back(f.to_json());
  j["figures"] = fs;
  j["small_run"] = Json::array_of(small_run);
  j["profile_run"] = Json::array_of(profile_run);
  return j;
}

KernelDeclaration run_declaration(const std::vector<std::string>& kernel_names) {
  KernelDeclaration d;
  d.name = "run";
  d.summary = "What a run does: which kernels, in which order, verified or not";
  d.keys = {
      DeckKey::choice_list("kernels", kernel_names, kernel_names)
          .with("", "The kernels to run, in this order (each kernel's own section configures it)"),
      DeckKey::boolean("verify", true).with("", "Check every kernel against its independent host reference"),
      DeckKey::integer("seed", 12345, 0).with("", "Seed of the random inputs a kernel's deck does not seed itself"),
  };
  return d;
}

namespace {

std::string value_text(const Json& v) {
  if (v.is_null()) return "";
  if (v.type() == Json::Type::String) return v.as_string();
  std::string s = v.dump();
  return s;
}

std::string accepts(const DeckKey& k) {
  using K = KeyRule::Kind;
  const KeyRule& r = k.rule;
  const bool no_max = r.max >= 9.2e18 || r.max >= std::numeric_limits<double>::max();
  std::string s;
  switch (r.kind) {
    case K::Section: s = "section"; break;
    case K::Integer:
      s = "integer " +
          (no_max ? ">= " + format_g(r.min, 6) : "in [" + format_g(r.min, 6) + ", " + format_g(r.max, 6) + "]");
      break;
    case K::Real:
      s = std::string("number ") + (r.min_exclusive ? "> " : ">= ") + format_g(r.min, 6) +
          (no_max ? "" : ", <= " + format_g(r.max, 6));
      break;
    case K::ByteSize: s = "size (bytes, or 512M, 4GiB, ...) <= " + format_g(r.max, 6); break;
    case K::Boolean: s = "true \\| false"; break;
    case K::Choice: s = join(r.options, " \\| "); break;
    case K::Text: s = "text"; break;
    case K::OutputPath: s = "path ending in " + join(r.options, " or "); break;
    case K::Reals: s = "list of " + std::to_string(r.count) + " numbers"; break;
    case K::RealList: s = "list of at most " + std::to_string(r.count) + " numbers >= " + format_g(r.min, 6); break;
    case K::ChoiceList: s = "list of " + join(r.options, " \\| "); break;
  }
  if (k.auto_word) s += ", or auto";
  if (k.required) s += " (required)";
  return s;
}

// What a scaling study does to the size key `key` (a markdown code span).
std::string growth_words(Growth g, const std::string& key) {
  switch (g) {
    case Growth::Linear: return "a weak study grows " + key + " in proportion to the ranks";
    case Growth::Sqrt: return "a weak study grows " + key + " as the square root of the ranks";
    case Growth::PerRank: return "a weak study keeps " + key + " and a strong one divides it by the ranks";
  }
  return "";
}

}  // namespace

std::string run_command(const std::string& kernel, const std::vector<std::string>& sets) {
  auto arg = [](const std::string& a) {
    for (char c : a)
      if (!std::isalnum(static_cast<unsigned char>(c)) && std::string("_.=-+/:,").find(c) == std::string::npos)
        return "'" + a + "'";
    return a;
  };
  std::string s = "kmini --set " + arg("run.kernels=[" + kernel + "]");
  for (const auto& set : sets) s += " --set " + arg(set);
  return s;
}

std::string declaration_markdown(const KernelDeclaration& d) {
  std::ostringstream os;
  os << "## " << d.name << "\n\n" << d.summary << ".\n\n";
  if (!d.fom.name.empty())
    os << "Figure of merit: **" << d.fom.name << "** (" << d.fom.unit << ", " << d.fom.counts << "), against the "
       << d.fom.roof << " roof measured in the same run.\n\n";
  if (!d.decks.empty()) {
    os << "Decks:";
    for (const auto& deck : d.decks) os << " [`" << deck << "`](../" << deck << ")";
    os << "\n\n";
  }
  if (!d.scaling.size_key.empty())
    os << "Scaling: " << growth_words(d.scaling.growth, "`" + d.name + "." + d.scaling.size_key + "`") << ": "
       << d.scaling.why << ".\n\n";
  if (!d.figures.empty()) {
    os << "Reported besides the figure of merit:";
    for (std::size_t i = 0; i < d.figures.size(); ++i)
      os << (i ? "," : "") << " " << d.figures[i].label << " (`" << join(d.figures[i].path, ".") << "`, "
         << d.figures[i].unit << ")";
    os << ".\n\n";
  }
  if (!d.small_run.empty()) os << "Small run: `" << run_command(d.name, d.small_run) << "`.\n\n";
  if (!d.profile_run.empty()) os << "Profile run: `" << run_command(d.name, d.profile_run) << "`.\n\n";
  os << "| key | accepts | default | unit | meaning |\n|---|---|---|---|---|\n";
  for (const auto& k : d.keys)
    os << "| `" << d.name << "." << k.key << "` | " << accepts(k) << " | " << value_text(k.fallback) << " | " << k.unit
       << " | " << k.help << " |\n";
  os << "\n";
  return os.str();
}

}  // namespace kmini
