// kmini._kmini.gram: C = A A^T (or A B^T) of 0/1 matrices, with the CLI's
// outputs (similarities, top-k, pairs, counts at thresholds).
//
// One bit convention for every input form: column k of a row is element k
// (bool/uint8 0/1), bit 7 - k % 8 of byte k / 8 (np.packbits(A, axis=1), its
// default big bit order) or bit k % 64 of the uint64 word k / 64 (native or
// either explicit byte order); forms can be mixed between A and B.
#include "bindings.hpp"
#include "convert.hpp"
#include "core/collective.hpp"
#include "core/device_memory.hpp"
#include "core/format.hpp"
#include "core/text.hpp"
#include "cuda_array.hpp"
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
const std::vector<Argument> kArguments = {
    {"similarity", "similarity"},       {"top_k", "write.top_k.k"},
    {"pairs_min", "write.pairs.min"},   {"count_at_least", "write.count_at_least"},
    {"triangle", "triangle"},           {"memory_budget", "memory_budget"},
    {"slice_rows", "row_slice"},        {"distribution", "distribution"},
    {"ring_schedule", "ring_schedule"}, {"empty_similarity", "empty_similarity"},
    {"top_k_min", "write.top_k.min"}};

const DeckKey& key(const char* k) { return kmini::gram::declaration().key(k); }

// One 0/1 matrix argument: bool/uint8 elements, np.packbits bytes (uint8 with
// cols=) or uint64 words (with cols=), held C-contiguous in `keep`; or the
// same as a device array (__cuda_array_interface__), read in place.
struct GramInput {
  py::object keep;
  kmini::gram::ApiMatrix m;
};

// The format `cols` and the dtype's kind and size give, and the row length it
// implies; a TypeError naming `name` for other dtypes.
kmini::gram::ApiMatrix gram_format(const char* name, const std::string& dtype, char kind, py::ssize_t itemsize,
                                   py::ssize_t rows, py::ssize_t width, std::int64_t cols) {
  using Format = kmini::gram::ApiMatrix::Format;
  kmini::gram::ApiMatrix m;
  m.rows = rows;
  if (cols < 0) {
    m.format = Format::Unpacked;
    m.cols = width;
    return m;
  }
  m.cols = cols;
  if (kind == 'u' && itemsize == 1) m.format = Format::PackBits;
  else if (kind == 'u' && itemsize == 8) m.format = Format::Words;
  else
    throw py::type_error(std::string(name) + ": dtype " + dtype +
                         " with cols=, expected uint8 (np.packbits(A, axis=1)) or uint64 words");
  const std::int64_t per_row = m.format == Format::PackBits ? (cols + 7) / 8 : (cols + 63) / 64;
  if (width != per_row)
    throw py::value_error(std::string(name) + ": shape (" + std::to_string(rows) + ", " + std::to_string(width) +
                          "), expected (" + std::to_string(rows) + ", " + std::to_string(per_row) +
                          ") for cols=" + std::to_string(cols));
  return m;
}

// The library's check of the values (where they are), as the CLI words it.
// Runs kernels: call it inside a KernelCall.
// Over ranks, `row0` is the first row of this rank's block: rows are named
// as in the whole matrix.
// Values above 1 in uint8 or uint64 input without cols= are most often packed rows.
constexpr const char* kPackedHint = " (for packed rows, np.packbits bytes or uint64 words, pass cols=)";

void check_gram_values(const char* name, const kmini::gram::ApiMatrix& m, std::int64_t row0 = 0) {
  const kmini::gram::BadValue bad = kmini::gram::first_bad_value(kmini::gram::ApiExec(), m);
  if (bad.row < 0) return;
  const std::string row = std::to_string(row0 + bad.row);
  if (m.format == kmini::gram::ApiMatrix::Format::Unpacked)
    throw py::value_error(std::string(name) + ": element (" + row + ", " + std::to_string(bad.col) + ") is " +
                          std::to_string(bad.value) + ", expected 0 or 1" + kPackedHint);
  const bool words = m.format == kmini::gram::ApiMatrix::Format::Words;
  throw py::value_error(std::string(name) + ": bits set past cols=" + std::to_string(m.cols) + " in the last " +
                        (words ? "word" : "byte") + " of row " + row + ", expected zeros");
}

GramInput gram_device_input(const py::handle& obj, const char* name, std::int64_t cols) {
  const CudaArrayView v = cuda_array_view(obj, name);
  if (v.shape.size() != 2)
    throw py::value_error(std::string(name) + ": shape " + v.shape_string() + ", expected (rows, cols)");
  const py::dtype dt(v.typestr);
  const char kind = dt.kind();
  if (cols < 0 && !(kind == 'b' || (kind == 'u' && dt.itemsize() == 1)))
    throw py::type_error(std::string(name) + ": device dtype " + v.typestr +
                         ", expected 0/1 values as bool or uint8 (or np.packbits bytes / uint64 words with cols=)");
  if (dt.byteorder() == '>')
    throw py::type_error(std::string(name) + ": device dtype " + v.typestr + ", expected native byte order");
  GramInput in;
  in.m = gram_format(name, v.typestr, kind, dt.itemsize(), v.shape[0], v.shape[1], cols);
  in.m.data = reinterpret_cast<const void*>(v.data);
  in.m.on_device = true;
  in.keep = v.owner;
  return in;
}

GramInput gram_input(const py::handle& obj, const char* name, std::int64_t cols) {
  if (has_cuda_array_interface(obj)) return gram_device_input(obj, name, cols);
  const py::module_ np = py::module_::import("numpy");
  py::array a = array_arg(obj, name);
  if (a.ndim() != 2) throw py::value_error(std::string(name) + ": shape " + shape_of(a) + ", expected (rows, cols)");
  const char kind = a.dtype().kind();
  GramInput in;
  in.m = gram_format(name, dtype_of(a), kind, a.itemsize(), a.shape(0), a.shape(1), cols);
  if (in.m.format == kmini::gram::ApiMatrix::Format::Unpacked) {
    if (kind != 'b' && kind != 'u' && kind != 'i' && kind != 'f')
      throw py::type_error(std::string(name) + ": dtype " + dtype_of(a) +
                           ", expected 0/1 values as bool or uint8 (or np.packbits bytes / uint64 words with cols=)");
    const bool bytes = kind == 'b' || (kind == 'u' && a.itemsize() == 1);
    if (!bytes) {
      // Other dtypes are checked before the conversion to bytes (0.5 is not 0).
      const py::array bad = np.attr("argwhere")((a.attr("__ne__")(0)).attr("__and__")(a.attr("__ne__")(1)));
      if (bad.shape(0) > 0) {
        const auto i = bad.attr("__getitem__")(0).attr("__getitem__")(0).cast<std::int64_t>();
        const auto j = bad.attr("__getitem__")(0).attr("__getitem__")(1).cast<std::int64_t>();
        throw py::value_error(std::string(name) + ": element (" + std::to_string(i) + ", " + std::to_string(j) +
                              ") is " + describe(a.attr("__getitem__")(py::make_tuple(i, j)).attr("item")()) +
                              ", expected 0 or 1" + (kind == 'u' && a.itemsize() == 8 ? kPackedHint : ""));
      }
    }
    in.keep = np.attr("ascontiguousarray")(a, "uint8");
  } else {
    // Words in this machine's byte order (a big-endian array is swapped once).
    in.keep = np.attr("ascontiguousarray")(a, a.dtype().attr("newbyteorder")("="));
  }
  in.m.data = in.keep.cast<py::array>().data();
  return in;
}

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
kmini::gram::ComputeParams gram_params(const py::object& similarity_obj, const py::object& dense_obj,
                                       const py::object& triangle_obj, const py::object& distribution_obj,
                                       const py::object& schedule_obj) {
  kmini::gram::ComputeParams p;
  const std::string similarity = declared_choice_arg(similarity_obj, "similarity", key("similarity"));
  kmini::gram::similarity_from_name(similarity, p.similarity);  // a declared name or alias
  const std::string triangle = declared_choice_arg(triangle_obj, "triangle", key("triangle"));
  p.dense = bool_arg(dense_obj, "dense");
  p.upper = triangle == "upper";
  using kmini::gram::Distribution;
  using kmini::gram::RingSchedule;
  const std::string distribution = declared_choice_arg(distribution_obj, "distribution", key("distribution"));
  for (Distribution d : {Distribution::Replicated, Distribution::Ring, Distribution::Auto})
    if (distribution == kmini::gram::distribution_name(d)) p.distribution = d;
  const std::string schedule = declared_choice_arg(schedule_obj, "ring_schedule", key("ring_schedule"));
  for (RingSchedule r : {RingSchedule::Auto, RingSchedule::Slices, RingSchedule::Circulant})
    if (schedule == kmini::gram::ring_schedule_name(r)) p.ring_schedule = r;
  return p;
}

// The outputs asked for beyond C: top_k, pairs_min, count_at_least, slice_rows.
void gram_outputs(kmini::gram::ComputeParams& p, std::int64_t rows_b, bool two, const py::object& top_k,
                  const py::object& pairs_min, const py::object& count_at_least, const py::object& slice_rows) {
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
                            kmini::gram::similarity_name(p.similarity) + "', expected " + expected);
  };
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
void search_options(kmini::gram::ComputeParams& p, const py::object& empty_obj, const py::object& top_k_min_obj) {
  p.empty_similarity = declared_real_arg(empty_obj, "empty_similarity", key("empty_similarity"));
  p.top_k_min = declared_real_arg(top_k_min_obj, "top_k_min", key("write.top_k.min"));
  const std::string expected = kmini::gram::unreachable_threshold(p.similarity, p.top_k_min);
  if (!expected.empty())
    throw py::value_error("top_k_min: got " + kmini::format_g(p.top_k_min, 17) + " with similarity='" +
                          kmini::gram::similarity_name(p.similarity) + "', expected " + expected);
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

py::object gram(const py::object& a_obj, const py::object& b_obj, const py::object& cols_obj,
                const py::object& similarity_obj, const py::object& top_k, const py::object& pairs_min,
                const py::object& count_at_least, const py::object& dense_obj, const py::object& triangle_obj,
                const py::object& budget_obj, const py::object& slice_rows, const py::object& distribution_obj,
                const py::object& schedule_obj, bool summary, const py::object& empty_obj,
                const py::object& top_k_min_obj) {
  check_running("gram");
  // One process holds the whole problem whatever the distribution (a ring of one rank).
  kmini::gram::ComputeParams p = gram_params(similarity_obj, dense_obj, triangle_obj, distribution_obj, schedule_obj);
  p.summary = summary;
  search_options(p, empty_obj, top_k_min_obj);
  const std::int64_t cols = cols_obj.is_none() ? -1 : integer_arg(cols_obj, "cols", 0, kMaxInt64 / 2);
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
  gram_outputs(p, rows_b, b.has_value(), top_k, pairs_min, count_at_least, slice_rows);
  // Sizes from the arguments, checked before they are multiplied.
  const kmini::gram::ApiMatrix* bm = b ? &b->m : nullptr;
  const std::int64_t dense_elements = p.dense ? checked_bytes(a.m.rows, rows_b, "gram: dense C of rows x targets") : 0;
  checked_bytes(dense_elements, 4, "gram: dense C");
  checked_bytes(a.m.rows, std::max<std::int64_t>(p.top_k, 1) * 16, "gram: top_k lists of rows x k");
  GramMemory memory{p, a.m, bm};
  memory.budget = budget_of(budget_obj);
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

// A rank's arguments: its own rows of A, B (whole, or its own rows with the
// ring or auto), where the rows are, and what the plan may use.
struct OverRanks {
  kmini::gram::ComputeParams p;
  std::optional<GramInput> a, b;
  kmini::gram::RankRows rows, b_rows;     // b_rows: B spread (distribution ring or auto)
  kmini::gram::ApiMatrix whole, whole_b;  // all ranks' rows (for the plan and the budget)
  bool auto_rows = false;                 // slice_rows from the budget, not the caller
  double budget = 0, dense_bytes = 0;     // this rank's memory_budget and dense C
  int ranks = 1;
  bool spread_b() const { return p.distribution != kmini::gram::Distribution::Replicated; }
  // The CLI's plan takes the height (and with auto the distribution) from the
  // budget. One rank: the one-process call, which holds the whole problem (as
  // a ring of one does) in slices as tall as the budget allows.
  bool planned() const { return ranks > 1; }
  const kmini::gram::ApiMatrix* bm() const { return b ? &b->m : nullptr; }
  const kmini::gram::ApiMatrix* whole_bm() const { return b ? &whole_b : nullptr; }
  std::int64_t targets() const { return b ? whole_b.rows : rows.total(); }
};

// Over ranks the inputs are host arrays (each rank's rows are gathered).
GramInput host_input(const py::object& obj, const char* name, std::int64_t cols) {
  if (has_cuda_array_interface(obj))
    throw py::type_error(std::string(name) + ": a device array, expected a numpy array with comm=");
  return gram_input(obj, name, cols);
}

// This rank's arrays and choices, checked on their own.
void convert_own(OverRanks& o, const py::object& a_obj, const py::object& b_obj, const py::object& cols_obj,
                 const py::object& similarity_obj, const py::object& dense_obj, const py::object& triangle_obj,
                 const py::object& distribution_obj, const py::object& schedule_obj) {
  o.p = gram_params(similarity_obj, dense_obj, triangle_obj, distribution_obj, schedule_obj);
  const std::int64_t cols = cols_obj.is_none() ? -1 : integer_arg(cols_obj, "cols", 0, kMaxInt64 / 2);
  if (!b_obj.is_none() && o.p.upper)
    throw py::value_error("triangle: got 'upper' with B, expected 'full' (A B^T has no symmetry)");
  o.a = host_input(a_obj, "A", cols);
  if (b_obj.is_none()) return;
  o.b = host_input(b_obj, "B", cols);  // its form may differ from A's
  if (o.b->m.cols != o.a->m.cols)
    throw py::value_error("B: " + std::to_string(o.b->m.cols) + " columns, expected " + std::to_string(o.a->m.cols) +
                          " (the columns of A)");
}

// A digest (FNV-1a) of a host matrix's elements, whatever its form: of its
// rows as words (column k in bit k % 64 of word k / 64), so copies of one
// matrix in different forms agree and matrices that differ do not.
std::int64_t digest(const kmini::gram::ApiMatrix& m) {
  using Format = kmini::gram::ApiMatrix::Format;
  const std::int64_t words = (m.cols + 63) / 64, row_bytes = m.row_bytes();
  const auto* bytes = static_cast<const unsigned char*>(m.data);
  std::vector<std::uint64_t> row(static_cast<std::size_t>(words));
  std::uint64_t h = 14695981039346656037ull;
  for (std::int64_t i = 0; i < m.rows; ++i) {
    const unsigned char* r = bytes + i * row_bytes;
    std::fill(row.begin(), row.end(), 0);
    if (m.format == Format::Words) std::memcpy(row.data(), r, static_cast<std::size_t>(row_bytes));
    for (std::int64_t k = 0; m.format != Format::Words && k < m.cols; ++k) {
      const bool one = m.format == Format::Unpacked ? r[k] != 0 : ((r[k / 8] >> (7 - k % 8)) & 1) != 0;
      row[static_cast<std::size_t>(k / 64)] |= std::uint64_t(one) << (k % 64);
    }
    for (std::uint64_t w : row) h = (h ^ w) * 1099511628211ull;
  }
  std::int64_t out = 0;
  std::memcpy(&out, &h, sizeof out);
  return out;
}

// B's form over the ranks, from each rank's digest of its B: whole, the same
// on every rank (replicated), or each rank's own block (ring, auto). Every
// rank passing the same rows is B whole: with the ring its rows would count
// once per rank, so it is refused rather than computed as P copies of B
// (blocks that are truly equal, all-zero rows say, can go replicated).
void check_b_form(const OverRanks& o, const std::vector<std::int64_t>& all, int fields) {
  if (!o.b || o.ranks < 2) return;
  bool same = true;
  for (int q = 1; q < o.ranks; ++q)
    same = same && all[static_cast<std::size_t>(fields * q + 2)] == all[2] &&
           all[static_cast<std::size_t>(fields * q + 4)] == all[4];
  const std::string d = kmini::gram::distribution_name(o.p.distribution);
  if (!o.spread_b() && !same)
    throw py::value_error(
        "B: not the same on every rank with distribution='replicated', expected B whole on every "
        "rank (B in blocks is for 'ring' or 'auto')");
  if (o.spread_b() && same && o.b->m.rows > 0)
    throw py::value_error("B: the same " + std::to_string(o.b->m.rows) + " rows on every rank with distribution='" + d +
                          "', expected each rank's own block of B's rows (B whole, or blocks that are equal, go "
                          "with 'replicated')");
}

// The ranks' shapes: the same columns (and with B whole, B's shape) on every
// rank, which every rank sees alike; where each rank's rows are.
void place_rows(OverRanks& o, MPI_Comm comm) {
  constexpr int kFields = 5;  // A's rows and columns, B's rows, columns and digest
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const bool b = o.b.has_value();
  std::int64_t mine[kFields] = {o.a->m.rows, o.a->m.cols, b ? o.b->m.rows : -1, b ? o.b->m.cols : -1, 0};
  std::vector<std::int64_t> all(static_cast<std::size_t>(kFields * ranks));
  {
    py::gil_scoped_release release;
    if (b && ranks > 1) mine[4] = digest(o.b->m);
    MPI_Allgather(mine, kFields, MPI_INT64_T, all.data(), kFields, MPI_INT64_T, comm);
  }
  bool same = true, same_b = true;
  std::string list;
  o.ranks = ranks;
  o.rows = {comm, std::vector<std::int64_t>(static_cast<std::size_t>(ranks) + 1, 0)};
  o.b_rows = o.rows;
  for (int q = 0; q < ranks; ++q) {
    const std::int64_t* e = all.data() + kFields * q;
    same = same && e[1] == mine[1];
    same_b = same_b && e[3] == all[3] && (o.spread_b() || e[2] == all[2]);
    list += (q ? ", " : "") + std::to_string(e[1]);
    o.rows.firsts[static_cast<std::size_t>(q) + 1] = o.rows.firsts[static_cast<std::size_t>(q)] + e[0];
    o.b_rows.firsts[static_cast<std::size_t>(q) + 1] =
        o.b_rows.firsts[static_cast<std::size_t>(q)] + std::max<std::int64_t>(e[2], 0);
  }
  if (!same)
    throw py::value_error("A: " + std::to_string(mine[1]) +
                          " columns, expected the same on every rank (rank by rank: [" + list + "])");
  if (!same_b)
    throw py::value_error(o.spread_b() ? "B: columns differ between the ranks, expected the columns of A on every rank"
                                       : "B: shapes differ between the ranks, expected B whole on every rank");
  check_b_form(o, all, kFields);
  o.whole = o.a->m;
  o.whole.rows = o.rows.total();
  if (!o.b) return;
  o.whole_b = o.b->m;
  if (o.spread_b()) o.whole_b.rows = o.b_rows.total();
}

// The outputs, the memory (the whole problem's slices, this rank's dense C)
// and the values; dense C allocated, `dense_out` its data.
py::object prepare_over(OverRanks& o, const py::object& top_k, const py::object& pairs_min,
                        const py::object& count_at_least, const py::object& budget_obj, const py::object& slice_rows,
                        void*& dense_out) {
  const std::int64_t rows_b = o.targets(), mine = o.a->m.rows;
  gram_outputs(o.p, rows_b, o.b.has_value(), top_k, pairs_min, count_at_least, slice_rows);
  o.auto_rows = o.p.slice_rows == 0;
  const std::int64_t dense_elements = o.p.dense ? checked_bytes(mine, rows_b, "gram: dense C of rows x targets") : 0;
  checked_bytes(dense_elements, 4, "gram: dense C");
  checked_bytes(o.rows.total(), std::max<std::int64_t>(o.p.top_k, 1) * 16, "gram: top_k lists of rows x k");
  o.budget = budget_of(budget_obj);
  o.dense_bytes = 4.0 * double(kmini::gram::dense_elements(o.rows, o.a->m, rows_b, o.p));
  if (!o.planned()) {
    GramMemory memory{o.p, o.whole, o.whole_bm()};
    memory.budget = o.budget;
    memory.dense_bytes = o.dense_bytes;
    memory.fit(o.p);
  }
  ensure_kokkos();
  py::object C =
      dense_array(o.p, mine, rows_b, kmini::gram::dense_elements(o.rows, o.a->m, rows_b, o.p), false, dense_out);
  KernelCall call("gram");
  check_gram_values("A", o.a->m, o.rows.first());
  if (o.b) check_gram_values("B", o.b->m, o.spread_b() ? o.b_rows.first() : 0);
  return C;
}

// The arguments every rank must pass alike, agreed before anything is
// computed: a ValueError on every rank naming the first that differs (the
// budget may differ: the lowest is taken).
void agree_params(const OverRanks& o, MPI_Comm comm) {
  const kmini::gram::ComputeParams& p = o.p;
  std::uint64_t at_least = p.count_at_least.size();  // a digest of the thresholds
  for (double t : p.count_at_least) at_least = at_least * 1099511628211ull + static_cast<std::uint64_t>(bits_of(t));
  agree_same(comm, {{"similarity", static_cast<std::int64_t>(p.similarity)},
                    {"dense", p.dense},
                    {"triangle", p.upper},
                    {"distribution", static_cast<std::int64_t>(p.distribution)},
                    {"ring_schedule", static_cast<std::int64_t>(p.ring_schedule)},
                    {"top_k", p.top_k},
                    {"empty_similarity", bits_of(p.empty_similarity)},
                    {"top_k_min", bits_of(p.top_k_min)},
                    {"pairs_min", p.pairs ? bits_of(p.pairs_min) : -1},
                    {"count_at_least", static_cast<std::int64_t>(at_least)},
                    {"slice_rows", o.auto_rows ? -1 : p.slice_rows}});
}

// The CLI's plan within the lowest budget of any rank, less
// the largest dense C: the same plan on every rank, or the same error.
void agree_plan(OverRanks& o, MPI_Comm comm) {
  double worst[2] = {-o.budget, o.dense_bytes};
  {
    py::gil_scoped_release release;
    MPI_Allreduce(MPI_IN_PLACE, worst, 2, MPI_DOUBLE, MPI_MAX, comm);
  }
  const double budget = -worst[0], room = budget - worst[1];
  const std::string limit = "memory_budget " + kmini::format_bytes(budget) +
                            (worst[1] > 0 ? " less dense C " + kmini::format_bytes(worst[1]) : std::string());
  if (room <= 0) memory_error("gram: " + limit + " leaves nothing for the plan (dense=False computes without C)");
  o.p.memory_budget = room;
  if (o.rows.total() == 0 || o.targets() == 0) return;  // no slices to plan
  double held = 0;
  try {
    held = kmini::gram::planned_bytes(o.ranks, o.whole, o.whole_bm(), o.p);
  } catch (const kmini::UsageError& e) {  // no slice height fits
    std::string why = e.what();           // "gram.memory_budget: <GiB> cannot hold ...": the deck's words
    const std::size_t at = why.find("cannot hold");
    memory_error("gram: " + limit + " " + (at == std::string::npos ? "is too small: " + why : why.substr(at)) +
                 "; nothing was allocated");
  }
  if (!o.auto_rows && held > room)
    throw py::value_error("slice_rows: got " + std::to_string(o.p.slice_rows) + ", expected a height within " + limit +
                          " (the plan per rank needs " + kmini::format_bytes(held) + ")");
}

// The collective library call, allocation failures as MemoryError.
kmini::gram::ComputeResult run_over(const OverRanks& o, void* dense_out, MPI_Comm comm) {
  KernelCall call("gram", comm, true);
  try {
    return kmini::gram::compute(kmini::gram::ApiExec(), o.rows, o.a->m, o.bm(),
                                o.b && o.spread_b() ? &o.b_rows : nullptr, o.p, dense_out);
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
py::object gram_over(const py::object& a_obj, const py::object& b_obj, const py::object& cols_obj,
                     const py::object& similarity_obj, const py::object& top_k, const py::object& pairs_min,
                     const py::object& count_at_least, const py::object& dense_obj, const py::object& triangle_obj,
                     const py::object& budget_obj, const py::object& slice_rows, const py::object& distribution_obj,
                     const py::object& schedule_obj, const py::object& comm_obj, bool summary,
                     const py::object& empty_obj, const py::object& top_k_min_obj) {
  check_running("gram");
  bool given = false;
  const MPI_Comm comm = comm_of(comm_obj, "gram", &given);
  OverRanks o;
  std::exception_ptr failed;
  try {
    convert_own(o, a_obj, b_obj, cols_obj, similarity_obj, dense_obj, triangle_obj, distribution_obj, schedule_obj);
    o.p.summary = summary;
    search_options(o.p, empty_obj, top_k_min_obj);
  } catch (...) {
    failed = std::current_exception();
  }
  agree(comm, given, failed, "gram");
  place_rows(o, comm);
  void* dense_out = nullptr;
  py::object C;
  try {
    C = prepare_over(o, top_k, pairs_min, count_at_least, budget_obj, slice_rows, dense_out);
  } catch (...) {
    failed = std::current_exception();
  }
  agree(comm, given, failed, "gram");
  agree_params(o, comm);
  if (o.planned()) agree_plan(o, comm);
  Stop stop;
  o.p.interrupted = stop.check();  // between rounds, agreed by the ranks
  const kmini::gram::ComputeResult r = run_over(o, dense_out, comm);
  stop.raise_if_stopped("gram");
  if (r.interrupted)
    throw std::runtime_error("gram: stopped because another rank was interrupted (Ctrl-C or its exit)");
  return result_namespace(C, r, o.p, o.a->m.rows);
}

// write='s outputs: the deck key each is, whose declared suffixes it must end in.
const std::vector<std::pair<std::string, const char*>> kWritable = {
    {"C", "write.C"}, {"pairs", "write.pairs.path"}, {"top_k", "write.top_k.path"}, {"summary", "write.summary"}};

// write= ({output: path}, already str) checked as the CLI checks gram.write.*
// before anything runs: a known output, the declared suffix, and every file
// writable here (check_output_files_here: its directory exists and takes
// files, it is not a directory or a special file, a link is checked as its
// target, no file named twice); a ValueError naming the first problem.
void check_write(const std::vector<std::pair<std::string, std::string>>& files) {
  if (!files.empty()) ensure_mpi("gram");  // the files are written with MPI-IO: where it cannot run, say so first
  std::vector<kmini::OutputFile> outs;
  std::string names;
  for (const auto& [name, k] : kWritable) names += (names.empty() ? "'" : ", '") + name + "'";
  for (const auto& [name, path] : files) {
    const auto w = std::find_if(kWritable.begin(), kWritable.end(), [&](const auto& x) { return x.first == name; });
    if (w == kWritable.end()) throw py::value_error("write: got key '" + name + "', expected one of " + names);
    const std::vector<std::string>& suffixes = key(w->second).rule.options;
    const auto ends = [&](const std::string& x) { return kmini::ends_with(path, x); };
    if (!path.empty() && std::none_of(suffixes.begin(), suffixes.end(), ends))
      throw py::value_error("write: " + name + ": got '" + path + "', expected a path ending in " + suffixes.front() +
                            " (as the deck's gram." + w->second + ")");
    outs.push_back({"write: " + name, path});
  }
  try {
    kmini::check_output_files_here(outs);
  } catch (const kmini::UsageError& e) {
    throw py::value_error(e.what());
  }
}

// A numpy dtype of the CLI's files as the .npy writer's element type.
kmini::npy::DType npy_dtype(const py::dtype& d, const std::string& path) {
  const std::string s = py::str(d.attr("str")).cast<std::string>();
  using kmini::npy::DType;
  for (const auto& [text, t] : std::vector<std::pair<std::string, DType>>{
           {"<i4", DType::I4}, {"<i8", DType::I8}, {"<f4", DType::F4}, {"<f8", DType::F8}, {"|u1", DType::U1}})
    if (s == text) return t;
  throw py::type_error("write: " + path + ": dtype " + s + " is not one of the CLI's");
}

// Collective over `comm` (None: this process): this rank's `array` at element
// `first` of the .npy file `path` of `shape`, written as the CLI writes its
// outputs (atomically: a temporary file renamed when every rank has written).
void write_npy(const py::object& path_obj, const py::array& array, std::int64_t first,
               const std::vector<std::int64_t>& shape, const py::object& comm_obj) {
  bool given = false;
  const MPI_Comm comm = comm_of(comm_obj, "gram", &given);
  if (!given) ensure_mpi("gram");
  const std::string path = py::str(py::module_::import("os").attr("fspath")(path_obj)).cast<std::string>();
  std::vector<kmini::npy::Field> fields;
  const py::object names = array.dtype().attr("names");
  std::optional<kmini::npy::ElementType> element;
  if (names.is_none()) {
    element.emplace(npy_dtype(array.dtype(), path));
  } else {
    for (const py::handle n : names) {
      const py::dtype f = array.dtype().attr("fields")[n].cast<py::tuple>()[0].cast<py::dtype>();
      fields.push_back({n.cast<std::string>(), npy_dtype(f, path)});
    }
    element.emplace(fields);
  }
  const py::array data = py::module_::import("numpy").attr("ascontiguousarray")(array);
  const void* p = data.data();
  const auto count = static_cast<std::uint64_t>(data.size());
  const kmini::npy::Shape global(shape.begin(), shape.end());
  KernelCall call("gram", comm, given);  // no Python objects below; MPI-IO, one call at a time
  try {
    kmini::npy::DistributedWriter writer(comm, path, *element, global);
    writer.write_elements_independent(static_cast<std::uint64_t>(first), count, p);
    writer.commit();
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("write: ") + e.what());
  }
}

// Collective over `comm` (None: this process): `text` written by rank 0 as
// the CLI writes its text outputs (atomically; every rank gets its errors).
void write_text(const py::object& path_obj, const std::string& text, const py::object& comm_obj) {
  bool given = false;
  const MPI_Comm comm = comm_of(comm_obj, "gram", &given);
  if (!given) ensure_mpi("gram");
  const std::string path = py::str(py::module_::import("os").attr("fspath")(path_obj)).cast<std::string>();
  KernelCall call("gram", comm, given);
  try {
    kmini::on_root_collectively(comm, [&] { kmini::write_text_file_atomically(path, text); });
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("write: ") + e.what());
  }
}

}  // namespace

void bind_gram(py::module_& m) {
  m.def("_gram_arguments", [] { return declared_arguments(kmini::gram::declaration(), kArguments); });
  m.def("_check_write", &check_write, py::arg("files"));
  m.def("_write_text", &write_text, py::arg("path"), py::arg("text"), py::arg("comm"));
  m.def("_write_npy", &write_npy, py::arg("path"), py::arg("array"), py::arg("first"), py::arg("shape"),
        py::arg("comm"));
  m.def("_gram_over", &gram_over, py::arg("A"), py::arg("B"), py::arg("cols"), py::arg("similarity"), py::arg("top_k"),
        py::arg("pairs_min"), py::arg("count_at_least"), py::arg("dense"), py::arg("triangle"),
        py::arg("memory_budget"), py::arg("slice_rows"), py::arg("distribution"), py::arg("ring_schedule"),
        py::arg("comm"), py::arg("summary") = false, py::arg("empty_similarity") = 0.0, py::arg("top_k_min") = 0.0);
  m.def("gram", &gram, py::arg("A"), py::arg("B"), py::arg("cols"), py::arg("similarity"), py::arg("top_k"),
        py::arg("pairs_min"), py::arg("count_at_least"), py::arg("dense"), py::arg("triangle"),
        py::arg("memory_budget"), py::arg("slice_rows"), py::arg("distribution"), py::arg("ring_schedule"),
        py::arg("summary") = false, py::arg("empty_similarity") = 0.0, py::arg("top_k_min") = 0.0);
}

}  // namespace kmini::python
