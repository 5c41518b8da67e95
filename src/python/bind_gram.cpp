// kmini._kmini.gram: C = A A^T (or A B^T) of 0/1 matrices, with the CLI's
// outputs (similarities, top-k, pairs, counts at thresholds). The input
// forms: bind_gram_input.cpp; write='s files: bind_gram_write.cpp.
#include "bind_gram.hpp"
#include "bindings.hpp"
#include "convert.hpp"
#include "core/collective.hpp"
#include "core/device_memory.hpp"
#include "core/format.hpp"
#include "core/text.hpp"
#include "cuda_array.hpp"
#include "gram/distributed/gram_over_ranks.hpp"
#include "gram/gram.hpp"
#include "gram/gram_api.hpp"
#include "io/atomic_file.hpp"
#include "io/npy.hpp"
#include "io/output_files.hpp"

#include <pybind11/stl.h>
#include "runtime.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>

namespace kmini::python {

namespace {

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

// The keyword arguments that are gram's deck keys: their defaults, limits,
// options and help are the declaration's (gram_declaration.cpp).
const std::vector<Argument> kArguments = {{"similarity", "similarity"},
                                          {"top_k", "write.top_k.k"},
                                          {"pairs_min", "write.pairs.min"},
                                          {"count_at_least", "write.count_at_least"},
                                          {"triangle", "triangle"},
                                          {"memory_budget", "memory_budget"},
                                          {"slice_rows", "row_slice"},
                                          {"distribution", "distribution"},
                                          {"ring_schedule", "ring_schedule"},
                                          {"empty_similarity", "empty_similarity"},
                                          {"top_k_min", "write.top_k.min"},
                                          {"tversky_alpha", "tversky.alpha"},
                                          {"tversky_beta", "tversky.beta"},
                                          {"exclude_self", "exclude_self"},
                                          {"prune", "prune"}};

// gram's options: the declared arguments' and its own (not deck keys).
const std::vector<std::string> kOptions = option_names(kArguments, {"cols", "dense", "summary", "ids", "target_ids"});

const DeckKey& key(const char* k) { return kmini::gram::declaration().key(k); }

// The structured dtype of the CLI's .npy records (gram_sparse.cpp), little-endian.
py::dtype record_dtype(bool pairs, kmini::gram::Similarity s) {
  const char* value = s == kmini::gram::Similarity::Counts ? "<i4" : "<f4";
  py::list fields;
  if (pairs) fields.append(py::make_tuple("i", "<i8"));
  fields.append(py::make_tuple("j", "<i8"));
  fields.append(py::make_tuple("value", value));
  return py::dtype::from_args(fields);
}

// `bytes` (whole records) as a new numpy array of `dtype` and `shape`.
py::array records_array(const std::vector<char>& bytes, const py::dtype& dtype, std::vector<py::ssize_t> shape) {
  py::array out(dtype, shape);
  if (!bytes.empty()) std::memcpy(out.mutable_data(), bytes.data(), bytes.size());
  return out;
}

// gram's arguments but the arrays' memory: the library's parameters.
kmini::gram::ComputeParams gram_params(const Options& o) {
  kmini::gram::ComputeParams p;
  const std::string similarity = declared_choice_arg(o["similarity"], "similarity", key("similarity"));
  kmini::gram::similarity_from_name(similarity, p.similarity);  // a declared name or alias
  const std::string triangle = declared_choice_arg(o["triangle"], "triangle", key("triangle"));
  p.dense = bool_arg(o["dense"], "dense");
  p.prune = bool_arg(o["prune"], "prune");
  p.upper = triangle == "upper";
  using kmini::gram::Distribution;
  using kmini::gram::RingSchedule;
  const std::string distribution = declared_choice_arg(o["distribution"], "distribution", key("distribution"));
  for (Distribution d : {Distribution::Replicated, Distribution::Ring, Distribution::Auto})
    if (distribution == kmini::gram::distribution_name(d)) p.distribution = d;
  const std::string schedule = declared_choice_arg(o["ring_schedule"], "ring_schedule", key("ring_schedule"));
  for (RingSchedule r : {RingSchedule::Auto, RingSchedule::Slices, RingSchedule::Circulant})
    if (schedule == kmini::gram::ring_schedule_name(r)) p.ring_schedule = r;
  return p;
}

// tversky_alpha= and tversky_beta=, as the deck's gram.tversky: both with
// similarity='tversky', and only then; checked by the deck's rule.
void tversky_options(kmini::gram::ComputeParams& p, bool two, const Options& o) {
  const py::object &alpha = o["tversky_alpha"], &beta = o["tversky_beta"];
  if (p.similarity != kmini::gram::Similarity::Tversky) {
    for (const char* name : {"tversky_alpha", "tversky_beta"})
      if (!o[name].is_none())
        throw py::value_error(std::string(name) + ": got " + py::str(py::repr(o[name])).cast<std::string>() +
                              " with similarity='" + o["similarity"].cast<std::string>() +
                              "', expected None (they are the weights of similarity='tversky')");
    return;
  }
  for (const char* name : {"tversky_alpha", "tversky_beta"})
    if (o[name].is_none())
      throw py::value_error(std::string(name) + ": got None with similarity='tversky', expected its weight (>= 0)");
  p.tversky_alpha = declared_real_arg(alpha, "tversky_alpha", key("tversky.alpha"));
  p.tversky_beta = declared_real_arg(beta, "tversky_beta", key("tversky.beta"));
  const std::string expected =
      kmini::gram::tversky_problem(p.similarity, {p.empty_similarity, p.tversky_alpha, p.tversky_beta}, two);
  if (!expected.empty())
    throw py::value_error("tversky_beta: got " + py::str(py::repr(beta)).cast<std::string>() +
                          " with tversky_alpha=" + py::str(py::repr(alpha)).cast<std::string>() +
                          (two ? "" : " and B=None") + ", expected " + expected);
}

// exclude_self=, as the deck's gram.exclude_self: with B, both Fingerprints,
// whose IDs (ids=, target_ids=: the package passes them) are matched as the
// CLI matches its FPS files' (gram::self_columns).
void exclude_self_option(kmini::gram::ComputeParams& p, bool two, const Options& o) {
  if (!bool_arg(o["exclude_self"], "exclude_self")) return;
  if (!two)
    throw py::value_error(
        "exclude_self: got True with B=None, expected False (with one input no row is its "
        "own partner)");
  if (o["ids"].is_none() || o["target_ids"].is_none())
    throw py::value_error("exclude_self: got True, expected False, or Fingerprints as A and B (it matches their IDs)");
  if (p.top_k == 0 && !p.pairs && p.count_at_least.empty())
    throw py::value_error(
        "exclude_self: got True, expected False without top_k, pairs_min or count_at_least (what "
        "it leaves out of)");
  p.self_cols = kmini::gram::self_columns(o["ids"].cast<std::vector<std::string>>(),
                                          o["target_ids"].cast<std::vector<std::string>>());
}

// prune=, as the deck's gram.prune (the same rule, prune_refusal): with B,
// no dense C or summary, every output with a minimum above 0, replicated.
void prune_option(const kmini::gram::ComputeParams& p, bool two) {
  if (!p.prune) return;
  std::vector<double> minimums = p.count_at_least;
  if (p.pairs) minimums.push_back(p.pairs_min);
  if (p.top_k > 0) minimums.push_back(p.top_k_min);
  using kmini::gram::PruneRefusal;
  switch (kmini::gram::prune_refusal(two, p.dense || p.summary, minimums,
                                     p.distribution == kmini::gram::Distribution::Ring)) {
    case PruneRefusal::OneInput:
      throw py::value_error("prune: got True with B=None, expected False (it prunes queries against targets)");
    case PruneRefusal::AllOfC:
      throw py::value_error("prune: got True with dense=True, expected False, or dense=False (C needs every value)");
    case PruneRefusal::NoOutput:
      throw py::value_error("prune: got True, expected False without top_k, pairs_min or count_at_least");
    case PruneRefusal::NoMinimum:
      throw py::value_error("prune: got True, expected False unless pairs_min, top_k_min, count_at_least are above 0");
    case PruneRefusal::Ring:
      throw py::value_error("prune: got True with distribution='ring', expected False (it runs replicated)");
    case PruneRefusal::None: return;
  }
}

// The outputs asked for beyond C: top_k, pairs_min, count_at_least, slice_rows.
void gram_outputs(kmini::gram::ComputeParams& p, std::int64_t rows_b, bool two, const Options& o) {
  const py::object &top_k = o["top_k"], &pairs_min = o["pairs_min"];
  const py::object &count_at_least = o["count_at_least"], &slice_rows = o["slice_rows"];
  if (!top_k.is_none()) p.top_k = integer_arg(top_k, "top_k", 1, std::max<std::int64_t>(1, rows_b - (two ? 0 : 1)));
  if (!pairs_min.is_none()) {
    p.pairs = true;
    p.pairs_min = declared_real_arg(pairs_min, "pairs_min", key("write.pairs.min"));
  }
  if (!count_at_least.is_none())
    p.count_at_least = real_list_arg(count_at_least, "count_at_least", key("write.count_at_least").rule.count);
  const auto reachable = [&](const std::string& name, double t) {
    const std::string expected = kmini::gram::unreachable_threshold(p.similarity, t);
    if (!expected.empty())
      throw py::value_error(name + ": got " + kmini::format_g(t, 17) + " with similarity='" +
                            o["similarity"].cast<std::string>() + "', expected " + expected);
  };
  tversky_options(p, two, o);
  exclude_self_option(p, two, o);
  prune_option(p, two);
  if (p.pairs) reachable("pairs_min", p.pairs_min);
  for (std::size_t i = 0; i < p.count_at_least.size(); ++i)
    reachable("count_at_least[" + std::to_string(i) + "]", p.count_at_least[i]);
  const bool auto_rows = slice_rows.is_none() || (py::isinstance<py::str>(slice_rows) && key("row_slice").auto_word &&
                                                  choice_arg(slice_rows, "slice_rows", {"auto"}) == "auto");
  if (!auto_rows)
    p.slice_rows =
        integer_arg(slice_rows, "slice_rows", static_cast<std::int64_t>(key("row_slice").rule.min), kMaxInt64);
  // As the deck's check: the circulant computes the outputs that reduce per row.
  if (p.ring_schedule == kmini::gram::RingSchedule::Circulant && (p.dense || p.pairs))
    throw py::value_error(std::string("ring_schedule: got 'circulant' with ") + (p.dense ? "dense=True" : "pairs_min") +
                          ", expected 'slices' or 'auto' (the circulant computes top_k and count_at_least only)");
}

// empty_similarity= and top_k_min=, as the deck's gram.empty_similarity and
// gram.write.top_k.min (a minimum no value reaches refused as pairs_min is).
void search_options(kmini::gram::ComputeParams& p, const Options& o) {
  p.empty_similarity = declared_real_arg(o["empty_similarity"], "empty_similarity", key("empty_similarity"));
  p.top_k_min = declared_real_arg(o["top_k_min"], "top_k_min", key("write.top_k.min"));
  const std::string expected = kmini::gram::unreachable_threshold(p.similarity, p.top_k_min);
  if (!expected.empty())
    throw py::value_error("top_k_min: got " + kmini::format_g(p.top_k_min, 17) + " with similarity='" +
                          o["similarity"].cast<std::string>() + "', expected " + expected);
}

// Memory as in the CLI: dense C only when asked for and within the budget;
// else slices of as many rows as the budget allows (bisection: the bytes
// grow with the slice height), so a top-k of 10^5 rows never builds C.
struct GramMemory {
  const kmini::gram::ComputeParams& p;
  const kmini::gram::ApiMatrix& a;
  const kmini::gram::ApiMatrix* b;
  double budget = 0, dense_bytes = 0;
  double need(std::int64_t h) const {
    kmini::gram::ComputeParams q = p;
    q.slice_rows = h;
    return dense_bytes + double(kmini::gram::compute_device_bytes(a, b, q));
  }
  std::string too_much(std::int64_t h, const std::string& advice) const {
    const std::int64_t rows_b = b ? b->rows : a.rows;
    const std::string what =
        p.dense ? "dense C of " + std::to_string(a.rows) + " x " + std::to_string(rows_b) +
                      (p.similarity == kmini::gram::Similarity::Counts ? " int32 (" : " float32 (") +
                      kmini::format_bytes(dense_bytes) + ") and slices of " + std::to_string(h) + " rows need "
        : h == 1 ? std::string("the packed inputs and a slice of one row need ")
                 : "slices of " + std::to_string(h) + " rows need ";
    return "gram: " + what + kmini::format_bytes(need(h)) + ", more than memory_budget " + kmini::format_bytes(budget) +
           "; nothing was allocated" + advice;
  }
  // The slice height: the caller's (checked against the budget), else the tallest that fits.
  void fit(kmini::gram::ComputeParams& params) const {
    if (params.slice_rows > 0 && a.rows > 0 && need(std::min(params.slice_rows, a.rows)) > budget)
      throw py::value_error("slice_rows: got " + std::to_string(params.slice_rows) + ", expected a height within " +
                            "memory_budget (" + too_much(std::min(params.slice_rows, a.rows), "") + ")");
    if (params.slice_rows > 0 || a.rows == 0 || need(a.rows) <= budget) return;
    std::int64_t lo = 1, hi = a.rows;  // need(hi) > budget
    if (need(lo) > budget) memory_error(too_much(1, p.dense ? " (dense=False computes in slices)" : ""));
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (need(mid) <= budget ? lo : hi) = mid;
    }
    params.slice_rows = lo;
  }
};

// memory_budget in bytes: the caller's, or the CLI's auto (half the memory available).
double budget_of(const py::object& budget_obj) {
  return budget_obj.is_none() || (py::isinstance<py::str>(budget_obj) && budget_obj.cast<std::string>() == "auto")
             ? 0.5 * double(kmini::query_device_memory().available)
             : byte_size_arg(budget_obj, "memory_budget", key("memory_budget").rule.max);
}

// Dense C where the inputs are: a numpy array, or with device inputs a
// kmini.DeviceArray; `out` gets its data.
py::object dense_array(kmini::gram::ComputeParams& p, std::int64_t rows, std::int64_t rows_b, std::int64_t elements,
                       bool on_device, void*& out) {
  if (!p.dense) return py::none();
  const std::vector<py::ssize_t> shape =
      p.upper ? std::vector<py::ssize_t>{elements} : std::vector<py::ssize_t>{rows, rows_b};
  const bool counts = p.similarity == kmini::gram::Similarity::Counts;
  if (on_device) {
    DeviceArray d(shape, counts ? typestr_of<std::int32_t>() : typestr_of<float>());
    out = d.data();
    p.dense_on_device = true;
    return py::cast(std::move(d));
  }
  py::array h = counts ? py::array(py::array_t<std::int32_t>(shape)) : py::array(py::array_t<float>(shape));
  out = h.mutable_data();
  return h;
}

// The library call, its values checked first, allocation failures as MemoryError.
kmini::gram::ComputeResult run_gram(const GramInput& a, const std::optional<GramInput>& b,
                                    const kmini::gram::ComputeParams& p, const GramMemory& memory, void* dense_out) {
  KernelCall call("gram");
  if (a.m.on_device || (b && b->m.on_device)) synchronize_producers();
  check_gram_values("A", a.m);  // bytes: any value but 0 and 1; packed: bits past cols
  if (b) check_gram_values("B", b->m);
  const std::int64_t h = p.slice_rows ? p.slice_rows : a.m.rows;
  try {
    return kmini::gram::compute(kmini::gram::ApiExec(), a.m, b ? &b->m : nullptr, p, dense_out);
  } catch (const std::bad_alloc&) {
    memory_error(memory.too_much(h, " (an allocation failed)"));
  } catch (const std::runtime_error& e) {  // Kokkos' failed allocations
    if (std::string(e.what()).find("alloc") == std::string::npos) throw;
    memory_error("gram: an allocation failed (" + first_line(e.what()) + ") planning " +
                 kmini::format_bytes(memory.need(h)) + " for slices of " + std::to_string(h) + " rows");
  }
  return {};
}

// The call's result as the package returns it: C, the records, the counts.
py::object result_namespace(const py::object& C, const kmini::gram::ComputeResult& r,
                            const kmini::gram::ComputeParams& p, std::int64_t rows) {
  py::object ns = py::module_::import("types").attr("SimpleNamespace")();
  ns.attr("C") = C;
  ns.attr("top_k") = p.top_k > 0 ? py::object(records_array(r.top_k, record_dtype(false, p.similarity),
                                                            {rows, static_cast<py::ssize_t>(p.top_k)}))
                                 : py::object(py::none());
  ns.attr("pairs") = p.pairs ? py::object(records_array(r.pairs, record_dtype(true, p.similarity), {r.pair_count}))
                             : py::object(py::none());
  ns.attr("counts") =
      p.count_at_least.empty()
          ? py::object(py::none())
          : py::object(py::array_t<std::int64_t>(static_cast<py::ssize_t>(r.counts.size()), r.counts.data()));
  ns.attr("row_counts") = py::array_t<std::int32_t>(static_cast<py::ssize_t>(r.row_counts.size()), r.row_counts.data());
  ns.attr("slices") = r.slices;
  ns.attr("summary") = p.summary ? py::object(py::str(r.summary)) : py::object(py::none());
  const bool ring = r.distribution == kmini::gram::Distribution::Ring;
  ns.attr("distribution") = kmini::gram::distribution_name(r.distribution);
  ns.attr("ring_schedule") =
      ring ? py::object(py::str(kmini::gram::ring_schedule_name(r.ring_schedule))) : py::object(py::none());
  return ns;
}

// cols= as the columns of packed rows, or -1 (unpacked elements).
std::int64_t cols_of(const Options& o) {
  return o["cols"].is_none() ? -1 : integer_arg(o["cols"], "cols", 0, kMaxInt64 / 2);
}

py::object gram(const py::object& a_obj, const py::object& b_obj, const py::object& options) {
  check_running("gram");
  const Options o(options, "gram", kOptions);
  // One process holds the whole problem whatever the distribution (a ring of one rank).
  kmini::gram::ComputeParams p = gram_params(o);
  p.summary = o["summary"].cast<bool>();
  search_options(p, o);
  const std::int64_t cols = cols_of(o);
  const GramInput a = gram_input(a_obj, "A", cols);
  std::optional<GramInput> b;
  if (!b_obj.is_none()) {
    b = gram_input(b_obj, "B", cols);
    if (b->m.cols != a.m.cols)
      throw py::value_error("B: " + std::to_string(b->m.cols) + " columns, expected " + std::to_string(a.m.cols) +
                            " (the columns of A)");
    if (p.upper) throw py::value_error("triangle: got 'upper' with B, expected 'full' (A B^T has no symmetry)");
  }
  const std::int64_t rows_b = b ? b->m.rows : a.m.rows;
  gram_outputs(p, rows_b, b.has_value(), o);
  // Sizes from the arguments, checked before they are multiplied.
  const kmini::gram::ApiMatrix* bm = b ? &b->m : nullptr;
  const std::int64_t dense_elements = p.dense ? checked_bytes(a.m.rows, rows_b, "gram: dense C of rows x targets") : 0;
  checked_bytes(dense_elements, 4, "gram: dense C");
  checked_bytes(a.m.rows, std::max<std::int64_t>(p.top_k, 1) * 16, "gram: top_k lists of rows x k");
  GramMemory memory{p, a.m, bm};
  memory.budget = budget_of(o["memory_budget"]);
  memory.dense_bytes = 4.0 * double(kmini::gram::dense_elements(a.m, bm, p));
  memory.fit(p);
  void* dense_out = nullptr;
  ensure_kokkos();
  py::object C = dense_array(p, a.m.rows, rows_b, kmini::gram::dense_elements(a.m, bm, p),
                             a.m.on_device || (b && b->m.on_device), dense_out);
  Stop stop;
  p.interrupted = stop.check();  // between slices
  const kmini::gram::ComputeResult r = run_gram(a, b, p, memory, dense_out);
  stop.raise_if_stopped("gram");
  return result_namespace(C, r, p, a.m.rows);
}

// --- comm=: one problem over the ranks of an mpi4py communicator ----------

using kmini::gram::OverRanks;

// Over ranks the inputs are host arrays (each rank's rows are gathered).
GramInput host_input(const py::object& obj, const char* name, std::int64_t cols) {
  if (has_cuda_array_interface(obj))
    throw py::type_error(std::string(name) + ": a device array, expected a numpy array with comm=");
  return gram_input(obj, name, cols);
}

// This rank's arrays (held in `keep`) and choices, checked on their own.
void convert_own(OverRanks& o, std::vector<GramInput>& keep, const py::object& a_obj, const py::object& b_obj,
                 const Options& options) {
  o.p = gram_params(options);
  const std::int64_t cols = cols_of(options);
  if (!b_obj.is_none() && o.p.upper)
    throw py::value_error("triangle: got 'upper' with B, expected 'full' (A B^T has no symmetry)");
  keep.push_back(host_input(a_obj, "A", cols));
  o.a = keep.back().m;
  if (b_obj.is_none()) return;
  keep.push_back(host_input(b_obj, "B", cols));  // its form may differ from A's
  o.b = keep.back().m;
  if (o.b->cols != o.a.cols)
    throw py::value_error("B: " + std::to_string(o.b->cols) + " columns, expected " + std::to_string(o.a.cols) +
                          " (the columns of A)");
}

// A collective of the distributed layer (gram/distributed/) with the GIL
// released, as another thread's call may be what the other ranks wait for; a
// budget that holds no plan as MemoryError (std::invalid_argument is a
// ValueError already).
template <class F>
void over_ranks(F&& f) {
  try {
    py::gil_scoped_release release;
    f();
  } catch (const kmini::gram::BudgetError& e) {
    memory_error(e.what());
  }
}

// The outputs, the memory (the whole problem's slices, this rank's dense C)
// and the values; dense C allocated, `dense_out` its data.
py::object prepare_over(OverRanks& o, const Options& options, void*& dense_out) {
  const std::int64_t rows_b = o.targets(), mine = o.a.rows;
  if (bool_arg(options["exclude_self"], "exclude_self"))
    throw py::value_error(
        "exclude_self: got True with comm, expected False (one process, or the CLI at any rank "
        "count, leaves self-matches out)");
  gram_outputs(o.p, rows_b, o.b.has_value(), options);
  o.auto_rows = o.p.slice_rows == 0;
  const std::int64_t dense_elements = o.p.dense ? checked_bytes(mine, rows_b, "gram: dense C of rows x targets") : 0;
  checked_bytes(dense_elements, 4, "gram: dense C");
  checked_bytes(o.rows.total(), std::max<std::int64_t>(o.p.top_k, 1) * 16, "gram: top_k lists of rows x k");
  o.budget = budget_of(options["memory_budget"]);
  o.dense_bytes = 4.0 * double(kmini::gram::dense_elements(o.rows, o.a, rows_b, o.p));
  if (!o.planned()) {
    GramMemory memory{o.p, o.whole, o.whole_bm()};
    memory.budget = o.budget;
    memory.dense_bytes = o.dense_bytes;
    memory.fit(o.p);
  }
  ensure_kokkos();
  py::object C =
      dense_array(o.p, mine, rows_b, kmini::gram::dense_elements(o.rows, o.a, rows_b, o.p), false, dense_out);
  KernelCall call("gram");
  check_gram_values("A", o.a, o.rows.first());
  if (o.b) check_gram_values("B", *o.b, o.spread_b() ? o.b_rows.first() : 0);
  return C;
}

// The collective library call, allocation failures as MemoryError.
kmini::gram::ComputeResult run_over(const OverRanks& o, void* dense_out, MPI_Comm comm) {
  KernelCall call("gram", comm, true);
  try {
    return kmini::gram::compute(kmini::gram::ApiExec(), o.rows, o.a, o.bm(), o.b && o.spread_b() ? &o.b_rows : nullptr,
                                o.p, dense_out);
  } catch (const std::bad_alloc&) {
    memory_error("gram: an allocation failed computing slices of " + std::to_string(o.p.slice_rows) + " rows");
  } catch (const std::runtime_error& e) {  // Kokkos' failed allocations
    if (std::string(e.what()).find("alloc") == std::string::npos) throw;
    memory_error("gram: an allocation failed (" + first_line(e.what()) + ") computing slices of " +
                 std::to_string(o.p.slice_rows) + " rows");
  }
  return {};
}

// gram with comm=: each rank's arguments converted and checked, agreed by
// every rank (one refusal stops all), then one collective library call.
py::object gram_over(const py::object& a_obj, const py::object& b_obj, const py::object& options,
                     const py::object& comm_obj) {
  check_running("gram");
  bool given = false;
  const MPI_Comm comm = comm_of(comm_obj, "gram", &given);
  const Options opts(options, "gram", kOptions);
  OverRanks o;
  std::vector<GramInput> keep;
  std::exception_ptr failed;
  try {
    convert_own(o, keep, a_obj, b_obj, opts);
    o.p.summary = opts["summary"].cast<bool>();
    search_options(o.p, opts);
  } catch (...) {
    failed = std::current_exception();
  }
  agree(comm, given, failed, "gram");
  over_ranks([&] { kmini::gram::place_rows(o, comm); });
  void* dense_out = nullptr;
  py::object C;
  try {
    C = prepare_over(o, opts, dense_out);
  } catch (...) {
    failed = std::current_exception();
  }
  agree(comm, given, failed, "gram");
  over_ranks([&] { kmini::gram::agree_params(o, comm); });
  if (o.planned()) over_ranks([&] { kmini::gram::agree_plan(o, comm); });
  Stop stop;
  o.p.interrupted = stop.check();  // between rounds, agreed by the ranks
  const kmini::gram::ComputeResult r = run_over(o, dense_out, comm);
  stop.raise_if_stopped("gram");
  if (r.interrupted)
    throw std::runtime_error("gram: stopped because another rank was interrupted (Ctrl-C or its exit)");
  return result_namespace(C, r, o.p, o.a.rows);
}

}  // namespace

void bind_gram(py::module_& m) {
  m.def("_gram_arguments", [] { return declared_arguments(kmini::gram::declaration(), kArguments); });
  bind_gram_write(m);
  m.def("_gram_over", &gram_over, py::arg("A"), py::arg("B"), py::arg("options"), py::arg("comm"));
  m.def("gram", &gram, py::arg("A"), py::arg("B"), py::arg("options"));
}

}  // namespace kmini::python
