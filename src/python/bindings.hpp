#pragma once
// One binding file per kernel (bind_<kernel>.cpp); module.cpp calls them all.
#include <pybind11/pybind11.h>

namespace kmini::python {

void bind_discount(pybind11::module_& m);
void bind_rk4(pybind11::module_& m);
void bind_gram(pybind11::module_& m);
void bind_fps(pybind11::module_& m);  // kmini.read_fps: FPS fingerprint files

}  // namespace kmini::python
