#include "rigidiff/collision/feature_derivatives.hpp"

#include <cmath>

namespace rigidiff {

namespace {

using Jac = StencilJacobian;
using Grad = StencilGradient;

// the Jacobian of stencil point at column col: the identity on its own three columns
Jac pointSelector(int col, int total) {
  Jac J = Jac::Zero(3, total);
  J.middleCols<3>(col).setIdentity();
  return J;
}

// the unit direction of x1 - x0 (points at columns c0, c1) moves by (I - u u^T) (dx1 - dx0) / |x1 - x0|
Jac directionJacobian(const Vec3& x0, const Vec3& x1, int c0, int c1, int total) {
  const Vec3 e = x1 - x0;
  const double len = e.norm();
  const Vec3 u = e / len;
  const Mat3 P = (Mat3::Identity() - u * u.transpose()) / len;
  Jac J = Jac::Zero(3, total);
  J.middleCols<3>(c1) = P;
  J.middleCols<3>(c0) = -P;
  return J;
}

// the unit normal c / |c| of the plane through stencil points k, k + 1, k + 2 (first column col), with
// c = e1 x e2, e1 = x1 - x0, e2 = x2 - x0: dc = -[e2]x de1 + [e1]x de2
Jac planeNormalJacobian(const FeatureStencil& s, int k, int col, int total) {
  const Vec3& x0 = s.points[k];
  const Vec3 e1 = s.points[k + 1] - x0, e2 = s.points[k + 2] - x0;
  const Vec3 c = e1.cross(e2);
  const double len = c.norm();
  const Vec3 n = c / len;
  const Mat3 P = (Mat3::Identity() - n * n.transpose()) / len;
  const Mat3 S1 = skew(e1), S2 = skew(e2);
  Jac J = Jac::Zero(3, total);
  J.middleCols<3>(col) = P * (S2 - S1);
  J.middleCols<3>(col + 3) = -P * S2;
  J.middleCols<3>(col + 6) = P * S1;
  return J;
}

// the foot c + u (u . (x - c)) of x on the line (c, u)
Jac lineFootJacobian(const Vec3& x, const Vec3& c, const Vec3& u, const Jac& dx, const Jac& dc, const Jac& du) {
  const Vec3 r = x - c;
  const Grad dh = r.transpose() * du + u.transpose() * (dx - dc);
  return dc + u * dh + u.dot(r) * du;
}

// the foot x - n (n . (x - c)) of x on the plane through c with unit normal n
Jac planeFootJacobian(const Vec3& x, const Vec3& c, const Vec3& n, const Jac& dx, const Jac& dc, const Jac& dn) {
  const Vec3 r = x - c;
  const Grad dh = r.transpose() * dn + n.transpose() * (dx - dc);
  return dx - n * dh - n.dot(r) * dn;
}

// closest points of two crossing lines (pa, ua), (pb, ub) and their common perpendicular n (unit, its
// sign already chosen): pa + s ua and pb + t ub with s, t the closed forms of evaluateFeatures
void crossingLinesJacobians(const Vec3& pa, const Vec3& ua, const Vec3& pb, const Vec3& ub, const Vec3& n,
                            const Jac& dpa, const Jac& dpb, const Jac& dua, const Jac& dub, Jac& dca, Jac& dcb,
                            Jac& dn) {
  const Vec3 w = pa - pb;
  const Jac dw = dpa - dpb;
  const double k = ua.dot(ub), den = 1.0 - k * k, aw = ua.dot(w), bw = ub.dot(w);
  const double s = (k * bw - aw) / den, t = (bw - k * aw) / den;
  const Grad dk = ub.transpose() * dua + ua.transpose() * dub;
  const Grad daw = w.transpose() * dua + ua.transpose() * dw;
  const Grad dbw = w.transpose() * dub + ub.transpose() * dw;
  const Grad dden = -2.0 * k * dk;
  // quotient rule on s = (k bw - aw) / den and t = (bw - k aw) / den: both lines move both points
  const Grad ds = (bw * dk + k * dbw - daw - s * dden) / den;
  const Grad dt = (dbw - aw * dk - k * daw - t * dden) / den;
  dca = dpa + ua * ds + s * dua;
  dcb = dpb + ub * dt + t * dub;
  // n = sign * c / |c| with c = ua x ub and |c| = sqrt(den): the normalisation projects dc orthogonally
  // to n (Nimble leaves it out); the sign is folded in because n, not c / |c|, multiplies dc
  const Vec3 c = ua.cross(ub);
  const double sign = n.dot(c) >= 0.0 ? 1.0 : -1.0;
  const Jac dc = -skew(ub) * dua + skew(ua) * dub;
  dn = (sign / std::sqrt(den)) * (Mat3::Identity() - n * n.transpose()) * dc;
}

// a Circle feature's point x = c + r (cos t e + sin t (a x e)), e = -m / |m| with m = n - (n . a) a: the
// centre and the axis a (stencil points 0 and 1) move with A, the face normal n (dn) with B, and the point
// slides along the circle; lying flat, e is stencil point 2's offset, made orthogonal to the axis
Jac circlePointJacobian(const Feature& f, const FeatureStencil& s, const Vec3& n, const Jac& dn, int total) {
  const Vec3& x0 = s.points[0];
  const Vec3 axis = (s.points[1] - x0).normalized();
  const Jac da = directionJacobian(x0, s.points[1], 0, 3, total);
  const Vec3 m = n - n.dot(axis) * axis;
  const double len = m.norm();
  Vec3 e;
  Jac de;
  if (len > kCircleTiltTolerance) {
    e = -m / len;
    const Grad dna = axis.transpose() * dn + n.transpose() * da;
    const Jac dm = dn - axis * dna - n.dot(axis) * da;
    de = -(Mat3::Identity() - e * e.transpose()) * dm / len;
  } else {  // flat: h = g - (a . g) a, e = h / |h|, with g the offset of point 2
    const Vec3 g = s.points[2] - x0;
    const Vec3 h = g - axis.dot(g) * axis;
    const double hl = h.norm();
    e = h / hl;
    const Jac dg = pointSelector(6, total) - pointSelector(0, total);
    const Grad dag = g.transpose() * da + axis.transpose() * dg;
    const Jac dh = dg - axis * dag - axis.dot(g) * da;
    de = (Mat3::Identity() - e * e.transpose()) * dh / hl;
  }
  const double c = std::cos(f.angle), sn = std::sin(f.angle);
  const Jac df = -skew(e) * da + skew(axis) * de;  // d(a x e)
  return pointSelector(0, total) + f.radius * (c * de + sn * df);
}

// an EdgeCut's point x = c + t u, t = (sn . (sp - c)) / (sn . u): the edge (c, u) is the edge stencil's
// (first column ce), the side plane (sp, sn) the face stencil's points 3 to 5 (its first column cf)
Jac edgeCutPointJacobian(const FeatureStencil& edge, int ce, const FeatureStencil& face, int cf, int total) {
  const Vec3& c = edge.points[0];
  const Vec3 u = (edge.points[1] - c).normalized();
  const Vec3& sp = face.points[3];
  const Vec3 sn = (face.points[4] - sp).cross(face.points[5] - sp).normalized();
  const Jac dc = pointSelector(ce, total);
  const double den = sn.dot(u);
  if (std::abs(den) <= kEdgeCutTolerance) return dc;  // evaluateFeatures' branch: the edge's point
  const double t = sn.dot(sp - c) / den;
  const Jac du = directionJacobian(c, edge.points[1], ce, ce + 3, total);
  const Jac dsn = planeNormalJacobian(face, 3, cf + 9, total);
  const Grad dnum = (sp - c).transpose() * dsn + sn.transpose() * (pointSelector(cf + 9, total) - dc);
  const Grad dden = u.transpose() * dsn + sn.transpose() * du;
  return dc + u * ((dnum - t * dden) / den) + t * du;
}

}  // namespace

void evaluateFeaturePointDerivatives(const Feature& a, const SE3& Ma, const Feature& b, const SE3& Mb,
                                     const Vec3& fallback_normal, FeatureGeometry& value,
                                     FeaturePointDerivatives& deriv) {
  // the value is evaluateFeatures' own, so both always agree on the branch and the sign
  value = evaluateFeatures(a, Ma, b, Mb, fallback_normal);
  deriv.a = featureStencil(a, Ma, b.kind == FeatureKind::EdgeCut);
  deriv.b = featureStencil(b, Mb, a.kind == FeatureKind::EdgeCut);
  const FeatureStencil &sa = deriv.a, &sb = deriv.b;
  const int cb0 = 3 * sa.count, total = cb0 + 3 * sb.count;  // B's first column, all columns
  const Vec3& n = value.normal;
  const Vec3 ca = value.point_a + a.margin * n, cb = value.point_b - b.margin * n;
  // circles and edge cuts only stand against a face (contactType refuses the rest); a face's normal is
  // that of its stencil's first three points
  Vec3 pa, pb;
  Jac dpa, dpb;
  if (a.kind == FeatureKind::Circle) {
    pa = circlePoint(a, Ma, Mb.R * b.d);
    dpa = circlePointJacobian(a, sa, Mb.R * b.d, planeNormalJacobian(sb, 0, cb0, total), total);
  } else if (a.kind == FeatureKind::EdgeCut) {
    pa = edgeCutPoint(a, Ma, b, Mb);
    dpa = edgeCutPointJacobian(sa, 0, sb, cb0, total);
  } else {
    pa = sa.points[0];
    dpa = pointSelector(0, total);
  }
  if (b.kind == FeatureKind::EdgeCut) {
    pb = edgeCutPoint(b, Mb, a, Ma);
    dpb = edgeCutPointJacobian(sb, cb0, sa, 0, total);
  } else {
    pb = sb.points[0];
    dpb = pointSelector(cb0, total);
  }
  Jac dca, dcb, dn;
  bool centre_normal = true;  // is n the direction of ca - cb (or the fallback)?
  switch (contactType(a.kind, b.kind)) {
    case ContactType::PointFace:  // the normal is B's face normal; B's witness is A's point on B's plane
    case ContactType::EdgeFace:
      dn = planeNormalJacobian(sb, 0, cb0, total);
      dca = dpa;
      dcb = planeFootJacobian(pa, pb, n, dpa, dpb, dn);
      centre_normal = false;
      break;
    case ContactType::FacePoint:  // n = -(A's outward normal); A's witness is B's point on A's plane
    case ContactType::FaceEdge:
      dn = -planeNormalJacobian(sa, 0, 0, total);
      dcb = dpb;
      dca = planeFootJacobian(pb, pa, n, dpb, dpa, dn);
      centre_normal = false;
      break;
    case ContactType::PointPoint:
      dca = dpa;
      dcb = dpb;
      break;
    case ContactType::SegmentPoint: {
      const Vec3 ua = Ma.R * a.d;
      dcb = dpb;
      dca = lineFootJacobian(pb, pa, ua, dpb, dpa, directionJacobian(sa.points[0], sa.points[1], 0, 3, total));
      break;
    }
    case ContactType::SegmentSegment: {
      const Vec3 ua = Ma.R * a.d, ub = Mb.R * b.d;
      const double k = ua.dot(ub);
      if (1.0 - k * k > kParallelLinesTolerance) {
        crossingLinesJacobians(pa, ua, pb, ub, n, dpa, dpb,
                               directionJacobian(sa.points[0], sa.points[1], 0, 3, total),
                               directionJacobian(sb.points[0], sb.points[1], cb0, cb0 + 3, total), dca, dcb, dn);
        centre_normal = false;
        break;
      }
      // parallel lines: A's point against B's line, as evaluateFeatures does
      [[fallthrough]];
    }
    case ContactType::PointSegment: {
      const Vec3 ub = Mb.R * b.d;
      dca = dpa;
      dcb = lineFootJacobian(pa, pb, ub, dpa, dpb, directionJacobian(sb.points[0], sb.points[1], cb0, cb0 + 3, total));
      break;
    }
  }
  const Vec3 w = ca - cb;
  if (centre_normal) {
    // n = w / |w|, unless the centres coincide: then the fallback stands in and is held fixed
    const double len = w.norm();
    if (len > kCoincidentCentresTolerance * (1.0 + ca.norm()))
      dn = (Mat3::Identity() - n * n.transpose()) * (dca - dcb) / len;
    else
      dn = Jac::Zero(3, total);
  }
  // point = (ca + cb) / 2 + (mb - ma) n / 2, distance = n . (ca - cb) - ma - mb
  deriv.dnormal = dn;
  deriv.dpoint = 0.5 * (dca + dcb) + (0.5 * (b.margin - a.margin)) * dn;
  deriv.ddistance = w.transpose() * dn + n.transpose() * (dca - dcb);
}

namespace {

// columns [col, col + 6) of T += D chained through a rigid motion of the stencil's points (first
// column c0 of D): a fixed world point x moves at v + w x x, so D_k [I, -[x]x]
template <int Rows>
void addRigidChain(const Eigen::Matrix<double, Rows, Eigen::Dynamic, (Rows == 1 ? Eigen::RowMajor : Eigen::ColMajor),
                                       Rows, kMaxStencilColumns>& D,
                   const FeatureStencil& s, int c0, int col, Eigen::Matrix<double, Rows, 12>& T) {
  T.template middleCols<6>(col).setZero();
  for (int k = 0; k < s.count; ++k) {
    const auto Dk = D.template middleCols<3>(c0 + 3 * k);
    T.template middleCols<3>(col) += Dk;
    T.template middleCols<3>(col + 3) -= Dk * skew(s.points[k]);
  }
}

}  // namespace

void evaluateFeatureDerivatives(const Feature& a, const SE3& Ma, const Feature& b, const SE3& Mb,
                                const Vec3& fallback_normal, FeatureGeometry& value,
                                FeatureGeometryDerivatives& deriv) {
  FeaturePointDerivatives pd;
  evaluateFeaturePointDerivatives(a, Ma, b, Mb, fallback_normal, value, pd);
  const int cb0 = 3 * pd.a.count;
  addRigidChain<3>(pd.dpoint, pd.a, 0, 0, deriv.dpoint);
  addRigidChain<3>(pd.dpoint, pd.b, cb0, 6, deriv.dpoint);
  addRigidChain<3>(pd.dnormal, pd.a, 0, 0, deriv.dnormal);
  addRigidChain<3>(pd.dnormal, pd.b, cb0, 6, deriv.dnormal);
  addRigidChain<1>(pd.ddistance, pd.a, 0, 0, deriv.ddistance);
  addRigidChain<1>(pd.ddistance, pd.b, cb0, 6, deriv.ddistance);
}

}  // namespace rigidiff
