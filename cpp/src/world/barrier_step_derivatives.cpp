// Derivatives of the barrier step by the implicit function theorem (world/barrier_step_derivatives.hpp).
#include "rigidiff/world/barrier_step_derivatives.hpp"

#include "rigidiff/abd/orthogonality.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/barrier_contacts.hpp"
#include "rigidiff/world/barrier_step.hpp"

namespace rigidiff {

namespace {

using RowMatX = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// the step to q_out, then the exact Hessian of E there factorised in data.ldlt
void stepAndFactor(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                   const double* tau, double* q_out, double* v_out) {
  RD_CHECK_ARG(model.options.friction == 0.0, "step derivatives of barrier worlds with friction are not "
                                              "implemented yet (friction must be 0)");
  for (const AffineBody& b : model.bodies)
    RD_CHECK_ARG(!b.fixed, "step derivatives of barrier worlds with static meshes are not implemented yet ('"
                               << b.name << "' is static)");
  barrierStep(model, data, q, v, tau, q_out, v_out);
  const double h = model.dt;
  data.hessian.reset(static_cast<int>(model.bodies.size()));
  for (size_t i = 0; i < model.bodies.size(); ++i) {
    const AffineBody& body = model.bodies[i];
    const int at = 12 * static_cast<int>(i);
    data.hessian.addDiagonal(static_cast<int>(i), body.mass_matrix + h * h * orthogonalityHessian(
                                                      q_out + at, body.stiffness * body.integrals.volume));
  }
  barrierPositions(model, q_out, data.x);
  collectBarrierPairs(model, data);
  barrierPotential(model, data, data.stats.kappa, nullptr, &data.hessian, false);
  if (data.hessian.writeLower(data.matrix)) data.ldlt.analyzePattern(data.matrix);
  data.ldlt.factorize(data.matrix);
  if (data.ldlt.info() != Eigen::Success)
    RD_THROW(std::runtime_error, "barrier step derivatives: the Hessian at the solution is singular");
}

MatX blockMass(const BarrierWorldModel& model) {
  const int n = model.nq();
  MatX M = MatX::Zero(n, n);
  for (size_t i = 0; i < model.bodies.size(); ++i) M.block<12, 12>(12 * i, 12 * i) = model.bodies[i].mass_matrix;
  return M;
}

}  // namespace

void barrierStepJacobians(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                          const double* tau, double* q_out, double* v_out, double* dq_dq, double* dq_dv,
                          double* dq_dtau, double* dv_dq, double* dv_dv, double* dv_dtau) {
  stepAndFactor(model, data, q, v, tau, q_out, v_out);
  const int n = model.nq();
  const double h = model.dt;
  const MatX X = data.ldlt.solve(blockMass(model));            // H^-1 M
  const MatX Y = data.ldlt.solve(MatX::Identity(n, n));        // H^-1
  Eigen::Map<RowMatX> qq(dq_dq, n, n), qv(dq_dv, n, n), qt(dq_dtau, n, n);
  Eigen::Map<RowMatX> vq(dv_dq, n, n), vv(dv_dv, n, n), vt(dv_dtau, n, n);
  qq = X;
  qv = h * X;
  qt = h * h * Y;
  vq = (X - MatX::Identity(n, n)) / h;
  vv = X;
  vt = h * Y;
}

void barrierStepVjp(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                    const double* tau, const double* gq_next, const double* gv_next, double* q_out, double* v_out,
                    double* gq, double* gv, double* gtau) {
  stepAndFactor(model, data, q, v, tau, q_out, v_out);
  const int n = model.nq();
  const double h = model.dt;
  const Eigen::Map<const VecX> a(gq_next, n), b(gv_next, n);
  // the cotangent of q' itself: q' enters directly and through v' = (q' - q) / dt; H is symmetric
  const VecX w = data.ldlt.solve(a + b / h);
  VecX Mw(n);
  for (size_t i = 0; i < model.bodies.size(); ++i) Mw.segment<12>(12 * i) = model.bodies[i].mass_matrix * w.segment<12>(12 * i);
  Eigen::Map<VecX>(gq, n) = Mw - b / h;
  Eigen::Map<VecX>(gv, n) = h * Mw;
  Eigen::Map<VecX>(gtau, n) = h * h * w;
}

}  // namespace rigidiff
