#include "discount/discount_api.hpp"

#include "core/timer.hpp"
#include "discount/discount_kernels.hpp"

namespace kmini::discount {
namespace {

template <class T>
void apply_any(const ApiExec& exec, const ApiRow<const T>& mult_by, const ApiRows<const T>& discount,
               const ApiRows<T>& cv) {
  ScopedRegion region("kmini::discount::apply");
  multiply_mdrange(exec, mult_by, discount, cv);
}

}  // namespace

void apply(const ApiExec& exec, const ApiRow<const double>& mult_by, const ApiRows<const double>& discount,
           const ApiRows<double>& cv, const ApplyParams&) {
  apply_any(exec, mult_by, discount, cv);
}

void apply(const ApiExec& exec, const ApiRow<const float>& mult_by, const ApiRows<const float>& discount,
           const ApiRows<float>& cv, const ApplyParams&) {
  apply_any(exec, mult_by, discount, cv);
}

}  // namespace kmini::discount
