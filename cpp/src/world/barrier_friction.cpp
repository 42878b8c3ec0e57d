// Lagged smoothed friction of a barrier world (world/barrier_friction.hpp).
#include "rigidiff/world/barrier_friction.hpp"

#include <algorithm>
#include <cmath>

#include "rigidiff/collision/distance/edge_edge.hpp"
#include "rigidiff/collision/distance/point_triangle.hpp"
#include "rigidiff/contact/barrier.hpp"
#include "rigidiff/world/barrier_contacts.hpp"
#include "rigidiff/world/parallel_chunks.hpp"

namespace rigidiff {

namespace {

// parameter of the point of line (a, b) closest to p, clamped to the segment
double segmentParameter(const Vec3& p, const Vec3& a, const Vec3& b) {
  const Vec3 e = b - a;
  const double len2 = e.squaredNorm();
  return len2 > 0.0 ? std::clamp((p - a).dot(e) / len2, 0.0, 1.0) : 0.0;
}

// weights (w0, w1, w2) of the point of triangle (t0, t1, t2) closest to p
Vec3 triangleWeights(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2) {
  using T = PointTriangleDistanceType;
  const T type = pointTriangleDistanceType(p, t0, t1, t2);
  const Vec3* t[3] = {&t0, &t1, &t2};
  Vec3 w = Vec3::Zero();
  switch (type) {
    case T::P_T0: case T::P_T1: case T::P_T2:
      w[static_cast<int>(type)] = 1.0;
      break;
    case T::P_E0: case T::P_E1: case T::P_E2: {
      const int i = static_cast<int>(type) - 3, j = (i + 1) % 3;
      const double s = segmentParameter(p, *t[i], *t[j]);
      w[i] = 1.0 - s;
      w[j] = s;
      break;
    }
    default: {  // the inside: the barycentric coordinates of p's projection
      const Vec3 e1 = t1 - t0, e2 = t2 - t0, r = p - t0;
      Eigen::Matrix2d G;
      G << e1.dot(e1), e1.dot(e2), e1.dot(e2), e2.dot(e2);
      const Eigen::Vector2d st = G.ldlt().solve(Eigen::Vector2d(r.dot(e1), r.dot(e2)));
      w = Vec3(1.0 - st[0] - st[1], st[0], st[1]);
    }
  }
  return w;
}

// parameters (alpha on edge A, beta on edge B) of the closest points of two segments
Eigen::Vector2d edgeParameters(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1) {
  using T = EdgeEdgeDistanceType;
  switch (edgeEdgeDistanceType(ea0, ea1, eb0, eb1)) {
    case T::EA0_EB0: return {0.0, 0.0};
    case T::EA0_EB1: return {0.0, 1.0};
    case T::EA1_EB0: return {1.0, 0.0};
    case T::EA1_EB1: return {1.0, 1.0};
    case T::EA_EB0: return {segmentParameter(eb0, ea0, ea1), 0.0};
    case T::EA_EB1: return {segmentParameter(eb1, ea0, ea1), 1.0};
    case T::EA0_EB: return {0.0, segmentParameter(ea0, eb0, eb1)};
    case T::EA1_EB: return {1.0, segmentParameter(ea1, eb0, eb1)};
    default: {
      const Vec3 u = ea1 - ea0, v = eb1 - eb0, r = ea0 - eb0;
      Eigen::Matrix2d G;
      G << u.dot(u), -u.dot(v), -u.dot(v), v.dot(v);
      const Eigen::Vector2d ab = G.ldlt().solve(Eigen::Vector2d(-u.dot(r), v.dot(r)));
      return {std::clamp(ab[0], 0.0, 1.0), std::clamp(ab[1], 0.0, 1.0)};
    }
  }
}

Eigen::Matrix<double, 3, 2> tangentBasis(const Vec3& n) {
  // the axis least aligned with n keeps the cross product well conditioned
  Eigen::Index k;
  n.cwiseAbs().minCoeff(&k);
  const Vec3 t1 = n.cross(Vec3::Unit(k)).normalized();
  Eigen::Matrix<double, 3, 2> T;
  T.col(0) = t1;
  T.col(1) = n.cross(t1);
  return T;
}

}  // namespace

void buildFrictionPairs(const BarrierWorldModel& model, BarrierWorldData& data, double kappa) {
  data.friction.clear();
  const double mu = model.options.friction;
  if (mu <= 0.0) return;
  const double shat = model.options.dhat * model.options.dhat;
  for (const BarrierPair& p : data.pairs) {
    FrictionPair f;
    const AffineBody& A = model.bodies[p.body_a];
    const auto& xa = data.x[p.body_a];
    Vec3 normal;
    double s;
    if (p.kind == BarrierPair::PointPlane) {
      const GroundPlane& g = model.planes[p.body_b];
      const double gap = g.normal.dot(xa[p.a]) - g.offset;
      s = gap * gap;
      normal = g.normal;
      f.npts = 1;
      f.body[0] = p.body_a;
      f.xbar[0] = A.rest[p.a];
      f.weight[0] = 1.0;
    } else {
      const AffineBody& B = model.bodies[p.body_b];
      const auto& xb = data.x[p.body_b];
      Vec3 pts[4];
      f.npts = 4;
      if (p.kind == BarrierPair::PointTriangle) {
        const auto& t = B.faces[p.b];
        const int idx[4] = {p.a, t[0], t[1], t[2]};
        for (int k = 0; k < 4; ++k) {
          f.body[k] = k == 0 ? p.body_a : p.body_b;
          f.xbar[k] = k == 0 ? A.rest[idx[k]] : B.rest[idx[k]];
          pts[k] = k == 0 ? xa[idx[k]] : xb[idx[k]];
        }
        const Vec3 w = triangleWeights(pts[0], pts[1], pts[2], pts[3]);
        f.weight[0] = 1.0;
        for (int k = 0; k < 3; ++k) f.weight[k + 1] = -w[k];
      } else {
        const auto &ea = A.edges[p.a], &eb = B.edges[p.b];
        const int idx[4] = {ea[0], ea[1], eb[0], eb[1]};
        for (int k = 0; k < 4; ++k) {
          f.body[k] = k < 2 ? p.body_a : p.body_b;
          f.xbar[k] = k < 2 ? A.rest[idx[k]] : B.rest[idx[k]];
          pts[k] = k < 2 ? xa[idx[k]] : xb[idx[k]];
        }
        const Eigen::Vector2d ab = edgeParameters(pts[0], pts[1], pts[2], pts[3]);
        f.weight[0] = 1.0 - ab[0];
        f.weight[1] = ab[0];
        f.weight[2] = -(1.0 - ab[1]);
        f.weight[3] = -ab[1];
      }
      Vec3 gap = Vec3::Zero();
      for (int k = 0; k < 4; ++k) gap += f.weight[k] * pts[k];
      s = gap.squaredNorm();
      if (!(s > 0.0)) continue;
      normal = gap / std::sqrt(s);
    }
    // the normal force of the pair's barrier in the potential's units (edge–edge terms without their
    // mollifier's own gradient, which only fades nearly parallel pairs)
    const double lambda = -kappa * barrierFirstDerivative(s, shat) * 2.0 * std::sqrt(s);
    if (!(lambda > 0.0)) continue;
    f.basis = tangentBasis(normal);
    f.normal_force = mu * lambda;
    data.friction.push_back(f);
  }
}

namespace {

// the friction potential of pair f at q and its derivatives in the coordinates of its one or two bodies
void frictionTerms(const BarrierWorldModel& model, const FrictionPair& f, const double* q, const double* q_n,
                   bool need_gradient, bool need_hessian, BodyPairTerms& out) {
  const double eps = model.options.friction_velocity * model.dt;
  const int bodies[2] = {f.body[0], f.npts == 4 ? f.body[3] : -1};
  // slip u = T^T sum_k c_k J_k (q - q_n); G (2 x 24) maps the one or two bodies' coordinates to it
  Eigen::Matrix<double, 2, 24> G = Eigen::Matrix<double, 2, 24>::Zero();
  Eigen::Matrix<double, 24, 1> dq = Eigen::Matrix<double, 24, 1>::Zero();
  for (int s = 0; s < 2; ++s)
    if (bodies[s] >= 0)
      for (int r = 0; r < 12; ++r) dq[12 * s + r] = q[12 * bodies[s] + r] - q_n[12 * bodies[s] + r];
  for (int k = 0; k < f.npts; ++k) {
    // T^T J(xbar) without forming J: column p_i is T's row i, column a_i's entry m is that times xbar_m
    const int at = f.body[k] == bodies[0] ? 0 : 12;
    for (int i = 0; i < 3; ++i) {
      const Eigen::Vector2d t = f.weight[k] * f.basis.row(i).transpose();
      G.col(at + i) += t;
      for (int m = 0; m < 3; ++m) G.col(at + 3 + 3 * i + m) += t * f.xbar[k][m];
    }
  }
  const Eigen::Vector2d u = G * dq;
  const double y = u.norm();
  double f0, f1_over_y, f1_prime;
  if (y < eps) {
    f0 = -y * y * y / (3.0 * eps * eps) + y * y / eps + eps / 3.0;
    f1_over_y = 2.0 / eps - y / (eps * eps);
    f1_prime = 2.0 / eps - 2.0 * y / (eps * eps);
  } else {
    f0 = y;
    f1_over_y = 1.0 / y;
    f1_prime = 0.0;
  }
  out.value = f.normal_force * f0;
  if (need_gradient) out.gradient = f.normal_force * f1_over_y * G.transpose() * u;
  if (need_hessian) {
    // d2f0/du2 = f1/y (I - uu^T/y^2) + f1' uu^T/y^2: eigenvalues f1/y and f1' >= 0, already PSD
    Eigen::Matrix2d inner = f1_over_y * Eigen::Matrix2d::Identity();
    if (y > 0.0) {
      const Eigen::Vector2d uh = u / y;
      inner += (f1_prime - f1_over_y) * uh * uh.transpose();
    }
    out.hessian.noalias() = f.normal_force * G.transpose() * inner * G;
  }
}

}  // namespace

double frictionPotential(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* q_n,
                         double* grad, BlockHessian* hessian) {
  const size_t n = data.friction.size();
  data.terms.resize(n);
  parallelChunks(n, [&](size_t i) {
    frictionTerms(model, data.friction[i], q, q_n, grad != nullptr, hessian != nullptr, data.terms[i]);
  });
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const FrictionPair& f = data.friction[i];
    const BodyPairTerms& t = data.terms[i];
    const int bodies[2] = {movingBody(model, f.body[0]), f.npts == 4 ? movingBody(model, f.body[3]) : -1};
    total += t.value;
    if (grad)
      for (int s = 0; s < 2; ++s)
        if (bodies[s] >= 0)
          for (int r = 0; r < 12; ++r) grad[12 * bodies[s] + r] += t.gradient[12 * s + r];
    if (hessian) hessian->addPair(bodies[0], bodies[1], t.hessian);
  }
  return total;
}

}  // namespace rigidiff
