// write= of kmini.gram: the files checked and written as the CLI's
// gram.write.* (the same checks, the same atomic, collective writers).
#include "bind_gram.hpp"
#include "convert.hpp"
#include "core/collective.hpp"
#include "core/text.hpp"
#include "gram/gram.hpp"
#include "io/atomic_file.hpp"
#include "io/npy.hpp"
#include "io/output_files.hpp"
#include "runtime.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kmini::python {

namespace {

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
    const std::vector<std::string>& suffixes = kmini::gram::declaration().key(w->second).rule.options;
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

void bind_gram_write(py::module_& m) {
  m.def("_check_write", &check_write, py::arg("files"));
  m.def("_write_text", &write_text, py::arg("path"), py::arg("text"), py::arg("comm"));
  m.def("_write_npy", &write_npy, py::arg("path"), py::arg("array"), py::arg("first"), py::arg("shape"),
        py::arg("comm"));
}

}  // namespace kmini::python
