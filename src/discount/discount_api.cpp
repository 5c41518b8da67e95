#include "discount/discount_api.hpp"

#include "core/timer.hpp"
#include "discount/discount.hpp"
#include "discount/impl/discount_kernels.hpp"

namespace kmini::discount {
namespace {

template <class T>
void apply_any(const ApiExec& exec, const ApiRow<const T>& mult_by, const ApiRows<const T>& discount,
               const ApiRows<T>& cv, const ApplyParams& params) {
  ScopedRegion region("kmini::discount::apply");
  using S = ApplyParams::Stores;
  const std::int64_t cv_bytes = static_cast<std::int64_t>(cv.span() * sizeof(T));
  const auto policy = params.policy == ApplyParams::Policy::Auto ? default_policy() : params.policy;
  auto multiply = [&](bool streaming) {
    const auto loads = params.loads == ApplyParams::Loads::Auto ? default_loads() : params.loads;
    const bool vector = loads == ApplyParams::Loads::Vector;
    if (streaming) multiply_streaming(exec, mult_by, discount, cv);
    else if (policy == ApplyParams::Policy::Wave || (vector && policy == ApplyParams::Policy::Flat))
      multiply_strided(exec, mult_by, discount, cv, policy == ApplyParams::Policy::Wave, vector);
    else if (policy == ApplyParams::Policy::Flat) multiply_flat(exec, mult_by, discount, cv);
    else multiply_mdrange(exec, mult_by, discount, cv);
  };
  bool streaming = kStreamingStores && params.stores == S::Streaming;
  if (kStreamingStores && params.stores == S::Auto) {
    // The first call of each size class times both kinds on the caller's
    // arrays (the products are the same either way); later calls reuse it.
    streaming = choose_stores(
                    cv_bytes, sizeof(T),
                    [&](bool s) {
                      exec.fence();
                      Kokkos::Timer timer;
                      multiply(s);
                      exec.fence();
                      return timer.seconds();
                    },
                    true)
                    .streaming;
  }
  multiply(streaming);
}

}  // namespace

bool streaming_stores_available() { return kStreamingStores; }

ApplyParams::Policy default_policy() {
  return Tuning::flat_policy ? ApplyParams::Policy::Flat : ApplyParams::Policy::MDRange;
}

ApplyParams::Loads default_loads() {
  return Tuning::vector_loads ? ApplyParams::Loads::Vector : ApplyParams::Loads::Scalar;
}

void apply(const ApiExec& exec, const ApiRow<const double>& mult_by, const ApiRows<const double>& discount,
           const ApiRows<double>& cv, const ApplyParams& params) {
  apply_any(exec, mult_by, discount, cv, params);
}

void apply(const ApiExec& exec, const ApiRow<const float>& mult_by, const ApiRows<const float>& discount,
           const ApiRows<float>& cv, const ApplyParams& params) {
  apply_any(exec, mult_by, discount, cv, params);
}

}  // namespace kmini::discount
