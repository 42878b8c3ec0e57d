// Edge–edge squared distance and its classification (collision/distance/edge_edge.hpp).
#include "rigidiff/collision/distance/edge_edge.hpp"

#include <Eigen/Geometry>

#include "forms.hpp"

namespace rigidiff {

namespace {

using Type = EdgeEdgeDistanceType;

// Parallel edges: the closest pair is an end point against the other edge (or two end points). a0, a1
// are where eb0, eb1 project on edge A (0 at ea0, 1 at ea1).
Type parallelType(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  const Vec3 u = ea1 - ea0;
  const double uu = u.squaredNorm();
  const double a0 = (eb0 - ea0).dot(u) / uu;
  const double a1 = (eb1 - ea0).dot(u) / uu;
  const bool a0_inside = a0 >= 0.0 && a0 <= 1.0;
  const bool a1_inside = a1 >= 0.0 && a1 <= 1.0;
  if (a0_inside) return Type::EA_EB0;
  if (a1_inside) return Type::EA_EB1;
  if (a0 < 0.0) {                          // eb0 before ea0
    if (a1 <= a0) return Type::EA0_EB0;    // eb1 further before: eb0 is B's end nearest ea0
    if (a1 < 0.0) return Type::EA0_EB1;    // eb1 between eb0 and ea0
    return Type::EA0_EB;                   // B spans all of A: ea0 lies against edge B
  }
  if (a1 >= a0) return Type::EA1_EB0;      // eb0 after ea1 and eb1 further after
  if (a1 > 1.0) return Type::EA1_EB1;      // eb1 between ea1 and eb0
  return Type::EA1_EB;                     // B spans all of A the other way
}

}  // namespace

EdgeEdgeDistanceType edgeEdgeDistanceType(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  const Vec3 u = ea1 - ea0;
  const Vec3 v = eb1 - eb0;
  const Vec3 w = ea0 - eb0;
  const double uu = u.squaredNorm(), uv = u.dot(v), vv = v.squaredNorm(), uw = u.dot(w), vw = v.dot(w);
  if (uu == 0.0) return vv == 0.0 ? Type::EA0_EB0 : Type::EA0_EB;
  if (vv == 0.0) return Type::EA_EB0;
  if (u.cross(v).squaredNorm() < kEdgeEdgeParallelSin2 * uu * vv) return parallelType(ea0, ea1, eb0, eb1);

  // closest points of the two lines: ea0 + s u and eb0 + t v, s = s_num / det and t = t_num / t_den
  const double det = uu * vv - uv * uv;
  const double s_num = uv * vw - vv * uw;
  double t_num = uu * vw - uv * uw, t_den = det;
  Type interior = Type::EA_EB;
  if (s_num <= 0.0) {  // s clamps to 0: ea0 against edge B, t recomputed for that point
    t_num = vw;
    t_den = vv;
    interior = Type::EA0_EB;
  } else if (s_num >= det) {  // s clamps to 1: ea1 against edge B
    t_num = vw + uv;
    t_den = vv;
    interior = Type::EA1_EB;
  }
  if (t_num <= 0.0) {  // t clamps to 0: eb0 against edge A, s (times uu) recomputed for it
    const double s = -uw;
    return s <= 0.0 ? Type::EA0_EB0 : (s >= uu ? Type::EA1_EB0 : Type::EA_EB0);
  }
  if (t_num >= t_den) {  // t clamps to 1: eb1 against edge A
    const double s = uv - uw;
    return s <= 0.0 ? Type::EA0_EB1 : (s >= uu ? Type::EA1_EB1 : Type::EA_EB1);
  }
  return interior;
}

namespace {
// points: ea0 = 0, ea1 = 1, eb0 = 2, eb1 = 3; a point-line form's differences start at the edge's first end
distance::FormCall edgeEdgeForm(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, Type type) {
  using distance::Form;
  if (type == Type::Auto) type = edgeEdgeDistanceType(ea0, ea1, eb0, eb1);
  switch (type) {
    case Type::EA0_EB0: return {Form::PointPoint, {{{2, 0}}}};
    case Type::EA0_EB1: return {Form::PointPoint, {{{3, 0}}}};
    case Type::EA1_EB0: return {Form::PointPoint, {{{2, 1}}}};
    case Type::EA1_EB1: return {Form::PointPoint, {{{3, 1}}}};
    case Type::EA_EB0: return {Form::PointLine, {{{1, 0}, {2, 0}}}};
    case Type::EA_EB1: return {Form::PointLine, {{{1, 0}, {3, 0}}}};
    case Type::EA0_EB: return {Form::PointLine, {{{3, 2}, {0, 2}}}};
    case Type::EA1_EB: return {Form::PointLine, {{{3, 2}, {1, 2}}}};
    default: return {Form::Volume, {{{1, 0}, {3, 2}, {2, 0}}}};
  }
}
}  // namespace

double edgeEdgeDistance(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, Type type) {
  return distance::formValue<4>(edgeEdgeForm(ea0, ea1, eb0, eb1, type), {&ea0, &ea1, &eb0, &eb1});
}

Vec12 edgeEdgeDistanceGradient(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, Type type) {
  return distance::formGradient<4>(edgeEdgeForm(ea0, ea1, eb0, eb1, type), {&ea0, &ea1, &eb0, &eb1});
}

Mat12 edgeEdgeDistanceHessian(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, Type type) {
  return distance::formHessian<4>(edgeEdgeForm(ea0, ea1, eb0, eb1, type), {&ea0, &ea1, &eb0, &eb1});
}

}  // namespace rigidiff
