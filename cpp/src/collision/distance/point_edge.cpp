// Point–edge squared distance and its classification (collision/distance/point_edge.hpp).
#include "rigidiff/collision/distance/point_edge.hpp"

#include "forms.hpp"

namespace rigidiff {

PointEdgeDistanceType pointEdgeDistanceType(const Vec3& p, const Vec3& e0, const Vec3& e1) {
  const Vec3 e = e1 - e0;
  const double length2 = e.squaredNorm();
  if (length2 == 0.0) return PointEdgeDistanceType::P_E0;  // both ends coincide: either is the point
  const double s = e.dot(p - e0) / length2;                 // where p projects, 0 at e0 and 1 at e1
  if (s < 0.0) return PointEdgeDistanceType::P_E0;
  if (s > 1.0) return PointEdgeDistanceType::P_E1;
  return PointEdgeDistanceType::P_E;
}

namespace {
// points: p = 0, e0 = 1, e1 = 2
distance::FormCall pointEdgeForm(const Vec3& p, const Vec3& e0, const Vec3& e1, PointEdgeDistanceType type) {
  using distance::Form;
  if (type == PointEdgeDistanceType::Auto) type = pointEdgeDistanceType(p, e0, e1);
  switch (type) {
    case PointEdgeDistanceType::P_E0: return {Form::PointPoint, {{{0, 1}}}};
    case PointEdgeDistanceType::P_E1: return {Form::PointPoint, {{{0, 2}}}};
    default: return {Form::PointLine, {{{2, 1}, {0, 1}}}};
  }
}
}  // namespace

double pointEdgeDistance(const Vec3& p, const Vec3& e0, const Vec3& e1, PointEdgeDistanceType type) {
  return distance::formValue<3>(pointEdgeForm(p, e0, e1, type), {&p, &e0, &e1});
}

Vec9 pointEdgeDistanceGradient(const Vec3& p, const Vec3& e0, const Vec3& e1, PointEdgeDistanceType type) {
  return distance::formGradient<3>(pointEdgeForm(p, e0, e1, type), {&p, &e0, &e1});
}

Mat9 pointEdgeDistanceHessian(const Vec3& p, const Vec3& e0, const Vec3& e1, PointEdgeDistanceType type) {
  return distance::formHessian<3>(pointEdgeForm(p, e0, e1, type), {&p, &e0, &e1});
}

}  // namespace rigidiff
