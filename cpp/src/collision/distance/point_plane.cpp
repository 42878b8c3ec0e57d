// Point–plane squared distance (collision/distance/point_plane.hpp).
#include "rigidiff/collision/distance/point_plane.hpp"

#include "forms.hpp"

namespace rigidiff {

namespace {
constexpr auto kForm = [](const auto& x) { return distance::pointPlaneForm(x[0], x[1], x[2], x[3]); };
}  // namespace

double pointPlaneDistance(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
  return distance::formValue<4>(kForm, {&p, &t0, &t1, &t2});
}

Vec12 pointPlaneDistanceGradient(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
  return distance::formGradient<4>(kForm, {&p, &t0, &t1, &t2});
}

Mat12 pointPlaneDistanceHessian(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
  return distance::formHessian<4>(kForm, {&p, &t0, &t1, &t2});
}

}  // namespace rigidiff
