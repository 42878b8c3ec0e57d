// Derivatives of the lagged friction's gradient (world/barrier_friction_derivatives.hpp).
#include "rigidiff/world/barrier_friction_derivatives.hpp"

#include "rigidiff/world/friction_frame.hpp"

namespace rigidiff {

namespace {

// dual numbers over the 24 start coordinates of a pair's one or two bodies
using Dual = Eigen::AutoDiffScalar<Eigen::Matrix<double, 24, 1>>;
using DualVec3 = friction_frame::Vec3T<Dual>;

// coordinate r (0..11) of the body in slot s at q_n, seeded as dual variable 12 s + r
Dual seeded(const double* q_n, int body, int s, int r) {
  return Dual(q_n[12 * body + r], 24, 12 * s + r);
}

}  // namespace

void frictionDerivatives(const BarrierWorldModel& model, const BarrierWorldData& data, const double* q_next,
                         const double* q_n, double kappa_start,
                         std::vector<FrictionPairDerivative, Eigen::aligned_allocator<FrictionPairDerivative>>& out) {
  out.clear();
  const double mu = model.options.friction, shat = model.options.dhat * model.options.dhat;
  const double eps = model.options.friction_velocity * model.dt;
  for (const BarrierPair& p : data.pairs) {
    const int bodies[2] = {p.body_a, p.kind == BarrierPair::PointPlane ? -1 : p.body_b};
    // x = A xbar + p of a vertex at the start state, as a function of its body's start coordinates
    const auto point = [&](int body, int vertex) {
      const int s = body == bodies[0] ? 0 : 1;
      const Vec3& xbar = model.bodies[body].rest[vertex];
      DualVec3 x;
      for (int i = 0; i < 3; ++i)
        x[i] = seeded(q_n, body, s, i) + seeded(q_n, body, s, 3 + 3 * i) * xbar[0] +
               seeded(q_n, body, s, 4 + 3 * i) * xbar[1] + seeded(q_n, body, s, 5 + 3 * i) * xbar[2];
      return x;
    };
    friction_frame::Frame<Dual> frame;
    int body[4] = {0, 0, 0, 0};
    Vec3 xbar[4];
    if (!friction_frame::pairFrame<Dual>(model, p, kappa_start, point, frame, body, xbar)) continue;
    int slot[4];
    for (int k = 0; k < frame.npts; ++k) slot[k] = body[k] == bodies[0] ? 0 : 1;
    // the slip's move q' - q_n, whose reference is the start state too
    Eigen::Matrix<Dual, 24, 1> dq;
    for (int s = 0; s < 2; ++s)
      for (int r = 0; r < 12; ++r)
        dq[12 * s + r] = bodies[s] >= 0 ? q_next[12 * bodies[s] + r] - seeded(q_n, bodies[s], s, r) : Dual(0.0);
    const Eigen::Matrix<Dual, 2, 24> G = friction_frame::slipMap<Dual>(frame.npts, frame.weight, frame.basis, xbar, slot);
    const Eigen::Matrix<Dual, 2, 1> u = G * dq;
    const Dual y2 = u.squaredNorm();
    using std::sqrt;
    const Dual y = y2.value() > 0.0 ? sqrt(y2) : Dual(0.0);
    const Eigen::Matrix<Dual, 24, 1> force = frame.lambda * friction_frame::mollifierRatio(y, eps) * (G.transpose() * u);
    FrictionPairDerivative d;
    d.bodies[0] = bodies[0];
    d.bodies[1] = bodies[1];
    for (int r = 0; r < 24; ++r) {
      d.unit_force[r] = force[r].value();
      d.start.row(r) = mu * force[r].derivatives().transpose();
    }
    const double s = frame.s.value();
    const double b1 = barrierFirstDerivative(s, shat), b2 = barrierSecondDerivative(s, shat);
    d.shat_ratio = (b1 - s * b2) / (shat * b1);  // lambda is proportional to b'(s; shat): see barrier_contacts.cpp
    out.push_back(d);
  }
}

}  // namespace rigidiff
