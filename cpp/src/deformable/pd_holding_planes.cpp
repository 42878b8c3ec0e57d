// The planes the complementarity contact holds vertices on (pd_complementarity.hpp): a ground plane itself, or the
// tangent plane of a ball or box at the point nearest where the vertex slides to from its start, carried along the
// normal by the obstacle's surface velocity over the step; and the adjoint's chain through them to the start and
// the poses.
//
// The plane of a pair depends on the vertex's start q_i, v_i and on the obstacle's pose, so it is written once, on a
// scalar type that may carry derivatives (12 of them: q_i, v_i, the translation, the rotation about the obstacle's
// position in world axes), and the adjoint reads its Jacobian from the same code the step runs.
#include <unsupported/Eigen/AutoDiff>

#include "rigidiff/deformable/pd_complementarity.hpp"
#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {
namespace {

using PlaneDual = Eigen::AutoDiffScalar<Eigen::Matrix<double, 12, 1>>;

double plainValue(double x) { return x; }
double plainValue(const PlaneDual& x) { return x.value(); }

// The normal n of obstacle o (a ball or box at position p, a box turned by the small rotation dw) at the point x,
// and its surface point nearest x
template <typename T>
void nearest(const PdModel& model, int o, const Eigen::Matrix<T, 3, 1>& x, const Eigen::Matrix<T, 3, 1>& p,
             const Eigen::Matrix<T, 3, 1>& dw, Eigen::Matrix<T, 3, 1>& n, Eigen::Matrix<T, 3, 1>& surface) {
  using V3 = Eigen::Matrix<T, 3, 1>;
  using M3 = Eigen::Matrix<T, 3, 3>;
  const int n_planes = static_cast<int>(model.planes.size()), n_spheres = static_cast<int>(model.spheres.size());
  if (o < n_planes + n_spheres) {
    const V3 r = x - p;
    const T len = r.norm();
    n = plainValue(len) > 0.0 ? V3(r / len) : V3(V3::UnitZ());
    surface = p + T(model.spheres[o - n_planes].radius) * n;
    return;
  }
  const PdBox& b = model.boxes[o - n_planes - n_spheres];
  M3 turn = M3::Identity();  // I + [dw]x: first order is all the derivatives need
  turn(0, 1) = -dw[2], turn(0, 2) = dw[1], turn(1, 0) = dw[2], turn(1, 2) = -dw[0], turn(2, 0) = -dw[1],
  turn(2, 1) = dw[0];
  const M3 R = turn * b.rotation.cast<T>();
  const V3 local = R.transpose() * (x - p);
  V3 clamped = local;
  int outside = 0, widest = 0;
  double most = -1e300;
  for (int k = 0; k < 3; ++k) {
    const double excess = std::abs(plainValue(local[k])) - b.half[k];
    if (excess > most) most = excess, widest = k;
    if (excess > 0.0) clamped[k] = T(plainValue(local[k]) < 0.0 ? -b.half[k] : b.half[k]), ++outside;
  }
  const V3 out = local - clamped;
  const T d = out.norm();
  if (outside >= 2 && plainValue(d) > kContactGap) {  // nearest an edge or a corner: along the way to it
    n = R * out / d;
    surface = p + R * clamped;
  } else {  // nearest a face (or within the gap of an edge): that face's plane
    const double sign = plainValue(local[widest]) < 0.0 ? -1.0 : 1.0;
    n = sign * R.col(widest);
    surface = x - (n.dot(x - p) - T(b.half[widest])) * n;
  }
}

// (n, h) of obstacle o's holding plane for a vertex starting at q with velocity v, the obstacle translated by dp
// and turned by the small rotation dw about its position (both zero in value: only their derivatives are wanted)
template <typename T>
void holdingPlane(const PdModel& model, int o, const Eigen::Matrix<T, 3, 1>& q, const Eigen::Matrix<T, 3, 1>& v,
                  const Eigen::Matrix<T, 3, 1>& dp, const Eigen::Matrix<T, 3, 1>& dw, Eigen::Matrix<T, 3, 1>& n,
                  T& h) {
  using V3 = Eigen::Matrix<T, 3, 1>;
  if (o < static_cast<int>(model.planes.size())) {
    n = model.planes[o].normal.cast<T>();
    h = T(model.planes[o].offset);
    return;
  }
  Vec3 position, linear, angular;
  model.obstacleMotion(o, &position, &linear, &angular);
  const V3 p = position.cast<T>() + dp;
  auto surface_velocity = [&](const V3& at) { return V3(linear.cast<T>() + angular.cast<T>().cross(at - p)); };
  // the tangent point is the one nearest where the vertex slides to over the step (relative to the obstacle's
  // surface, along the tangent plane at q): a sliding vertex then ends near it, on a ball's surface to second
  // order in its change of velocity rather than in its slide
  V3 n0, surface;
  nearest(model, o, q, p, dw, n0, surface);
  const V3 slide = T(model.dt) * (v - surface_velocity(q));
  nearest(model, o, V3(q + slide - n0.dot(slide) * n0), p, dw, n, surface);
  // the surface point moves with the obstacle's velocity during the step: the plane follows it along n
  h = n.dot(surface) + T(model.dt) * n.dot(surface_velocity(surface));
}

}  // namespace

void pdHoldingPlane(const PdModel& model, int o, const Vec3& q, const Vec3& v, Vec3* normal, double* offset) {
  holdingPlane<double>(model, o, q, v, Vec3::Zero(), Vec3::Zero(), *normal, *offset);
}

double pdAdvancedDistance(const PdModel& model, int o, const Vec3& x) {
  Vec3 normal, position, linear, angular;
  double curvature;
  model.obstacleMotion(o, &position, &linear, &angular);
  // the point carried back by the obstacle's motion over the step (to first order in its rotation)
  const Vec3 back = x - model.dt * (linear + angular.cross(x - position));
  return model.obstacleDistance(o, back, &normal, &curvature);
}

void pdHoldingPlaneCotangents(const PdModel& model, const PdActiveSet& active, const Points& q, const Points& v,
                              const Points& x, const Points& Z, const Points& residual, const VecX& forces, Points& gq,
                              Points& gv, VecX& grad_obstacles) {
  // with the pairs' planes N^T x = h, the adjoint (z, nu) of the step's KKT system gives dL/dh = mu, the
  // multipliers of b - H z = N mu at each held vertex, and dL/dn = lambda z_i - mu x_i (lambda: the step's
  // normal forces); both chained through the plane's Jacobian to q_i, v_i and the obstacle's pose
  const int n_planes = static_cast<int>(model.planes.size());
  for (int first = 0; first < active.size();) {
    int last = first + 1;
    while (last < active.size() && active.vertex[last] == active.vertex[first]) ++last;
    const int i = active.vertex[first];
    bool moving = false;
    for (int p = first; p < last; ++p) moving = moving || active.obstacle[p] >= n_planes;
    if (!moving) {
      first = last;
      continue;
    }
    Eigen::Matrix3Xd N(3, last - first);
    for (int p = first; p < last; ++p) N.col(p - first) = active.normal[p];
    const Eigen::VectorXd mu = (N.transpose() * N).ldlt().solve(N.transpose() * residual.row(i).transpose());
    for (int p = first; p < last; ++p) {
      const int o = active.obstacle[p];
      if (o < n_planes) continue;
      Eigen::Matrix<PlaneDual, 3, 1> qd, vd, dp, dw, nd;
      PlaneDual hd;
      for (int k = 0; k < 3; ++k) {
        qd[k] = PlaneDual(q(i, k), 12, k);
        vd[k] = PlaneDual(v(i, k), 12, 3 + k);
        dp[k] = PlaneDual(0.0, 12, 6 + k);
        dw[k] = PlaneDual(0.0, 12, 9 + k);
      }
      holdingPlane<PlaneDual>(model, o, qd, vd, dp, dw, nd, hd);
      const double m = mu[p - first];
      const Vec3 g_normal = forces[p] * Z.row(i).transpose() - m * x.row(i).transpose();
      Eigen::Matrix<double, 12, 1> total = m * hd.derivatives();
      for (int k = 0; k < 3; ++k) total += g_normal[k] * nd[k].derivatives();
      gq.row(i) += total.head<3>().transpose();
      gv.row(i) += total.segment<3>(3).transpose();
      grad_obstacles.segment<6>(6 * o) += total.tail<6>();
    }
    first = last;
  }
}

}  // namespace deformable
}  // namespace rigidiff
