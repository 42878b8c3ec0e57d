// IPC log barrier and its adaptive stiffness (contact/barrier.hpp).
#include "rigidiff/contact/barrier.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rigidiff {

double barrier(double s, double shat) {
  if (s >= shat) return 0.0;
  if (s <= 0.0) return std::numeric_limits<double>::infinity();
  return -(s - shat) * (s - shat) * std::log(s / shat);
}

double barrierFirstDerivative(double s, double shat) {
  if (s >= shat) return 0.0;
  return (shat - s) * (2.0 * std::log(s / shat) - shat / s + 1.0);
}

double barrierSecondDerivative(double s, double shat) {
  if (s >= shat) return 0.0;
  return (shat / s + 2.0) * shat / s - 2.0 * std::log(s / shat) - 3.0;
}

BarrierStiffness initialBarrierStiffness(double bbox_diagonal, double shat, double average_mass, double grad_dot,
                                         double grad_sq) {
  double d0 = 1e-8 * bbox_diagonal;
  d0 *= d0;
  if (d0 >= shat) d0 = 0.5 * shat;  // a scene so small that 1e-8 l is past dhat
  BarrierStiffness out;
  out.kappa_min = 1e11 * average_mass / (4.0 * d0 * barrierSecondDerivative(d0, shat));
  out.kappa_max = 100.0 * out.kappa_min;
  const double raw = grad_sq > 0.0 ? -grad_dot / grad_sq : 1.0;
  out.kappa = std::clamp(raw, out.kappa_min, out.kappa_max);
  return out;
}

double updateBarrierStiffness(double prev_min_s, double min_s, double kappa_max, double kappa, double bbox_diagonal) {
  double eps = 1e-9 * bbox_diagonal;
  eps *= eps;
  if (prev_min_s < eps && min_s < eps && min_s < prev_min_s) return std::min(kappa_max, 2.0 * kappa);
  return kappa;
}

}  // namespace rigidiff
