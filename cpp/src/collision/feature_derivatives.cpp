#include "rigidiff/collision/feature_derivatives.hpp"

#include <cmath>

namespace rigidiff {

namespace {

using Mat3x12 = Eigen::Matrix<double, 3, 12>;
using Row12 = Eigen::Matrix<double, 1, 12>;

// first column of each body's twist in the stacked (xi_a, xi_b)
constexpr int kColA = 0;
constexpr int kColB = 6;

// a world point fixed in the body whose twist starts at column col moves at v + w x x = v - [x]x w
Mat3x12 pointJacobian(const Vec3& x, int col) {
  Mat3x12 J = Mat3x12::Zero();
  J.block<3, 3>(0, col).setIdentity();
  J.block<3, 3>(0, col + 3) = -skew(x);
  return J;
}

// a world direction fixed in the body turns at w x u
Mat3x12 directionJacobian(const Vec3& u, int col) {
  Mat3x12 J = Mat3x12::Zero();
  J.block<3, 3>(0, col + 3) = -skew(u);
  return J;
}

// the foot c + u (u . (x - c)) of x on the line (c, u)
Mat3x12 lineFootJacobian(const Vec3& x, const Vec3& c, const Vec3& u, const Mat3x12& dx, const Mat3x12& dc,
                         const Mat3x12& du) {
  const Vec3 r = x - c;
  const Row12 dh = r.transpose() * du + u.transpose() * (dx - dc);
  return dc + u * dh + u.dot(r) * du;
}

// the foot x - n (n . (x - c)) of x on the plane through c with unit normal n
Mat3x12 planeFootJacobian(const Vec3& x, const Vec3& c, const Vec3& n, const Mat3x12& dx, const Mat3x12& dc,
                          const Mat3x12& dn) {
  const Vec3 r = x - c;
  const Row12 dh = r.transpose() * dn + n.transpose() * (dx - dc);
  return dx - n * dh - n.dot(r) * dn;
}

// closest points of two crossing lines (pa, ua), (pb, ub) and their common perpendicular n (unit, its
// sign already chosen): pa + s ua and pb + t ub with s, t the closed forms of evaluateFeatures
void crossingLinesJacobians(const Vec3& pa, const Vec3& ua, const Vec3& pb, const Vec3& ub, const Vec3& n,
                            const Mat3x12& dpa, const Mat3x12& dpb, Mat3x12& dca, Mat3x12& dcb, Mat3x12& dn) {
  const Mat3x12 dua = directionJacobian(ua, kColA), dub = directionJacobian(ub, kColB);
  const Vec3 w = pa - pb;
  const Mat3x12 dw = dpa - dpb;
  const double k = ua.dot(ub), den = 1.0 - k * k, aw = ua.dot(w), bw = ub.dot(w);
  const double s = (k * bw - aw) / den, t = (bw - k * aw) / den;
  const Row12 dk = ub.transpose() * dua + ua.transpose() * dub;
  const Row12 daw = w.transpose() * dua + ua.transpose() * dw;
  const Row12 dbw = w.transpose() * dub + ub.transpose() * dw;
  const Row12 dden = -2.0 * k * dk;
  // quotient rule on s = (k bw - aw) / den and t = (bw - k aw) / den: both lines move both points
  const Row12 ds = (bw * dk + k * dbw - daw - s * dden) / den;
  const Row12 dt = (dbw - aw * dk - k * daw - t * dden) / den;
  dca = dpa + ua * ds + s * dua;
  dcb = dpb + ub * dt + t * dub;
  // n = sign * c / |c| with c = ua x ub and |c| = sqrt(den): the normalisation projects dc orthogonally
  // to n (Nimble leaves it out); the sign is folded in because n, not c / |c|, multiplies dc
  const Vec3 c = ua.cross(ub);
  const double sign = n.dot(c) >= 0.0 ? 1.0 : -1.0;
  const Mat3x12 dc = -skew(ub) * dua + skew(ua) * dub;
  dn = (sign / std::sqrt(den)) * (Mat3::Identity() - n * n.transpose()) * dc;
}

// a Circle feature's point x = c + r (cos t e + sin t (a x e)), e = -m / |m| with m = n - (n . a) a: the
// centre and the axis a turn with A, the face normal n with B, and the point slides along the circle
Mat3x12 circlePointJacobian(const Feature& f, const SE3& Ma, const Vec3& n) {
  const Vec3 axis = Ma.R * f.d;
  const Mat3x12 da = directionJacobian(axis, kColA), dnb = directionJacobian(n, kColB);
  const Vec3 m = n - n.dot(axis) * axis;
  const double len = m.norm();
  Vec3 e;
  Mat3x12 de;
  if (len > kCircleTiltTolerance) {
    e = -m / len;
    const Row12 dna = axis.transpose() * dnb + n.transpose() * da;
    const Mat3x12 dm = dnb - axis * dna - n.dot(axis) * da;
    de = -(Mat3::Identity() - e * e.transpose()) * dm / len;
  } else {  // flat: the stand-in direction turns with A
    e = Ma.R * f.d.unitOrthogonal();
    de = directionJacobian(e, kColA);
  }
  const double c = std::cos(f.angle), s = std::sin(f.angle);
  const Mat3x12 df = -skew(e) * da + skew(axis) * de;  // d(a x e)
  return pointJacobian(Ma.actPoint(f.p), kColA) + f.radius * (c * de + s * df);
}

// an EdgeCut's point x = c + t u, t = (sn . (sp - c)) / (sn . u): the edge (c, u) moves with its body
// (columns col_e), the side plane (sp, sn) with the face's (col_f)
Mat3x12 edgeCutPointJacobian(const Feature& edge, const SE3& Me, int col_e, const Feature& face, const SE3& Mf,
                             int col_f) {
  const Vec3 c = Me.actPoint(edge.p), u = Me.R * edge.d;
  const Vec3 sp = Mf.actPoint(face.side_p), sn = Mf.R * face.side_n;
  const Mat3x12 dc = pointJacobian(c, col_e);
  const double den = sn.dot(u);
  if (std::abs(den) <= kEdgeCutTolerance) return dc;  // evaluateFeatures' branch: the edge's point
  const double t = sn.dot(sp - c) / den;
  const Mat3x12 du = directionJacobian(u, col_e), dsn = directionJacobian(sn, col_f);
  const Row12 dnum = (sp - c).transpose() * dsn + sn.transpose() * (pointJacobian(sp, col_f) - dc);
  const Row12 dden = u.transpose() * dsn + sn.transpose() * du;
  return dc + u * ((dnum - t * dden) / den) + t * du;
}

}  // namespace

void evaluateFeatureDerivatives(const Feature& a, const SE3& Ma, const Feature& b, const SE3& Mb,
                                const Vec3& fallback_normal, FeatureGeometry& value,
                                FeatureGeometryDerivatives& deriv) {
  // the value is evaluateFeatures' own, so both always agree on the branch and the sign
  value = evaluateFeatures(a, Ma, b, Mb, fallback_normal);
  const Vec3& n = value.normal;
  const Vec3 ca = value.point_a + a.margin * n, cb = value.point_b - b.margin * n;
  // circles and edge cuts only stand against a face (contactType refuses the rest)
  Vec3 pa, pb;
  Mat3x12 dpa, dpb;
  if (a.kind == FeatureKind::Circle) {
    pa = circlePoint(a, Ma, Mb.R * b.d);
    dpa = circlePointJacobian(a, Ma, Mb.R * b.d);
  } else if (a.kind == FeatureKind::EdgeCut) {
    pa = edgeCutPoint(a, Ma, b, Mb);
    dpa = edgeCutPointJacobian(a, Ma, kColA, b, Mb, kColB);
  } else {
    pa = Ma.actPoint(a.p);
    dpa = pointJacobian(pa, kColA);
  }
  if (b.kind == FeatureKind::EdgeCut) {
    pb = edgeCutPoint(b, Mb, a, Ma);
    dpb = edgeCutPointJacobian(b, Mb, kColB, a, Ma, kColA);
  } else {
    pb = Mb.actPoint(b.p);
    dpb = pointJacobian(pb, kColB);
  }
  Mat3x12 dca, dcb, dn;
  bool centre_normal = true;  // is n the direction of ca - cb (or the fallback)?
  switch (contactType(a.kind, b.kind)) {
    case ContactType::PointFace:  // the normal turns with B; B's witness is A's point on B's plane
    case ContactType::EdgeFace:
      dn = directionJacobian(n, kColB);
      dca = dpa;
      dcb = planeFootJacobian(pa, pb, n, dpa, dpb, dn);
      centre_normal = false;
      break;
    case ContactType::FacePoint:  // n = -(A's outward normal) turns with A; A's witness is B's point on A's plane
    case ContactType::FaceEdge:
      dn = directionJacobian(n, kColA);
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
      dca = lineFootJacobian(pb, pa, ua, dpb, dpa, directionJacobian(ua, kColA));
      break;
    }
    case ContactType::SegmentSegment: {
      const Vec3 ua = Ma.R * a.d, ub = Mb.R * b.d;
      const double k = ua.dot(ub);
      if (1.0 - k * k > kParallelLinesTolerance) {
        crossingLinesJacobians(pa, ua, pb, ub, n, dpa, dpb, dca, dcb, dn);
        centre_normal = false;
        break;
      }
      // parallel lines: A's point against B's line, as evaluateFeatures does
      [[fallthrough]];
    }
    case ContactType::PointSegment: {
      const Vec3 ub = Mb.R * b.d;
      dca = dpa;
      dcb = lineFootJacobian(pa, pb, ub, dpa, dpb, directionJacobian(ub, kColB));
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
      dn.setZero();
  }
  // point = (ca + cb) / 2 + (mb - ma) n / 2, distance = n . (ca - cb) - ma - mb
  deriv.dnormal = dn;
  deriv.dpoint = 0.5 * (dca + dcb) + (0.5 * (b.margin - a.margin)) * dn;
  deriv.ddistance = w.transpose() * dn + n.transpose() * (dca - dcb);
}

}  // namespace rigidiff
