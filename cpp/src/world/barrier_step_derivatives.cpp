// Derivatives of the barrier step by the implicit function theorem (world/barrier_step_derivatives.hpp).
#include "rigidiff/world/barrier_step_derivatives.hpp"

#include <utility>

#include "rigidiff/abd/orthogonality.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/barrier_contacts.hpp"
#include "rigidiff/world/barrier_friction.hpp"
#include "rigidiff/world/barrier_step.hpp"

namespace rigidiff {

namespace {

using RowMajorMatX = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// out (nq) += the pair's 24 entries at its bodies' coordinates
void scatterPair(const int* bodies, const Eigen::Matrix<double, 24, 1>& x, double weight, double* out) {
  for (int s = 0; s < 2; ++s)
    if (bodies[s] >= 0)
      for (int r = 0; r < 12; ++r) out[12 * bodies[s] + r] += weight * x[12 * s + r];
}

// the pair's 24 entries of w (zero for a missing body)
Eigen::Matrix<double, 24, 1> gatherPair(const int* bodies, const VecX& w) {
  Eigen::Matrix<double, 24, 1> out = Eigen::Matrix<double, 24, 1>::Zero();
  for (int s = 0; s < 2; ++s)
    if (bodies[s] >= 0) out.segment<12>(12 * s) = w.segment<12>(12 * bodies[s]);
  return out;
}

// C^T w, C = d grad D / dq_n (the friction's dependence on the start state)
VecX frictionStartTransposeTimes(const BarrierWorldModel& model, const BarrierStepLinearisation& lin, const VecX& w) {
  VecX out = VecX::Zero(model.nq());
  for (const FrictionPairDerivative& f : lin.friction)
    scatterPair(f.bodies, f.start.transpose() * gatherPair(f.bodies, w), 1.0, out.data());
  return out;
}

// lin.coupling += the blocks between a moving and a static body of the sums of the last barrier or friction
// potential (data.sums)
void collectStaticCoupling(const BarrierWorldModel& model, const BarrierWorldData& data, BarrierStepLinearisation& lin) {
  data.sums.forEach([&](const BodyPairSum& t) {
    const int a = t.body[0], b = t.body[1];
    if (a < 0 || b < 0 || model.bodies[a].fixed == model.bodies[b].fixed) return;
    if (model.bodies[b].fixed)
      lin.coupling.push_back({a, b, t.hessian.block<12, 12>(0, 12)});
    else
      lin.coupling.push_back({b, a, t.hessian.block<12, 12>(12, 0)});
  });
}

// x with the rows of static bodies set to zero: they are not equations of the step
template <class X>
void zeroStaticRows(const BarrierWorldModel& model, X& x) {
  for (size_t i = 0; i < model.bodies.size(); ++i)
    if (model.bodies[i].fixed) x.middleRows(12 * i, 12).setZero();
}

// the block-diagonal mass matrix times x
VecX massTimes(const BarrierWorldModel& model, const VecX& x) {
  VecX out(model.nq());
  for (size_t i = 0; i < model.bodies.size(); ++i)
    out.segment<12>(12 * i) = model.bodies[i].mass_matrix * x.segment<12>(12 * i);
  return out;
}

// dr/dtheta (nq x (2 nb + 5)) at the solution for the first nb bodies' density and stiffness, friction, dhat and
// gravity; data.pairs and data.x are those of q_next
MatX parameterDerivatives(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                          const double* q_next, double kappa_end, int nb, const BarrierStepLinearisation& lin) {
  const int n = model.nq();
  const double h = model.dt;
  MatX P = MatX::Zero(n, 2 * nb + 5);
  for (int i = 0; i < nb; ++i) {
    const AffineBody& body = model.bodies[i];
    const int at = 12 * i;
    Vec12 dq;
    for (int r = 0; r < 12; ++r) dq[r] = q_next[at + r] - q[at + r] - h * v[at + r];
    // the mass matrix and gravity's generalised force are proportional to the density
    P.block<12, 1>(at, i) = (body.mass_matrix * dq - h * h * affineGravityForce(body, model.gravity)) / body.density;
    P.block<12, 1>(at, nb + i) = h * h * orthogonalityGradient(q_next + at, body.integrals.volume);
    // gravity's generalised force is linear in g
    for (int k = 0; k < 3; ++k) P.block<12, 1>(at, 2 * nb + 2 + k) = -h * h * affineGravityForce(body, Vec3::Unit(k));
  }
  VecX friction = VecX::Zero(n), dhat = VecX::Zero(n);
  for (const FrictionPairDerivative& f : lin.friction) {
    scatterPair(f.bodies, f.unit_force, 1.0, friction.data());
    scatterPair(f.bodies, f.unit_force, model.options.friction * f.shat_ratio, dhat.data());
  }
  barrierPotential(model, data, kappa_end, dhat.data(), nullptr, true, true);
  P.col(2 * nb) = friction;
  P.col(2 * nb + 1) = 2.0 * model.options.dhat * dhat;  // d/d dhat = 2 dhat d/d shat
  zeroStaticRows(model, P);
  return P;
}

}  // namespace

int barrierParameterCount(const BarrierWorldModel& model) { return 2 * static_cast<int>(model.bodies.size()) + 5; }

void linearizeBarrierContacts(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                              const double* q_next, double kappa_start, double kappa_end, int parameter_bodies,
                              BarrierStepLinearisation& lin) {
  const double h = model.dt;
  lin.coupling.clear();
  // the start state: the friction pairs the step froze there, and how they move with it
  barrierPositions(model, q, data.x);
  collectBarrierPairs(model, data);
  buildFrictionPairs(model, data, kappa_start);
  frictionDerivatives(model, data, q_next, q, kappa_start, lin.friction);
  // the exact Hessian of E at the solution: mass, orthogonality, barrier (not projected) and friction
  data.hessian.reset(static_cast<int>(model.bodies.size()));
  for (size_t i = 0; i < model.bodies.size(); ++i) {
    const AffineBody& body = model.bodies[i];
    const int at = 12 * static_cast<int>(i);
    data.hessian.addDiagonal(static_cast<int>(i),
                             body.fixed ? body.mass_matrix
                                        : Mat12(body.mass_matrix + h * h * orthogonalityHessian(
                                              q_next + at, body.stiffness * body.integrals.volume)));
  }
  barrierPositions(model, q_next, data.x);
  collectBarrierPairs(model, data);
  barrierPotential(model, data, kappa_end, nullptr, &data.hessian, false);
  collectStaticCoupling(model, data, lin);
  frictionPotential(model, data, q_next, q, nullptr, &data.hessian);
  collectStaticCoupling(model, data, lin);
  lin.parameters = parameterDerivatives(model, data, q, v, q_next, kappa_end, parameter_bodies, lin);
}

void linearizeBarrierStep(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                          const double* tau, const double* q_next, double kappa_start, double kappa_end,
                          BarrierStepLinearisation& lin) {
  (void)tau;  // r is linear in tau: it leaves no trace in H, C or dr/dtheta
  linearizeBarrierContacts(model, data, q, v, q_next, kappa_start, kappa_end, static_cast<int>(model.bodies.size()),
                           lin);
  if (data.hessian.writeLower(data.matrix)) data.ldlt.analyzePattern(data.matrix);
  data.ldlt.factorize(data.matrix);
  if (data.ldlt.info() != Eigen::Success)
    RD_THROW(std::runtime_error, "barrier step derivatives: the Hessian at the solution is singular");
}

void barrierStepJacobians(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                          const double* tau, double* q_out, double* v_out, double* dq_dq, double* dq_dv,
                          double* dq_dtau, double* dv_dq, double* dv_dv, double* dv_dtau, double* dq_dp,
                          double* dv_dp) {
  barrierStep(model, data, q, v, tau, q_out, v_out);
  BarrierStepLinearisation lin;
  linearizeBarrierStep(model, data, q, v, tau, q_out, data.stats.kappa_start, data.stats.kappa, lin);
  const int n = model.nq(), np = barrierParameterCount(model);
  const double h = model.dt;
  MatX M = MatX::Zero(n, n), C = MatX::Zero(n, n);
  for (size_t i = 0; i < model.bodies.size(); ++i) M.block<12, 12>(12 * i, 12 * i) = model.bodies[i].mass_matrix;
  for (const FrictionPairDerivative& f : lin.friction)
    for (int s = 0; s < 2; ++s)
      for (int t = 0; t < 2; ++t)
        if (f.bodies[s] >= 0 && f.bodies[t] >= 0)
          C.block<12, 12>(12 * f.bodies[s], 12 * f.bodies[t]) += f.start.block<12, 12>(12 * s, 12 * t);
  // -dr/dq on the moving bodies' rows: M - C, and -(H_coupling + C) in a static body's columns
  MatX R = M - C, D = MatX::Identity(n, n);
  for (const StaticCoupling& c : lin.coupling) R.block<12, 12>(12 * c.moving, 12 * c.fixed) -= c.block;
  zeroStaticRows(model, R);
  zeroStaticRows(model, M);
  zeroStaticRows(model, D);
  MatX X = data.ldlt.solve(R);                             // dq'/dq
  for (size_t i = 0; i < model.bodies.size(); ++i)
    if (model.bodies[i].fixed) X.block<12, 12>(12 * i, 12 * i).setIdentity();  // the step keeps it: q' = q
  const MatX Y = data.ldlt.solve(D);                       // H^-1 on the moving bodies' rows
  const MatX Z = data.ldlt.solve(M);                       // H^-1 M
  const MatX P = -data.ldlt.solve(lin.parameters);         // dq'/dtheta
  Eigen::Map<RowMajorMatX> qq(dq_dq, n, n), qv(dq_dv, n, n), qt(dq_dtau, n, n);
  Eigen::Map<RowMajorMatX> vq(dv_dq, n, n), vv(dv_dv, n, n), vt(dv_dtau, n, n);
  qq = X;
  qv = h * Z;
  qt = h * h * Y;
  vq = (X - MatX::Identity(n, n)) / h;
  vv = Z;
  vt = h * Y;
  Eigen::Map<RowMajorMatX>(dq_dp, n, np) = P;
  Eigen::Map<RowMajorMatX>(dv_dp, n, np) = P / h;
}

void barrierVjpAt(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                  const double* tau, const double* q_next, double kappa_start, double kappa_end, const double* gq_next,
                  const double* gv_next, double* gq, double* gv, double* gtau, double* gparams) {
  BarrierStepLinearisation lin;
  linearizeBarrierStep(model, data, q, v, tau, q_next, kappa_start, kappa_end, lin);
  const int n = model.nq();
  const double h = model.dt;
  const Eigen::Map<const VecX> a(gq_next, n), b(gv_next, n);
  // the cotangent of q' itself: q' enters directly and through v' = (q' - q) / dt; H is symmetric. A static
  // body's q' = q and v' = 0 are no unknowns: its rows stay out of the solve (w = 0 there)
  VecX rhs = a + b / h;
  zeroStaticRows(model, rhs);
  VecX w = data.ldlt.solve(rhs);
  zeroStaticRows(model, w);
  const VecX Mw = massTimes(model, w);
  Eigen::Map<VecX> out_q(gq, n);
  out_q = Mw - frictionStartTransposeTimes(model, lin, w) - b / h;
  for (size_t i = 0; i < model.bodies.size(); ++i)
    if (model.bodies[i].fixed) out_q.segment<12>(12 * i) += a.segment<12>(12 * i) + b.segment<12>(12 * i) / h;
  for (const StaticCoupling& c : lin.coupling)
    out_q.segment<12>(12 * c.fixed) -= c.block.transpose() * w.segment<12>(12 * c.moving);
  Eigen::Map<VecX>(gv, n) = h * Mw;
  Eigen::Map<VecX>(gtau, n) = h * h * w;
  Eigen::Map<VecX>(gparams, barrierParameterCount(model)) = -lin.parameters.transpose() * w;
}

void barrierStepVjp(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                    const double* tau, const double* gq_next, const double* gv_next, double* q_out, double* v_out,
                    double* gq, double* gv, double* gtau, double* gparams) {
  barrierStep(model, data, q, v, tau, q_out, v_out);
  barrierVjpAt(model, data, q, v, tau, q_out, data.stats.kappa_start, data.stats.kappa, gq_next, gv_next, gq, gv,
               gtau, gparams);
}

void reverseRollout(int nq, int n, int np, int T, const double* Q, const double* V, const double* taus, const double* kappas,
                    const double* GQ, const double* GV, double* gq0, double* gv0, double* gtaus, double* gparams,
                    const StepVjpAt& vjp) {
  RD_CHECK_ARG(T >= 0, "the rollout must have T >= 0 steps, got " << T);
  VecX gq = Eigen::Map<const VecX>(GQ + static_cast<long>(T) * n, n);
  VecX gv = Eigen::Map<const VecX>(GV + static_cast<long>(T) * n, n);
  VecX step_q(n), step_v(n), step_p(np), total_p = VecX::Zero(np);
  for (int t = T - 1; t >= 0; --t) {
    const long at = static_cast<long>(t) * n, at_q = static_cast<long>(t) * nq;
    vjp(Q + at_q, V + at, taus + at, Q + at_q + nq, kappas[2 * t], kappas[2 * t + 1], gq.data(), gv.data(), step_q.data(),
        step_v.data(), gtaus + at, step_p.data());
    gq = step_q + Eigen::Map<const VecX>(GQ + at, n);
    gv = step_v + Eigen::Map<const VecX>(GV + at, n);
    total_p += step_p;
  }
  Eigen::Map<VecX>(gq0, n) = gq;
  Eigen::Map<VecX>(gv0, n) = gv;
  Eigen::Map<VecX>(gparams, np) = total_p;
}

void barrierRolloutBackward(const BarrierWorldModel& model, BarrierWorldData& data, int T, const double* Q,
                            const double* V, const double* taus, const double* kappas, const double* GQ,
                            const double* GV, double* gq0, double* gv0, double* gtaus, double* gparams) {
  reverseRollout(model.nq(), model.nq(), barrierParameterCount(model), T, Q, V, taus, kappas, GQ, GV, gq0, gv0, gtaus, gparams,
                 [&](const double* q, const double* v, const double* tau, const double* q_next, double ks, double ke,
                     const double* gq_next, const double* gv_next, double* gq, double* gv, double* gtau, double* gp) {
                   barrierVjpAt(model, data, q, v, tau, q_next, ks, ke, gq_next, gv_next, gq, gv, gtau, gp);
                 });
}

}  // namespace rigidiff
