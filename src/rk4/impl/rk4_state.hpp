#pragma once
// One rank's state between the device and the host and files: initial
// fields, the restart and the checkpoint (templates on the field precision T,
// used by rk4_run.cpp and rk4_verify.hpp).
#include "core/environment.hpp"
#include "io/npy.hpp"
#include "rk4/impl/rk4_detail.hpp"
#include "rk4/impl/rk4_kernels.hpp"
#include "rk4/rk4.hpp"
#include "rk4/rk4_api.hpp"
#include "rk4/rk4_checkpoint.hpp"

#include <Kokkos_Core.hpp>

#include <complex>
#include <string>
#include <utility>
#include <vector>

namespace kmini::rk4::detail {

template <class T, class Field>
std::vector<std::complex<T>> to_host(const Field& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<std::complex<T>> out(h.extent(0));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::complex<T>(h(i).real(), h(i).imag());
  return out;
}

template <class T, class Field>
void from_host(const ExecSpace& exec, const Field& v, const std::vector<std::complex<T>>& values) {
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < values.size(); ++i) h(i) = Kokkos::complex<T>(values[i].real(), values[i].imag());
  Kokkos::deep_copy(exec, v, h);
  exec.fence();
}

// G (two real Views on the device) to and from complex values on the host.
template <class T, class Mem>
std::vector<std::complex<T>> to_host(const SplitField<T, Mem>& v) {
  auto re = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v.re);
  auto im = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v.im);
  std::vector<std::complex<T>> out(re.extent(0));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::complex<T>(re(i), im(i));
  return out;
}

template <class T, class Mem>
void from_host(const ExecSpace& exec, const SplitField<T, Mem>& v, const std::vector<std::complex<T>>& values) {
  auto re = Kokkos::create_mirror_view(v.re);
  auto im = Kokkos::create_mirror_view(v.im);
  for (std::size_t i = 0; i < values.size(); ++i) {
    re(i) = values[i].real();
    im(i) = values[i].imag();
  }
  Kokkos::deep_copy(exec, v.re, re);
  Kokkos::deep_copy(exec, v.im, im);
  exec.fence();
}

template <class T, class Field>
void init_field(const ExecSpace& exec, const Field& v, const InitSpec& s, const Block& b) {
  switch (s.kind) {
    case InitSpec::Kind::Fill: fill_constant(exec, v, s.re, s.im); break;
    case InitSpec::Kind::Random: fill_random(exec, v, s.seed, s.scale, static_cast<std::uint64_t>(b.first)); break;
    case InitSpec::Kind::File: {
      const npy::Info info = npy::read_info(s.path);
      std::vector<std::complex<T>> values(static_cast<std::size_t>(b.count));
      if (info.dtype == npy::DType::C8) {
        std::vector<std::complex<float>> raw(values.size());
        npy::read_elements(info, b.first, raw.size(), raw.data());
        std::copy(raw.begin(), raw.end(), values.begin());
      } else {
        std::vector<C16> raw(values.size());
        npy::read_elements(info, b.first, raw.size(), raw.data());
        for (std::size_t i = 0; i < raw.size(); ++i) values[i] = std::complex<T>(raw[i]);
      }
      from_host(exec, v, values);
      break;
    }
  }
  exec.fence();
}

// Fills the integrator's state from the deck's init or the restart file;
// returns the restart's delta[0..k0] (empty otherwise).
template <class T, class It>
std::vector<C16> load_state(const ExecSpace& exec, const Config& c, const Block& b, It& it) {
  if (!c.resumed) {
    init_field<T>(exec, it.F(), c.init_f, b);
    init_field<T>(exec, it.G(), c.init_g, b);
    return {};
  }
  std::vector<C16> history, rows;
  read_checkpoint_data(c.restart, *c.resumed, b.first, b.count, history, rows);
  std::vector<std::complex<T>> F(b.count), G(b.count);
  for (std::int64_t i = 0; i < b.count; ++i) {
    F[i] = std::complex<T>(rows[2 * i]);
    G[i] = std::complex<T>(rows[2 * i + 1]);
  }
  from_host(exec, it.F(), F);
  from_host(exec, it.G(), G);
  return history;
}

// A checkpoint of the state between steps (the CLI's observer of rk4::integrate).
template <class T>
void write_state_checkpoint(const Environment& env, const Config& c, const std::string& path, const StepState<T>& s,
                            const Block& b) {
  CheckpointHeader h;
  h.n = c.problem.n;
  h.step = s.step();
  h.field_bytes = sizeof(Kokkos::complex<T>);
  h.per_stage = c.problem.per_stage;
  h.stages = s.stages();
  h.kerr = c.problem.kerr;
  h.dt = c.problem.dt;
  h.g = c.problem.g;
  h.sums = s.sums();
  h.sum_im_g = s.sum_im_g();
  const auto history = s.delta(0, h.step);
  const auto F = to_host<T>(s.state().F);
  const auto G = to_host<T>(SplitField<T, ApiMemory>{s.state().G_re, s.state().G_im});
  std::vector<C16> rows(2 * static_cast<std::size_t>(b.count));
  for (std::int64_t i = 0; i < b.count; ++i) {
    rows[2 * i] = C16(F[i]);
    rows[2 * i + 1] = C16(G[i]);
  }
  write_checkpoint(env.comm(), path, h, history, static_cast<std::uint64_t>(b.first), rows);
}

}  // namespace kmini::rk4::detail
