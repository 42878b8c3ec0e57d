// Line–line squared distance (collision/distance/line_line.hpp).
#include "rigidiff/collision/distance/line_line.hpp"

#include "forms.hpp"

namespace rigidiff {

namespace {
constexpr auto kForm = [](const auto& x) { return distance::lineLineForm(x[0], x[1], x[2], x[3]); };
}  // namespace

double lineLineDistance(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  return distance::formValue<4>(kForm, {&ea0, &ea1, &eb0, &eb1});
}

Vec12 lineLineDistanceGradient(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  return distance::formGradient<4>(kForm, {&ea0, &ea1, &eb0, &eb1});
}

Mat12 lineLineDistanceHessian(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  return distance::formHessian<4>(kForm, {&ea0, &ea1, &eb0, &eb1});
}

}  // namespace rigidiff
