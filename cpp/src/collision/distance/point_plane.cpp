// Point–plane squared distance (collision/distance/point_plane.hpp).
#include "rigidiff/collision/distance/point_plane.hpp"

#include "forms.hpp"

namespace rigidiff {

namespace {
// points: p = 0, t0 = 1, t1 = 2, t2 = 3; d0 = t1 - t0, d1 = t2 - t0 span the plane, d2 = p - t0
constexpr distance::FormCall kPointPlaneForm{distance::Form::Volume, {{{2, 1}, {3, 1}, {0, 1}}}};
}  // namespace

double pointPlaneDistance(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
  return distance::formValue<4>(kPointPlaneForm, {&p, &t0, &t1, &t2});
}

Vec12 pointPlaneDistanceGradient(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
  return distance::formGradient<4>(kPointPlaneForm, {&p, &t0, &t1, &t2});
}

Mat12 pointPlaneDistanceHessian(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
  return distance::formHessian<4>(kPointPlaneForm, {&p, &t0, &t1, &t2});
}

}  // namespace rigidiff
