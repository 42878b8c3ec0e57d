// The frame a lagged friction pair (barrier_friction.hpp) freezes at the start of a step, as a function of
// its points' start positions: the closest points' weights c_k, the tangent basis T and the squared
// distance s whose barrier gives the normal force. Written once over the scalar type, so that the step
// evaluates it in doubles and its derivatives (barrier_friction_derivatives.hpp) in forward-mode dual
// numbers, which carry how the frame moves with the start state. The distance type (which vertex, edge or
// face is closest) is chosen on the values: it is constant under an infinitesimal change.
#pragma once

#include <cmath>
#include <unsupported/Eigen/AutoDiff>
#include <utility>

#include "rigidiff/collision/distance/edge_edge.hpp"
#include "rigidiff/collision/distance/point_triangle.hpp"
#include "rigidiff/contact/barrier.hpp"
#include "rigidiff/fwd.hpp"
#include "rigidiff/world/barrier_world.hpp"

namespace rigidiff {
namespace friction_frame {

template <class S>
using Vec3T = Eigen::Matrix<S, 3, 1>;

inline double valueOf(double x) { return x; }
template <class D>
double valueOf(const Eigen::AutoDiffScalar<D>& x) {
  return x.value();
}

/// f(x) given its value and slope at x's value: x's derivatives carried through the chain rule.
inline double chain(double value, double /*slope*/, double /*x*/) { return value; }
template <class D>
Eigen::AutoDiffScalar<D> chain(double value, double slope, const Eigen::AutoDiffScalar<D>& x) {
  return Eigen::AutoDiffScalar<D>(value, slope * x.derivatives());
}

/// x clamped to [0, 1] (a constant at the bounds).
template <class S>
S unitClamp(const S& x) {
  if (valueOf(x) <= 0.0) return S(0.0);
  if (valueOf(x) >= 1.0) return S(1.0);
  return x;
}

/// Parameter of the point of segment (a, b) closest to p.
template <class S>
S segmentParameter(const Vec3T<S>& p, const Vec3T<S>& a, const Vec3T<S>& b) {
  const Vec3T<S> e = b - a;
  const S len2 = e.squaredNorm();
  return valueOf(len2) > 0.0 ? unitClamp<S>((p - a).dot(e) / len2) : S(0.0);
}

/// Weights (w0, w1, w2) of the point of triangle (t0, t1, t2) closest to p.
template <class S>
Vec3T<S> triangleWeights(const Vec3T<S>& p, const Vec3T<S>& t0, const Vec3T<S>& t1, const Vec3T<S>& t2) {
  using T = PointTriangleDistanceType;
  const auto v = [](const Vec3T<S>& x) { return Vec3(valueOf(x[0]), valueOf(x[1]), valueOf(x[2])); };
  const T type = pointTriangleDistanceType(v(p), v(t0), v(t1), v(t2));
  const Vec3T<S>* t[3] = {&t0, &t1, &t2};
  Vec3T<S> w(S(0.0), S(0.0), S(0.0));
  switch (type) {
    case T::P_T0: case T::P_T1: case T::P_T2:
      w[static_cast<int>(type)] = S(1.0);
      break;
    case T::P_E0: case T::P_E1: case T::P_E2: {
      const int i = static_cast<int>(type) - 3, j = (i + 1) % 3;
      const S s = segmentParameter<S>(p, *t[i], *t[j]);
      w[i] = 1.0 - s;
      w[j] = s;
      break;
    }
    default: {  // the inside: the barycentric coordinates of p's projection (Cramer's rule on the 2 x 2 normal equations)
      const Vec3T<S> e1 = t1 - t0, e2 = t2 - t0, r = p - t0;
      const S a = e1.dot(e1), b = e1.dot(e2), c = e2.dot(e2), f = r.dot(e1), g = r.dot(e2);
      const S det = a * c - b * b;
      const S s = (c * f - b * g) / det, u = (a * g - b * f) / det;
      w = Vec3T<S>(1.0 - s - u, s, u);
    }
  }
  return w;
}

/// Parameters (alpha on edge A, beta on edge B) of the closest points of two segments.
template <class S>
std::pair<S, S> edgeParameters(const Vec3T<S>& ea0, const Vec3T<S>& ea1, const Vec3T<S>& eb0, const Vec3T<S>& eb1) {
  using T = EdgeEdgeDistanceType;
  const auto v = [](const Vec3T<S>& x) { return Vec3(valueOf(x[0]), valueOf(x[1]), valueOf(x[2])); };
  const S zero(0.0), one(1.0);
  switch (edgeEdgeDistanceType(v(ea0), v(ea1), v(eb0), v(eb1))) {
    case T::EA0_EB0: return {zero, zero};
    case T::EA0_EB1: return {zero, one};
    case T::EA1_EB0: return {one, zero};
    case T::EA1_EB1: return {one, one};
    case T::EA_EB0: return {segmentParameter<S>(eb0, ea0, ea1), zero};
    case T::EA_EB1: return {segmentParameter<S>(eb1, ea0, ea1), one};
    case T::EA0_EB: return {zero, segmentParameter<S>(ea0, eb0, eb1)};
    case T::EA1_EB: return {one, segmentParameter<S>(ea1, eb0, eb1)};
    default: {  // the two insides: the 2 x 2 normal equations by Cramer's rule
      const Vec3T<S> u = ea1 - ea0, w = eb1 - eb0, r = ea0 - eb0;
      const S a = u.dot(u), b = -u.dot(w), c = w.dot(w), f = -u.dot(r), g = w.dot(r);
      const S det = a * c - b * b;
      return {unitClamp<S>((c * f - b * g) / det), unitClamp<S>((a * g - b * f) / det)};
    }
  }
}

/// A tangent basis (3 x 2) orthogonal to the unit normal n.
template <class S>
Eigen::Matrix<S, 3, 2> tangentBasis(const Vec3T<S>& n) {
  // the axis least aligned with n (chosen on the values) keeps the cross product well conditioned
  const Vec3 a(std::abs(valueOf(n[0])), std::abs(valueOf(n[1])), std::abs(valueOf(n[2])));
  Eigen::Index k;
  a.minCoeff(&k);
  Vec3T<S> axis(S(0.0), S(0.0), S(0.0));
  axis[k] = S(1.0);
  using std::sqrt;
  Vec3T<S> t1 = n.cross(axis);
  t1 /= sqrt(t1.squaredNorm());
  Eigen::Matrix<S, 3, 2> T;
  T.col(0) = t1;
  T.col(1) = n.cross(t1);
  return T;
}

/// What a friction pair freezes: npts points (1: a point against a plane, else 4) with weights c_k (the
/// second side's negative), the tangent basis, the squared distance s and the normal force lambda.
template <class S>
struct Frame {
  int npts = 0;
  S weight[4];
  Eigen::Matrix<S, 3, 2> basis;
  S s, lambda;
};

/// The weights, basis and s of a point–triangle (point, then the triangle's three) or edge–edge (edge A's
/// two, then edge B's) pair at the points pts; false when they touch (no normal).
template <class S>
bool pointsFrame(bool point_triangle, const Vec3T<S>* pts, Frame<S>& out) {
  out.npts = 4;
  if (point_triangle) {
    const Vec3T<S> w = triangleWeights<S>(pts[0], pts[1], pts[2], pts[3]);
    out.weight[0] = S(1.0);
    for (int k = 0; k < 3; ++k) out.weight[k + 1] = -w[k];
  } else {
    const auto [alpha, beta] = edgeParameters<S>(pts[0], pts[1], pts[2], pts[3]);
    out.weight[0] = 1.0 - alpha;
    out.weight[1] = alpha;
    out.weight[2] = beta - 1.0;
    out.weight[3] = -beta;
  }
  Vec3T<S> gap(S(0.0), S(0.0), S(0.0));
  for (int k = 0; k < 4; ++k) gap += out.weight[k] * pts[k];
  out.s = gap.squaredNorm();
  if (!(valueOf(out.s) > 0.0)) return false;
  using std::sqrt;
  out.basis = tangentBasis<S>(gap / sqrt(out.s));
  return true;
}

/// The weights, basis and s of a point at x against the plane normal . x = offset (normal unit): one point
/// of weight 1.
template <class S>
void planeFrame(const Vec3T<S>& x, const Vec3& normal, double offset, Frame<S>& out) {
  out.npts = 1;
  out.weight[0] = S(1.0);
  const S gap = normal.cast<S>().dot(x) - offset;
  out.s = gap * gap;
  out.basis = tangentBasis<S>(normal.cast<S>()).eval();
}

/// The frame of barrier pair p (barrier_world.hpp) with barrier stiffness kappa, its points placed by
/// point(body, vertex) -> Vec3T<S>; body[k] and xbar[k] receive each point's body and body coordinates.
/// False when the pair exerts no normal force (touching, or at dhat): it takes no part in friction.
template <class S, class Point>
bool pairFrame(const BarrierWorldModel& model, const BarrierPair& p, double kappa, Point&& point, Frame<S>& f,
               int* body, Vec3* xbar) {
  const AffineBody& A = model.bodies[p.body_a];
  if (p.kind == BarrierPair::PointPlane) {
    const GroundPlane& g = model.planes[p.body_b];
    body[0] = p.body_a;
    xbar[0] = A.rest[p.a];
    planeFrame<S>(point(p.body_a, p.a), g.normal, g.offset, f);
  } else {
    const AffineBody& B = model.bodies[p.body_b];
    const bool pt = p.kind == BarrierPair::PointTriangle;
    const int first = pt ? 1 : 2;  // points of body a
    int idx[4];
    if (pt) {
      const auto& t = B.faces[p.b];
      idx[0] = p.a, idx[1] = t[0], idx[2] = t[1], idx[3] = t[2];
    } else {
      const auto &ea = A.edges[p.a], &eb = B.edges[p.b];
      idx[0] = ea[0], idx[1] = ea[1], idx[2] = eb[0], idx[3] = eb[1];
    }
    Vec3T<S> pts[4];
    for (int k = 0; k < 4; ++k) {
      body[k] = k < first ? p.body_a : p.body_b;
      xbar[k] = model.bodies[body[k]].rest[idx[k]];
      pts[k] = point(body[k], idx[k]);
    }
    if (!pointsFrame<S>(pt, pts, f)) return false;
  }
  // the normal force of the pair's barrier in the potential's units, lambda = -kappa b'(s) 2 sqrt(s) (edge–edge
  // terms without their mollifier's own gradient, which only fades nearly parallel pairs)
  const double shat = model.options.dhat * model.options.dhat, s = valueOf(f.s), r = std::sqrt(s);
  const double b1 = barrierFirstDerivative(s, shat), b2 = barrierSecondDerivative(s, shat);
  f.lambda = chain(-kappa * b1 * 2.0 * r, -kappa * (2.0 * b2 * r + b1 / r), f.s);
  return valueOf(f.lambda) > 0.0;
}

/// G (2 x 24) mapping the coordinates of a pair's one or two bodies (slot[k] of point k: 0 the first body's
/// 12, 1 the second's) to the slip u = T^T sum_k c_k J(xbar_k) dq, for weights c_k and the tangent basis T.
template <class S>
Eigen::Matrix<S, 2, 24> slipMap(int npts, const S* weight, const Eigen::Matrix<S, 3, 2>& basis, const Vec3* xbar,
                                const int* slot) {
  Eigen::Matrix<S, 2, 24> G;
  G.setConstant(S(0.0));
  for (int k = 0; k < npts; ++k) {
    // T^T J(xbar) without forming J: column p_i is T's row i, column a_i's entry m is that times xbar_m
    const int at = 12 * slot[k];
    for (int i = 0; i < 3; ++i) {
      const Eigen::Matrix<S, 2, 1> t = weight[k] * basis.row(i).transpose();
      G.col(at + i) += t;
      for (int m = 0; m < 3; ++m) G.col(at + 3 + 3 * i + m) += t * xbar[k][m];
    }
  }
  return G;
}

/// f1(y) / y of IPC's friction mollifier f0 (eps = eps_v dt) at slip length y = |u|: the friction force
/// on the slip is mu lambda f1(y) / y u.
template <class S>
S mollifierRatio(const S& y, double eps) {
  if (valueOf(y) >= eps) return 1.0 / y;
  if (valueOf(y) == 0.0) return S(2.0 / eps);  // the limit; y's own derivative is not defined there
  return 2.0 / eps - y / (eps * eps);
}

}  // namespace friction_frame
}  // namespace rigidiff
