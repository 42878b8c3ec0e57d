// Edge–edge mollifier and its threshold (collision/distance/edge_edge_mollifier.hpp).
#include "rigidiff/collision/distance/edge_edge_mollifier.hpp"

#include "forms.hpp"

namespace rigidiff {

namespace {

constexpr auto kThreshold = [](const auto& x) {
  return squaredNorm(x[1] - x[0]) * squaredNorm(x[3] - x[2]) * kEdgeEdgeMollifierScale;
};

struct Mollifier {
  double eps_x;
  template <class T>
  T operator()(const std::array<distance::Point3<T>, 4>& x) const {
    const T c = squaredNorm(cross(x[1] - x[0], x[3] - x[2]));
    if (!(distance::valueOf(c) < eps_x)) return T(1.0);  // constant beyond the threshold
    const T r = c / eps_x;
    return r * (2.0 - r);
  }
};

}  // namespace

double edgeEdgeMollifierThreshold(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  return distance::formValue<4>(kThreshold, {&ea0, &ea1, &eb0, &eb1});
}

Vec12 edgeEdgeMollifierThresholdGradient(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  return distance::formGradient<4>(kThreshold, {&ea0, &ea1, &eb0, &eb1});
}

Mat12 edgeEdgeMollifierThresholdHessian(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  return distance::formHessian<4>(kThreshold, {&ea0, &ea1, &eb0, &eb1});
}

double edgeEdgeMollifier(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, double eps_x) {
  return distance::formValue<4>(Mollifier{eps_x}, {&ea0, &ea1, &eb0, &eb1});
}

Vec12 edgeEdgeMollifierGradient(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, double eps_x) {
  return distance::formGradient<4>(Mollifier{eps_x}, {&ea0, &ea1, &eb0, &eb1});
}

Mat12 edgeEdgeMollifierHessian(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, double eps_x) {
  return distance::formHessian<4>(Mollifier{eps_x}, {&ea0, &ea1, &eb0, &eb1});
}

}  // namespace rigidiff
