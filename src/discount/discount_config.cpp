// The discount deck section: sizes, inputs, outputs, all validated before
// anything is allocated.
#include "core/checked_size.hpp"
#include "core/errors.hpp"
#include "core/format.hpp"
#include "core/partition.hpp"
#include "discount/discount.hpp"
#include "discount/discount_api.hpp"
#include "discount/impl/discount_kernels.hpp"

#include <mpi.h>

#include <ostream>

namespace kmini::discount {

namespace {

InputSpec read_input(const DeckNode& init, const std::string& key, std::size_t dims, const std::string& dims_text) {
  const KernelDeclaration& d = declaration();
  const std::string p = "init." + key;
  InputSpec spec;
  if (!init.has(key)) {
    init.child(d.key(p));  // absent: arange, like the original example
    return spec;
  }
  const DeckNode node = init.child(d.key(p));
  const std::string kind = node.one_of({"file", "arange", "random"});
  if (kind == "arange") {
    node.child(d.key(p + ".arange"));
  } else if (kind == "random") {
    spec.source = InputSpec::Source::Random;
    spec.seed = static_cast<std::uint64_t>(node.child(d.key(p + ".random")).integer(d.key(p + ".random.seed")));
  } else {
    spec.source = InputSpec::Source::File;
    spec.path = node.text(d.key(p + ".file"));  // present: one_of found it
    try {
      spec.file = npy::read_info(spec.path);
    } catch (const UsageError& e) {
      throw UsageError(node.located("file") + ": " + e.what());
    }
    if (spec.file.dtype != npy::DType::F8 && spec.file.dtype != npy::DType::F4)
      node.fail("file", std::string("an f8 or f4 .npy file; it holds ") + npy::short_name(spec.file.dtype));
    if (spec.file.shape.size() != dims)
      node.fail("file", "a " + std::to_string(dims) + "-D array (" + dims_text + "); it has shape " +
                            npy::shape_string(spec.file.shape));
  }
  return spec;
}

// A size from the deck, else from an input file, else the original example's
// (the declared default).
std::int64_t read_size(const DeckNode& s, const std::string& key, std::int64_t from_file) {
  const DeckKey& k = declaration().key(key);
  return from_file > 0 ? s.integer(k, from_file) : s.integer(k);
}

void require_file_shape(const DeckNode& init, const std::string& key, const InputSpec& spec, const npy::Shape& expected,
                        const std::string& names) {
  if (spec.source != InputSpec::Source::File || spec.file.shape == expected) return;
  init.child(key).fail("file", "shape " + npy::shape_string(expected) + " (" + names + " from the deck); " + spec.path +
                                   " has shape " + npy::shape_string(spec.file.shape));
}

// D * M * O * 2 * bytes must be a valid byte count.
void check_no_overflow(const DeckNode& s, const Config& c, std::initializer_list<std::uint64_t> factors) {
  if (!checked_product(factors)) s.fail(size_key(s, c), "dates * ids * terms * 2 * element size below 2^63 bytes");
}

}  // namespace

std::string size_key(const DeckNode& s, const Config& c) {
  std::string key = "dates";
  std::int64_t largest = 0;
  for (const auto& [k, v] :
       {std::pair<const char*, std::int64_t>{"dates", c.dates}, {"ids", c.ids}, {"terms", c.terms}})
    if (s.has(k) && v > largest) {
      key = k;
      largest = v;
    }
  return key;
}

DateSlice date_slice(std::int64_t dates, int rank, int ranks) {
  const BlockRange r = block_range(dates, rank, ranks);
  return {r.first, r.count};
}

ByteCount bytes_per_rank(const Config& c, std::int64_t local_dates) {
  const auto row = static_cast<std::uint64_t>(c.row()), d = static_cast<std::uint64_t>(local_dates);
  const std::uint64_t e = c.element_size();
  ByteCount bytes = ByteCount::of(row, e) + ByteCount::of(d, row * e);  // multBy + discount slice
  if (c.computes_cv()) bytes += ByteCount::of(d, row * e);
  if (c.reduce == Reduce::PerDate) bytes += ByteCount::of(d, ((row + kBlock - 1) / kBlock + 1) * e);
  if (c.reduce == Reduce::PerId) bytes += ByteCount::of(static_cast<std::uint64_t>(c.ids), e);
  return bytes;
}

Config read_config(const DeckNode& s, MPI_Comm) {
  Config c;
  const KernelDeclaration& d = declaration();
  const DeckNode init = s.child(d.key("init"));
  c.mult_by = read_input(init, "mult_by", 2, "ids x terms");
  c.discount = read_input(init, "discount", 3, "dates x ids x terms");
  const bool mb_file = c.mult_by.source == InputSpec::Source::File;
  const bool disc_file = c.discount.source == InputSpec::Source::File;

  // Sizes: from the deck, else from the files.
  const auto& ms = c.mult_by.file.shape;
  const auto& ds = c.discount.file.shape;
  c.dates = read_size(s, "dates", disc_file ? ds[0] : 0);
  c.ids = read_size(s, "ids", mb_file ? ms[0] : disc_file ? ds[1] : 0);
  c.terms = read_size(s, "terms", mb_file ? ms[1] : disc_file ? ds[2] : 0);
  require_file_shape(init, "mult_by", c.mult_by, {c.ids, c.terms}, "ids, terms");
  require_file_shape(init, "discount", c.discount, {c.dates, c.ids, c.terms}, "dates, ids, terms");

  c.single = s.choice(d.key("precision")) == "single";
  const std::string reduce = s.choice(d.key("reduce"));
  c.reduce = reduce == "per_date" ? Reduce::PerDate : reduce == "per_id" ? Reduce::PerId : Reduce::None;
  const std::string policy = s.choice(d.key("policy"));
  c.policy = policy == "flat"                                ? Policy::Flat
             : policy == "wave"                              ? Policy::Wave
             : policy == "mdrange"                           ? Policy::MDRange
             : default_policy() == ApplyParams::Policy::Flat ? Policy::Flat
                                                             : Policy::MDRange;
  c.repeat = s.integer(d.key("repeat"));
  const std::string stores = s.choice(d.key("stores"));
  c.stores = stores == "streaming" ? Stores::Streaming : stores == "regular" ? Stores::Regular : Stores::Auto;
  if (c.stores == Stores::Streaming && !kStreamingStores)
    s.fail("stores", "auto or regular: this build has no streaming stores (a host build for a CPU with AVX)");
  if (c.stores == Stores::Streaming && c.reduce != Reduce::None)
    s.fail("stores", "auto or regular with discount.reduce " + reduce + " (streaming stores are for reduce: none)");
  const std::string loads = s.choice(d.key("loads"));
  // auto: the build's default_loads() where packs can run (reduce none, policy flat
  // or wave, regular stores), else scalar.
  c.vector_loads =
      loads == "vector" || (loads == "auto" && default_loads() == ApplyParams::Loads::Vector &&
                            c.reduce == Reduce::None && c.policy != Policy::MDRange && c.stores != Stores::Streaming);
  if (c.vector_loads && c.reduce != Reduce::None)
    s.fail("loads", "auto or scalar with discount.reduce " + reduce + " (16-byte packs are for reduce: none)");
  if (c.vector_loads && c.policy == Policy::MDRange)
    s.fail("loads", "auto or scalar with discount.policy mdrange (16-byte packs run with policy flat or wave)");
  if (c.vector_loads && c.stores == Stores::Streaming)
    s.fail("loads", "auto or scalar with discount.stores streaming (streaming stores are their own kernel)");
  const DeckNode write = s.child(d.key("write"));
  c.write_cv = write.text(d.key("write.cv"));
  c.write_reduced = write.text(d.key("write.reduced"));
  if (!c.write_reduced.empty() && c.reduce == Reduce::None)
    write.fail("reduced", "no reduced output while discount.reduce is none");

  // The global array must be addressable (whether each rank's slice fits its
  // device is checked by the driver: memory_needs).
  check_no_overflow(s, c,
                    {static_cast<std::uint64_t>(c.dates), static_cast<std::uint64_t>(c.ids),
                     static_cast<std::uint64_t>(c.terms), 2 * c.element_size()});
  return c;
}

std::vector<MemoryNeed> DiscountKernel::memory_needs(const Environment& env, bool) const {
  return {{bytes_per_rank(config_, date_slice(config_.dates, 0, env.size()).count), size_setting_}};
}

void DiscountKernel::print_plan(std::ostream& os, const Environment& env) const {
  const Config& c = config_;
  const char* reduce[] = {"none", "per_date", "per_id"};
  os << "discount: D x M x O = " << c.dates << " x " << c.ids << " x " << c.terms << " ("
     << (c.single ? "single" : "double") << "), reduce = " << reduce[static_cast<int>(c.reduce)]
     << (c.computes_cv() ? ", cv computed" : ", cv not computed")
     << ", dates per rank <= " << date_slice(c.dates, 0, env.size()).count << ", device memory per rank <= "
     << format_number(bytes_per_rank(c, date_slice(c.dates, 0, env.size()).count).approx() / (1 << 20))
     << " MiB, repeat = " << c.repeat << "\n";
}

}  // namespace kmini::discount
