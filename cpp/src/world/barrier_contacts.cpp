// Contact part of a barrier world (world/barrier_contacts.hpp): pairs within dhat, their barrier in body
// coordinates, the collision-free step and the intersection test.
#include "rigidiff/world/barrier_contacts.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>

#include "rigidiff/collision/ccd/edge_edge.hpp"
#include "rigidiff/collision/ccd/point_triangle.hpp"
#include "rigidiff/collision/distance/edge_edge.hpp"
#include "rigidiff/collision/distance/edge_edge_mollifier.hpp"
#include "rigidiff/collision/distance/point_triangle.hpp"
#include "rigidiff/contact/barrier.hpp"
#include "rigidiff/macros.hpp"
#include "translation_invariant_psd.hpp"

namespace rigidiff {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Box {
  Vec3 lo, hi;
};

Box boxOf(const std::vector<Vec3>& x) {
  Box b{Vec3::Constant(kInf), Vec3::Constant(-kInf)};
  for (const Vec3& p : x) {
    b.lo = b.lo.cwiseMin(p);
    b.hi = b.hi.cwiseMax(p);
  }
  return b;
}

bool overlap(const Box& a, const Box& b, double margin) {
  return (a.lo.array() <= b.hi.array() + margin).all() && (b.lo.array() <= a.hi.array() + margin).all();
}

// Vertex m of primitive i of a body, its primitives of k points: vertices (1), edges (2) or faces (3).
int primitiveVertex(const AffineBody& body, int k, int i, int m) {
  return k == 1 ? i : k == 2 ? body.edges[i][m] : body.faces[i][m];
}

int primitiveCount(const AffineBody& body, int k) {
  return static_cast<int>(k == 1 ? body.rest.size() : k == 2 ? body.edges.size() : body.faces.size());
}

// The points (start at x0, end at x1) of the primitives of k points of a body whose swept box meets the box (lo, hi)
// grown by margin, laid out for sweptPairs, and their indices in kept. A primitive within margin of another lies
// within margin of that one's body box, so culling each side by the other body's box loses no pair (the slack
// covers the rounding of the primitive tests).
void nearPrimitives(const AffineBody& body, int k, const std::vector<Vec3>& x0, const std::vector<Vec3>& x1,
                    const Vec3& lo, const Vec3& hi, double margin, std::vector<Vec3>& start, std::vector<Vec3>& end,
                    std::vector<int>& kept) {
  const double grow = margin + 1e-9 * (1.0 + (hi - lo).cwiseAbs().maxCoeff());
  const Vec3 glo = lo.array() - grow, ghi = hi.array() + grow;
  start.clear();
  end.clear();
  kept.clear();
  const int n = primitiveCount(body, k);
  for (int i = 0; i < n; ++i) {
    Vec3 plo = x0[primitiveVertex(body, k, i, 0)], phi = plo;
    for (int m = 0; m < k; ++m) {
      const int v = primitiveVertex(body, k, i, m);
      plo = plo.cwiseMin(x0[v]).cwiseMin(x1[v]);
      phi = phi.cwiseMax(x0[v]).cwiseMax(x1[v]);
    }
    if (!((plo.array() <= ghi.array()).all() && (glo.array() <= phi.array()).all())) continue;
    for (int m = 0; m < k; ++m) {
      const int v = primitiveVertex(body, k, i, m);
      start.push_back(x0[v]);
      end.push_back(x1[v]);
    }
    kept.push_back(i);
  }
}

// d.prim_pairs = the pairs (i of body a's primitives of ka points, j of body b's of kb) whose swept boxes from x0 to
// x1, grown by margin, overlap, sorted. Only each side's primitives near the other body's box are gathered, so
// that the box trees hold only those (the same pairs, in the same order): two bodies touching on one side (a
// sheet on a sheet, a cube on a cube, two links of one skeleton near the joint between them) leave most of
// their primitives out.
void primitivePairs(const BarrierWorldModel& model, BarrierWorldData& d, int a, int b, int ka, int kb,
                    const std::vector<Vec3>& xa0, const std::vector<Vec3>& xa1, const std::vector<Vec3>& xb0,
                    const std::vector<Vec3>& xb1, double margin) {
  const AffineBody &A = model.bodies[a], &B = model.bodies[b];
  nearPrimitives(A, ka, xa0, xa1, d.body_lo[b], d.body_hi[b], margin, d.pa_start, d.pa_end, d.kept_a);
  nearPrimitives(B, kb, xb0, xb1, d.body_lo[a], d.body_hi[a], margin, d.pb_start, d.pb_end, d.kept_b);
  sweptPairs(d.pa_start.data(), d.pa_end.data(), static_cast<int>(d.kept_a.size()), ka, d.pb_start.data(),
             d.pb_end.data(), static_cast<int>(d.kept_b.size()), kb, margin, d.swept, d.prim_pairs);
  for (auto& [i, j] : d.prim_pairs) i = d.kept_a[i], j = d.kept_b[j];  // increasing maps: still sorted
}

// primitive pairs of kinds (ka, kb) between bodies a and b whose swept boxes, grown by margin, overlap;
// start/end positions from data.x and data.x_end
void sweptCandidates(const BarrierWorldModel& model, BarrierWorldData& d, int a, int b, BarrierPair::Kind kind,
                     bool swept, double margin) {
  const auto& xa_end = swept ? d.x_end[a] : d.x[a];
  const auto& xb_end = swept ? d.x_end[b] : d.x[b];
  if (kind == BarrierPair::PointTriangle)
    primitivePairs(model, d, a, b, 1, 3, d.x[a], xa_end, d.x[b], xb_end, margin);
  else
    primitivePairs(model, d, a, b, 2, 2, d.x[a], xa_end, d.x[b], xb_end, margin);
}

// d.body_lo/hi = each body's box at d.x (and d.x_end when swept); d.body_pairs = the pairs (a < b) whose
// boxes, grown by margin, overlap, by a sweep and prune along x
void overlappingBodies(const BarrierWorldModel& model, BarrierWorldData& d, bool swept, double margin) {
  const int nb = static_cast<int>(model.bodies.size());
  d.body_lo.resize(nb);
  d.body_hi.resize(nb);
  for (int i = 0; i < nb; ++i) {
    Box box = boxOf(d.x[i]);
    if (swept) {
      const Box e = boxOf(d.x_end[i]);
      box.lo = box.lo.cwiseMin(e.lo);
      box.hi = box.hi.cwiseMax(e.hi);
    }
    d.body_lo[i] = box.lo;
    d.body_hi[i] = box.hi;
  }
  d.body_order.resize(nb);
  for (int i = 0; i < nb; ++i) d.body_order[i] = i;
  std::sort(d.body_order.begin(), d.body_order.end(), [&](int i, int j) { return d.body_lo[i].x() < d.body_lo[j].x(); });
  d.body_pairs.clear();
  for (int u = 0; u < nb; ++u) {
    const int i = d.body_order[u];
    for (int w = u + 1; w < nb; ++w) {
      const int j = d.body_order[w];
      if (d.body_lo[j].x() > d.body_hi[i].x() + margin) break;  // sorted: no later body reaches i either
      if (model.bodies[i].fixed && model.bodies[j].fixed) continue;  // static meshes never meet each other
      if (!model.mayPair(i, j)) continue;  // one skeleton's links: its self-collision rule
      if (overlap(Box{d.body_lo[i], d.body_hi[i]}, Box{d.body_lo[j], d.body_hi[j]}, margin))
        d.body_pairs.emplace_back(std::min(i, j), std::max(i, j));
    }
  }
  std::sort(d.body_pairs.begin(), d.body_pairs.end());
}

// visits every candidate primitive pair of different bodies: f(kind, a, b, i, j)
template <class F>
void forCandidates(const BarrierWorldModel& model, BarrierWorldData& d, bool swept, double margin, F&& f) {
  overlappingBodies(model, d, swept, margin);
  for (const auto& [a, b] : d.body_pairs) {
    const int order[2][2] = {{a, b}, {b, a}};
    for (const auto& ab : order) {
      sweptCandidates(model, d, ab[0], ab[1], BarrierPair::PointTriangle, swept, margin);
      for (const auto& [i, j] : d.prim_pairs) f(BarrierPair::PointTriangle, ab[0], ab[1], i, j);
    }
    sweptCandidates(model, d, a, b, BarrierPair::EdgeEdge, swept, margin);
    for (const auto& [i, j] : d.prim_pairs) f(BarrierPair::EdgeEdge, a, b, i, j);
  }
}

double planeGap(const GroundPlane& g, const Vec3& x) { return g.normal.dot(x) - g.offset; }

}  // namespace

int movingBody(const BarrierWorldModel& model, int body) { return model.bodies[body].fixed ? -1 : body; }

namespace {

double pairDistance(const BarrierWorldModel& model, const std::vector<std::vector<Vec3>>& x, const BarrierPair& p) {
  const AffineBody &A = model.bodies[p.body_a];
  if (p.kind == BarrierPair::PointPlane) {
    const double g = planeGap(model.planes[p.body_b], x[p.body_a][p.a]);
    return g > 0.0 ? g * g : 0.0;
  }
  const AffineBody& B = model.bodies[p.body_b];
  const auto &xa = x[p.body_a], &xb = x[p.body_b];
  if (p.kind == BarrierPair::PointTriangle) {
    const auto& f = B.faces[p.b];
    return pointTriangleDistance(xa[p.a], xb[f[0]], xb[f[1]], xb[f[2]]);
  }
  const auto &ea = A.edges[p.a], &eb = B.edges[p.b];
  return edgeEdgeDistance(xa[ea[0]], xa[ea[1]], xb[eb[0]], xb[eb[1]]);
}

// sign of the volume of (a, b, c, d)
double orient(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) { return (b - a).cross(c - a).dot(d - a); }

bool segmentCrossesTriangle(const Vec3& p, const Vec3& q, const Vec3& a, const Vec3& b, const Vec3& c) {
  const double s1 = orient(a, b, c, p), s2 = orient(a, b, c, q);
  if ((s1 > 0.0 && s2 > 0.0) || (s1 < 0.0 && s2 < 0.0)) return false;
  // a segment in the triangle's plane (to round-off: the top edge of one link in the top face of a link of equal
  // thickness beside it) does not cross it, and its other signs are round-off too; touching is the distances' test
  const double flat = 1e-12 * (b - a).cross(c - a).norm() * (q - p).norm();
  if (std::abs(s1) <= flat && std::abs(s2) <= flat) return false;
  const double u = orient(p, q, a, b), v = orient(p, q, b, c), w = orient(p, q, c, a);
  return (u >= 0.0 && v >= 0.0 && w >= 0.0) || (u <= 0.0 && v <= 0.0 && w <= 0.0);
}

// generalised winding number of the closed surface (x, faces) around point p: 1 inside, 0 outside
double windingNumber(const AffineBody& body, const std::vector<Vec3>& x, const Vec3& p) {
  double total = 0.0;
  for (const auto& f : body.faces) {
    const Vec3 a = x[f[0]] - p, b = x[f[1]] - p, c = x[f[2]] - p;
    const double la = a.norm(), lb = b.norm(), lc = c.norm();
    const double num = a.dot(b.cross(c));
    const double den = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
    total += 2.0 * std::atan2(num, den);  // the solid angle of the triangle (Van Oosterom and Strackee)
  }
  return total / (4.0 * M_PI);
}

}  // namespace

Mat12 projectToPsd(const Mat12& H) {
  // rows and columns that are zero (the points a distance type leaves out: a point–point pair has 6 live
  // coordinates, a point–edge pair 9) stay zero: decompose only the live part
  int live[12], m = 0;
  for (int r = 0; r < 12; ++r)
    if (!H.row(r).isZero(0.0)) live[m++] = r;
  if (m == 0) return H;
  // H minus its negative part sum_{lambda < 0} lambda v v^T: the same as rebuilding V max(Lambda, 0) V^T, but
  // a rank-k update for the usual one or two negative eigenvalues
  Mat12 out = Mat12::Zero();
  if (m == 12) {
    Vec12 lambda;
    Mat12 V;
    out = H;
    if (symmetricEigen<12>(H, lambda, V)) {
      for (int k = 0; k < 12; ++k)
        if (lambda[k] < 0.0) out.noalias() -= lambda[k] * V.col(k) * V.col(k).transpose();
      return out;
    }
  }
  // some rows zero, or the fixed-size solver did not converge: Eigen's solver at dynamic size (one instantiation
  // for the whole barrier code; each fixed size costs seconds of compile time)
  MatX S(m, m);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < m; ++c) S(r, c) = H(live[r], live[c]);
  const Eigen::SelfAdjointEigenSolver<MatX> eig(S);
  for (Eigen::Index k = 0; k < m && eig.eigenvalues()[k] < 0.0; ++k)
    S.noalias() -= eig.eigenvalues()[k] * eig.eigenvectors().col(k) * eig.eigenvectors().col(k).transpose();
  out.setZero();
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < m; ++c) out(live[r], live[c]) = S(r, c);
  return out;
}

void barrierPositions(const BarrierWorldModel& model, const double* q, std::vector<std::vector<Vec3>>& x) {
  x.resize(model.bodies.size());
  for (size_t i = 0; i < model.bodies.size(); ++i) {
    const auto& rest = model.bodies[i].rest;
    x[i].resize(rest.size());
    for (size_t k = 0; k < rest.size(); ++k) x[i][k] = affinePoint(q + 12 * i, rest[k]);
  }
}

void barrierCandidates(const BarrierWorldModel& model, BarrierWorldData& d, bool swept, double margin) {
  d.candidates.clear();
  forCandidates(model, d, swept, margin, [&](BarrierPair::Kind kind, int a, int b, int i, int j) {
    d.candidates.push_back(BarrierPair{kind, a, b, i, j});
  });
  // a vertex's gap to a plane is linear along the move: its smallest value is at one end
  for (size_t a = 0; a < model.bodies.size(); ++a) {
    if (model.bodies[a].fixed) continue;
    for (size_t g = 0; g < model.planes.size(); ++g) {
      for (size_t i = 0; i < d.x[a].size(); ++i) {
        double gap = planeGap(model.planes[g], d.x[a][i]);
        if (swept) gap = std::min(gap, planeGap(model.planes[g], d.x_end[a][i]));
        if (gap < margin)
          d.candidates.push_back(
              BarrierPair{BarrierPair::PointPlane, static_cast<int>(a), static_cast<int>(g), static_cast<int>(i), 0});
      }
    }
  }
  d.stats.candidates = static_cast<int>(d.candidates.size());
}

double pairsFromCandidates(const BarrierWorldModel& model, BarrierWorldData& d) {
  const double dhat = model.options.dhat, shat = dhat * dhat;
  d.pairs.clear();
  double min_s = kInf;
  for (const BarrierPair& p : d.candidates) {
    const double s = pairDistance(model, d.x, p);
    const bool within = p.kind == BarrierPair::PointPlane ? planeGap(model.planes[p.body_b], d.x[p.body_a][p.a]) < dhat
                                                          : s < shat;
    if (within) {
      d.pairs.push_back(p);
      min_s = std::min(min_s, s);
    }
  }
  return min_s;
}

double collectBarrierPairs(const BarrierWorldModel& model, BarrierWorldData& d) {
  barrierCandidates(model, d, false, model.options.dhat);
  return pairsFromCandidates(model, d);
}

void addPointHessian(const Mat12& H, const Vec3* xbar, const int* slot, int npts, double weight, Mat24& h) {
  // J_k^T y for a point's 3-vector y: the body's p gets y, row i of its A gets y_i xbar_k. h += weight (J^T H) J
  // in two passes over contiguous columns: Wt = J^T H (24 x 12), then each column of h (point l's body
  // coordinate (j, n), whose J entry is u_n = (1, xbar_l)_n) gathers u_n times Wt's column 3 l + j
  Eigen::Matrix<double, 24, 12> Wt = Eigen::Matrix<double, 24, 12>::Zero();
  bool used[2] = {false, false};
  for (int k = 0; k < npts; ++k) used[slot[k]] = true;
  for (int r = 0; r < 3 * npts; ++r)
    for (int l = 0; l < npts; ++l) {
      double* to = Wt.col(r).data() + 12 * slot[l];
      for (int i = 0; i < 3; ++i) {
        const double y = H(3 * l + i, r);
        to[i] += y;
        for (int m = 0; m < 3; ++m) to[3 + 3 * i + m] += y * xbar[l][m];
      }
    }
  for (int l = 0; l < npts; ++l)
    for (int j = 0; j < 3; ++j)
      for (int n = 0; n < 4; ++n) {
        const double un = weight * (n == 0 ? 1.0 : xbar[l][n - 1]);
        auto column = h.col(12 * slot[l] + (n == 0 ? j : 3 + 3 * j + n - 1));
        for (int s = 0; s < 2; ++s)
          if (used[s]) column.segment<12>(12 * s) += un * Wt.col(3 * l + j).segment<12>(12 * s);
      }
}

namespace {

// b(s) and its first two derivatives in s, or with shat_derivative their derivatives in shat (the second's
// left out): b(s; shat) = shat^2 beta(s / shat), so db/dshat = (2 b - s b') / shat, db'/dshat = (b' - s b'') / shat
Vec3 barrierValuesAt(double s, double shat, bool shat_derivative) {
  const double b0 = barrier(s, shat), b1 = barrierFirstDerivative(s, shat), b2 = barrierSecondDerivative(s, shat);
  if (!shat_derivative) return Vec3(b0, b1, b2);
  return Vec3((2.0 * b0 - s * b1) / shat, (b1 - s * b2) / shat, 0.0);
}

// out += the barrier of pair p at d.x and weight * its derivatives in the bodies' coordinates: the gradient when
// need_gradient, the Hessian (projected to PSD in the points' coordinates when project) when need_hessian; with
// shat_derivative, the derivatives of those in shat = dhat^2 (no Hessian)
void pairTerms(const BarrierWorldModel& model, const BarrierWorldData& d, const BarrierPair& p, double weight,
               bool need_gradient, bool need_hessian, bool project, bool shat_derivative, BodyPairSum& out) {
  const double shat = model.options.dhat * model.options.dhat;
  const AffineBody& A = model.bodies[p.body_a];
  const auto& xa = d.x[p.body_a];
  // H (and dds below) are only written and read when the Hessian is asked for: a gradient pass over many
  // pairs does not clear them
  Vec12 g = Vec12::Zero();
  Mat12 H;
  Vec3 xbar[4];
  int slot[4] = {0, 0, 0, 0}, npts = 4;
  double value;
  if (p.kind == BarrierPair::PointPlane) {
    const Vec3& n = model.planes[p.body_b].normal;
    const double gap = planeGap(model.planes[p.body_b], xa[p.a]);
    const double s = gap > 0.0 ? gap * gap : 0.0;
    const Vec3 b = barrierValuesAt(s, shat, shat_derivative);
    const double b1 = b[1], b2 = b[2];
    value = b[0];
    g.head<3>() = b1 * 2.0 * gap * n;
    // (b'' ds ds^T + b' dds) = (4 gap^2 b'' + 2 b') n n^T: rank one, its projection in closed form
    const double c = 4.0 * gap * gap * b2 + 2.0 * b1;
    if (need_hessian) {
      H.setZero();
      H.topLeftCorner<3, 3>() = ((project ? std::max(c, 0.0) : c) * n) * n.transpose();
    }
    xbar[0] = A.rest[p.a];
    npts = 1;
  } else {
    const AffineBody& B = model.bodies[p.body_b];
    const auto& xb = d.x[p.body_b];
    Vec3 pts[4];
    if (p.kind == BarrierPair::PointTriangle) {
      const auto& f = B.faces[p.b];
      const int idx[4] = {p.a, f[0], f[1], f[2]};
      for (int k = 0; k < 4; ++k) {
        slot[k] = k == 0 ? 0 : 1;
        pts[k] = k == 0 ? xa[idx[k]] : xb[idx[k]];
        xbar[k] = k == 0 ? A.rest[idx[k]] : B.rest[idx[k]];
      }
    } else {
      const auto &ea = A.edges[p.a], &eb = B.edges[p.b];
      const int idx[4] = {ea[0], ea[1], eb[0], eb[1]};
      for (int k = 0; k < 4; ++k) {
        slot[k] = k < 2 ? 0 : 1;
        pts[k] = k < 2 ? xa[idx[k]] : xb[idx[k]];
        xbar[k] = k < 2 ? A.rest[idx[k]] : B.rest[idx[k]];
      }
    }
    Vec12 ds;
    Mat12 dds;
    double s;
    // the distance type once for the value and its derivatives (each would classify the pair again)
    if (p.kind == BarrierPair::PointTriangle) {
      const auto type = pointTriangleDistanceType(pts[0], pts[1], pts[2], pts[3]);
      s = pointTriangleDistance(pts[0], pts[1], pts[2], pts[3], type);
      ds = pointTriangleDistanceGradient(pts[0], pts[1], pts[2], pts[3], type);
      if (need_hessian) dds = pointTriangleDistanceHessian(pts[0], pts[1], pts[2], pts[3], type);
    } else {
      const auto type = edgeEdgeDistanceType(pts[0], pts[1], pts[2], pts[3]);
      s = edgeEdgeDistance(pts[0], pts[1], pts[2], pts[3], type);
      ds = edgeEdgeDistanceGradient(pts[0], pts[1], pts[2], pts[3], type);
      if (need_hessian) dds = edgeEdgeDistanceHessian(pts[0], pts[1], pts[2], pts[3], type);
    }
    const Vec3 b = barrierValuesAt(s, shat, shat_derivative);
    const double b0 = b[0], b1 = b[1], b2 = b[2];
    if (p.kind == BarrierPair::PointTriangle) {
      value = b0;
      g = b1 * ds;
      if (need_hessian) H = b2 * ds * ds.transpose() + b1 * dds;
    } else {
      // edges nearly parallel: IPC's mollifier m fades the pair out smoothly (eps_x from the rest lengths)
      const double eps = edgeEdgeMollifierThreshold(xbar[0], xbar[1], xbar[2], xbar[3]);
      if (!((pts[1] - pts[0]).cross(pts[3] - pts[2]).squaredNorm() < eps)) {
        // at or past its threshold the mollifier is the constant 1 (most pairs): no derivatives to add
        value = b0;
        g = b1 * ds;
        if (need_hessian) H = b2 * ds * ds.transpose() + b1 * dds;
      } else {
        const double m = edgeEdgeMollifier(pts[0], pts[1], pts[2], pts[3], eps);
        value = m * b0;
        const Vec12 dm = edgeEdgeMollifierGradient(pts[0], pts[1], pts[2], pts[3], eps);
        g = b0 * dm + m * b1 * ds;
        if (need_hessian) {
          const Mat12 ddm = edgeEdgeMollifierHessian(pts[0], pts[1], pts[2], pts[3], eps);
          H = b0 * ddm + b1 * (dm * ds.transpose() + ds * dm.transpose()) + m * (b2 * ds * ds.transpose() + b1 * dds);
        }
      }
    }
    // the pair's distance does not change when all its points move together: projected without that translation
    if (need_hessian && project) H = projectTranslationInvariantToPsd(H);
  }
  out.value += value;
  if (need_gradient) {
    // J_k^T g_k: p_i gets g_i, a_i gets g_i xbar_k
    for (int k = 0; k < npts; ++k) {
      double* to = out.gradient.data() + 12 * slot[k];
      for (int r = 0; r < 3; ++r) {
        const double gr = weight * g[3 * k + r];
        to[r] += gr;
        for (int m = 0; m < 3; ++m) to[3 + 3 * r + m] += gr * xbar[k][m];
      }
    }
  }
  if (need_hessian) addPointHessian(H, xbar, slot, npts, weight, out.hessian);
}

}  // namespace

double barrierPotential(const BarrierWorldModel& model, BarrierWorldData& d, double weight, double* grad,
                        BlockHessian* hessian, bool project, bool shat_derivative) {
  d.sums.compute(
      d.pairs.size(), grad != nullptr, hessian != nullptr,
      [&](size_t i, int* bodies) {
        const BarrierPair& p = d.pairs[i];
        bodies[0] = p.body_a;
        bodies[1] = p.kind == BarrierPair::PointPlane ? -1 : p.body_b;
      },
      [&](size_t i, BodyPairSum& sum) {
        pairTerms(model, d, d.pairs[i], weight, grad != nullptr, hessian != nullptr, project, shat_derivative, sum);
      });
  return addPairSums(model, d.sums, grad, hessian);
}

double addPairSums(const BarrierWorldModel& model, const PairTermSums& sums, double* grad, BlockHessian* hessian) {
  double total = 0.0;
  sums.forEach([&](const BodyPairSum& t) {
    total += t.value;
    const int bodies[2] = {t.body[0] >= 0 ? movingBody(model, t.body[0]) : -1,
                           t.body[1] >= 0 ? movingBody(model, t.body[1]) : -1};
    if (grad)
      for (int s = 0; s < 2; ++s)
        if (bodies[s] >= 0)
          for (int r = 0; r < 12; ++r) grad[12 * bodies[s] + r] += t.gradient[12 * s + r];
    if (hessian) hessian->addPair(bodies[0], bodies[1], t.hessian);
  });
  return total;
}

double collisionFreeStepOfCandidates(const BarrierWorldModel& model, BarrierWorldData& d, const double* deviation) {
  double alpha = 1.0;
  CcdOptions options;
  Vec3 s[4], e[4];  // a candidate's points at the start and end of the move
  for (const BarrierPair& p : d.candidates) {
    if (p.kind == BarrierPair::PointPlane) continue;  // the planes below, vertex by vertex
    const int a = p.body_a, b = p.body_b;
    const auto &x0a = d.x[a], &x1a = d.x_end[a], &x0b = d.x[b], &x1b = d.x_end[b];
    if (p.kind == BarrierPair::PointTriangle) {
      const auto& f = model.bodies[b].faces[p.b];
      s[0] = x0a[p.a], e[0] = x1a[p.a];
      for (int k = 0; k < 3; ++k) s[k + 1] = x0b[f[k]], e[k + 1] = x1b[f[k]];
    } else {
      const auto &ea = model.bodies[a].edges[p.a], &eb = model.bodies[b].edges[p.b];
      for (int k = 0; k < 2; ++k) {
        s[k] = x0a[ea[k]], e[k] = x1a[ea[k]];
        s[k + 2] = x0b[eb[k]], e[k + 2] = x1b[eb[k]];
      }
    }
    // the candidates may carry a margin: test only those whose swept boxes themselves overlap
    const int first = p.kind == BarrierPair::PointTriangle ? 1 : 2;
    Box ba{Vec3::Constant(kInf), Vec3::Constant(-kInf)}, bb = ba;
    for (int k = 0; k < 4; ++k) {
      Box& box = k < first ? ba : bb;
      box.lo = box.lo.cwiseMin(s[k]).cwiseMin(e[k]);
      box.hi = box.hi.cwiseMax(s[k]).cwiseMax(e[k]);
    }
    // a body whose points may leave their chords by deviation[b] keeps that much more apart
    options.min_distance = deviation ? deviation[a] + deviation[b] : 0.0;
    if (!overlap(ba, bb, options.min_distance)) continue;
    if (alpha <= 0.0) return 0.0;  // no part of the move is free: later pairs cannot change that
    options.t_max = alpha;  // a later hit than the step so far changes nothing: stop there
    const CcdResult r = p.kind == BarrierPair::PointTriangle
                            ? pointTriangleCcd(s[0], s[1], s[2], s[3], e[0], e[1], e[2], e[3], options)
                            : edgeEdgeCcd(s[0], s[1], s[2], s[3], e[0], e[1], e[2], e[3], options);
    if (r.hit) alpha = std::min(alpha, r.toi);
  }
  // a vertex approaching a plane keeps at least (1 - 0.9) of its gap, as the additive CCD does
  for (size_t a = 0; a < model.bodies.size(); ++a) {
    if (model.bodies[a].fixed) continue;  // static: it does not move
    for (const GroundPlane& g : model.planes) {
      for (size_t i = 0; i < d.x[a].size(); ++i) {
        const double dev = deviation ? deviation[a] : 0.0;
        const double g0 = planeGap(g, d.x[a][i]) - dev, g1 = planeGap(g, d.x_end[a][i]) - dev;
        if (g0 <= 0.0) return 0.0;
        if (g1 < 0.1 * g0) alpha = std::min(alpha, 0.9 * g0 / (g0 - g1));
      }
    }
  }
  return alpha;
}

double collisionFreeStep(const BarrierWorldModel& model, BarrierWorldData& d, const double* q, const double* dq) {
  const int n = model.nq();
  VecX q_end(n);
  for (int i = 0; i < n; ++i) q_end[i] = q[i] + dq[i];
  barrierPositions(model, q, d.x);
  barrierPositions(model, q_end.data(), d.x_end);
  barrierCandidates(model, d, true, 0.0);
  return collisionFreeStepOfCandidates(model, d);
}

void checkIntersectionFree(const BarrierWorldModel& model, BarrierWorldData& d, const double* q) {
  barrierPositions(model, q, d.x);
  for (size_t a = 0; a < model.bodies.size(); ++a) {
    if (model.bodies[a].fixed) continue;  // a static mesh may rest on (or reach through) a ground plane
    for (size_t g = 0; g < model.planes.size(); ++g)
      for (const Vec3& p : d.x[a])
        RD_CHECK_ARG(planeGap(model.planes[g], p) > 0.0, "body '" << model.bodies[a].name << "' touches or crosses "
                                                                   << "ground plane " << g << " (the state q must be "
                                                                   << "intersection-free)");
  }
  auto fail = [&](int a, int b) {
    RD_THROW(std::invalid_argument, "bodies '" << model.bodies[a].name << "' and '" << model.bodies[b].name
                                              << "' intersect or touch (the state q must be intersection-free)");
  };
  forCandidates(model, d, false, 0.0, [&](BarrierPair::Kind kind, int a, int b, int i, int j) {
    if (pairDistance(model, d.x, BarrierPair{kind, a, b, i, j}) <= 0.0) fail(a, b);
  });
  // an edge of one body through a face of the other, or one body wholly inside the other (d.body_pairs: the
  // touching boxes of the candidates above)
  for (const auto& [u, w] : d.body_pairs) {
    const int ordered[2][2] = {{u, w}, {w, u}};
    for (const auto& [a, b] : ordered) {
      const auto &xa = d.x[a], &xb = d.x[b];
      const AffineBody &A = model.bodies[a], &B = model.bodies[b];
      // edges of a against faces of b whose boxes overlap (the box tree of the swept broad phase, unmoving)
      primitivePairs(model, d, a, b, 2, 3, xa, xa, xb, xb, 0.0);
      for (const auto& [i, j] : d.prim_pairs) {
        const auto& e = A.edges[i];
        const auto& f = B.faces[j];
        if (segmentCrossesTriangle(xa[e[0]], xa[e[1]], xb[f[0]], xb[f[1]], xb[f[2]])) fail(std::min(a, b), std::max(a, b));
      }
      if (B.closed && windingNumber(B, xb, xa[0]) > 0.5) fail(std::min(a, b), std::max(a, b));
    }
  }
}

double sceneDiagonal(const BarrierWorldModel& model, const BarrierWorldData& d) {
  Box all{Vec3::Constant(kInf), Vec3::Constant(-kInf)};
  for (size_t i = 0; i < model.bodies.size(); ++i) {
    const Box b = boxOf(d.x[i]);
    all.lo = all.lo.cwiseMin(b.lo);
    all.hi = all.hi.cwiseMax(b.hi);
  }
  const double l = model.bodies.empty() ? 0.0 : (all.hi - all.lo).norm();
  return l > 0.0 ? l : 1.0;
}

}  // namespace rigidiff
