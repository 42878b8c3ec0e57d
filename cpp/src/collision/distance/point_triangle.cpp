// Point–triangle squared distance and its classification (collision/distance/point_triangle.hpp).
#include "rigidiff/collision/distance/point_triangle.hpp"

#include "forms.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

PointTriangleDistanceType pointTriangleDistanceType(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
  const Vec3 normal = (t1 - t0).cross(t2 - t0);
  RD_CHECK_ARG(normal.squaredNorm() > 0.0,
               "the triangle has zero area (collinear vertices), so the point has no closest feature type");
  const Vec3* t[3] = {&t0, &t1, &t2};
  // along[k]: where p projects on edge k (0 at its start t_k, 1 at its end t_{k+1})
  double along[3];
  for (int k = 0; k < 3; ++k) {
    const Vec3& a = *t[k];
    const Vec3 e = *t[(k + 1) % 3] - a;
    along[k] = e.dot(p - a) / e.squaredNorm();
    // e x normal points out of the triangle across edge k: p beyond the edge, between its ends
    const bool outside = e.cross(normal).dot(p - a) >= 0.0;
    if (outside && along[k] > 0.0 && along[k] < 1.0) return static_cast<PointTriangleDistanceType>(3 + k);
  }
  // a vertex is closest when p lies before the edge leaving it and past the edge arriving at it
  if (along[0] <= 0.0 && along[2] >= 1.0) return PointTriangleDistanceType::P_T0;
  if (along[1] <= 0.0 && along[0] >= 1.0) return PointTriangleDistanceType::P_T1;
  if (along[2] <= 0.0 && along[1] >= 1.0) return PointTriangleDistanceType::P_T2;
  return PointTriangleDistanceType::P_T;
}

namespace {
// points: p = 0, t0 = 1, t1 = 2, t2 = 3; an edge's differences start at its first vertex
distance::FormCall pointTriangleForm(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2,
                                     PointTriangleDistanceType type) {
  using distance::Form;
  if (type == PointTriangleDistanceType::Auto) type = pointTriangleDistanceType(p, t0, t1, t2);
  switch (type) {
    case PointTriangleDistanceType::P_T0: return {Form::PointPoint, {{{0, 1}}}};
    case PointTriangleDistanceType::P_T1: return {Form::PointPoint, {{{0, 2}}}};
    case PointTriangleDistanceType::P_T2: return {Form::PointPoint, {{{0, 3}}}};
    case PointTriangleDistanceType::P_E0: return {Form::PointLine, {{{2, 1}, {0, 1}}}};
    case PointTriangleDistanceType::P_E1: return {Form::PointLine, {{{3, 2}, {0, 2}}}};
    case PointTriangleDistanceType::P_E2: return {Form::PointLine, {{{1, 3}, {0, 3}}}};
    default: return {Form::Volume, {{{2, 1}, {3, 1}, {0, 1}}}};
  }
}
}  // namespace

double pointTriangleDistance(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2,
                             PointTriangleDistanceType type) {
  return distance::formValue<4>(pointTriangleForm(p, t0, t1, t2, type), {&p, &t0, &t1, &t2});
}

Vec12 pointTriangleDistanceGradient(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2,
                                    PointTriangleDistanceType type) {
  return distance::formGradient<4>(pointTriangleForm(p, t0, t1, t2, type), {&p, &t0, &t1, &t2});
}

Mat12 pointTriangleDistanceHessian(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2,
                                   PointTriangleDistanceType type) {
  return distance::formHessian<4>(pointTriangleForm(p, t0, t1, t2, type), {&p, &t0, &t1, &t2});
}

}  // namespace rigidiff
