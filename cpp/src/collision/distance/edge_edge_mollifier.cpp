// Edge–edge mollifier and its threshold (collision/distance/edge_edge_mollifier.hpp).
#include "rigidiff/collision/distance/edge_edge_mollifier.hpp"

#include "forms.hpp"

namespace rigidiff {

namespace {
// both on the edge vectors ea = ea1 - ea0 and eb = eb1 - eb0
constexpr distance::FormCall kThreshold{distance::Form::Threshold, {{{1, 0}, {3, 2}}}, kEdgeEdgeMollifierScale};

distance::FormCall mollifier(double eps_x) { return {distance::Form::Mollifier, {{{1, 0}, {3, 2}}}, eps_x}; }
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
  return distance::formValue<4>(mollifier(eps_x), {&ea0, &ea1, &eb0, &eb1});
}

Vec12 edgeEdgeMollifierGradient(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, double eps_x) {
  return distance::formGradient<4>(mollifier(eps_x), {&ea0, &ea1, &eb0, &eb1});
}

Mat12 edgeEdgeMollifierHessian(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, double eps_x) {
  return distance::formHessian<4>(mollifier(eps_x), {&ea0, &ea1, &eb0, &eb1});
}

}  // namespace rigidiff
