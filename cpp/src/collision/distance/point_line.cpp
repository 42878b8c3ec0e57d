// Point–line squared distance (collision/distance/point_line.hpp).
#include "rigidiff/collision/distance/point_line.hpp"

#include "forms.hpp"

namespace rigidiff {

namespace {
constexpr auto kForm = [](const auto& x) { return distance::pointLineForm(x[0], x[1], x[2]); };
}  // namespace

double pointLineDistance(const Vec3& p, const Vec3& e0, const Vec3& e1) {
  return distance::formValue<3>(kForm, {&p, &e0, &e1});
}

Vec9 pointLineDistanceGradient(const Vec3& p, const Vec3& e0, const Vec3& e1) {
  return distance::formGradient<3>(kForm, {&p, &e0, &e1});
}

Mat9 pointLineDistanceHessian(const Vec3& p, const Vec3& e0, const Vec3& e1) {
  return distance::formHessian<3>(kForm, {&p, &e0, &e1});
}

}  // namespace rigidiff
