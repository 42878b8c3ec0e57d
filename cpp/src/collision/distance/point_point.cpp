// Point–point squared distance (collision/distance/point_point.hpp).
#include "rigidiff/collision/distance/point_point.hpp"

#include "forms.hpp"

namespace rigidiff {

namespace {
// d0 = p1 - p0
constexpr distance::FormCall kPointPointForm{distance::Form::PointPoint, {{{1, 0}}}};
}  // namespace

double pointPointDistance(const Vec3& p0, const Vec3& p1) {
  return distance::formValue<2>(kPointPointForm, {&p0, &p1});
}

Vec6 pointPointDistanceGradient(const Vec3& p0, const Vec3& p1) {
  return distance::formGradient<2>(kPointPointForm, {&p0, &p1});
}

Mat6 pointPointDistanceHessian(const Vec3& p0, const Vec3& p1) {
  return distance::formHessian<2>(kPointPointForm, {&p0, &p1});
}

}  // namespace rigidiff
