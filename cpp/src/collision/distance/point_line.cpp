// Point–line squared distance (collision/distance/point_line.hpp).
#include "rigidiff/collision/distance/point_line.hpp"

#include "forms.hpp"

namespace rigidiff {

namespace {
// points: p = 0, e0 = 1, e1 = 2; d0 = e1 - e0 along the line, d1 = p - e0
constexpr distance::FormCall kPointLineForm{distance::Form::PointLine, {{{2, 1}, {0, 1}}}};
}  // namespace

double pointLineDistance(const Vec3& p, const Vec3& e0, const Vec3& e1) {
  return distance::formValue<3>(kPointLineForm, {&p, &e0, &e1});
}

Vec9 pointLineDistanceGradient(const Vec3& p, const Vec3& e0, const Vec3& e1) {
  return distance::formGradient<3>(kPointLineForm, {&p, &e0, &e1});
}

Mat9 pointLineDistanceHessian(const Vec3& p, const Vec3& e0, const Vec3& e1) {
  return distance::formHessian<3>(kPointLineForm, {&p, &e0, &e1});
}

}  // namespace rigidiff
