// Line–line squared distance (collision/distance/line_line.hpp).
#include "rigidiff/collision/distance/line_line.hpp"

#include "forms.hpp"

namespace rigidiff {

namespace {
// points: ea0 = 0, ea1 = 1, eb0 = 2, eb1 = 3; d0 = ea, d1 = eb along the lines, d2 = eb0 - ea0
constexpr distance::FormCall kLineLineForm{distance::Form::Volume, {{{1, 0}, {3, 2}, {2, 0}}}};
}  // namespace

double lineLineDistance(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  return distance::formValue<4>(kLineLineForm, {&ea0, &ea1, &eb0, &eb1});
}

Vec12 lineLineDistanceGradient(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  return distance::formGradient<4>(kLineLineForm, {&ea0, &ea1, &eb0, &eb1});
}

Mat12 lineLineDistanceHessian(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  return distance::formHessian<4>(kLineLineForm, {&ea0, &ea1, &eb0, &eb1});
}

}  // namespace rigidiff
