#include "rigidiff/world/implicit_step.hpp"

#include <algorithm>
#include <cmath>

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/crba.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/algorithm/rnea.hpp"
#include "rigidiff/linalg/dense_product.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/free_joint_motion.hpp"
#include "rigidiff/world/step.hpp"
#include "rigidiff/world/step_derivatives.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"

namespace rigidiff {

ImplicitWorkspace::ImplicitWorkspace(const Model& model) {
  const Eigen::Index nv = model.nv;
  for (VecX* x : {&w, &a, &F, &dw, &w_prev, &ext, &rest, &tau_c}) *x = VecX::Zero(nv);
  for (MatX* m : {&J, &R, &tmp}) *m = MatX::Zero(nv, nv);
  lu = Eigen::PartialPivLU<MatX>(nv);
}

namespace {

// ws.a from ws.w: the acceleration the residual uses
void residualAcceleration(const Model& model, ImplicitWorkspace& ws, const double* v, double dt) {
  ws.a = (ws.w - Eigen::Map<const VecX>(v, model.nv)) / dt;
  subtractFrameTurnAcceleration(model, ws.w.data(), ws.a.data());
}

// ws.F from rnea(q, w, a) in data.tau
void residualFromTau(const Model& model, const Data& data, ImplicitWorkspace& ws, double dt) {
  ws.F = data.tau - ws.tau_c - ws.ext;
  ws.F.array() += model.damping.array() * ws.w.array() + model.stiffness.array() * (ws.rest + dt * ws.w).array();
}

// The residual F and its Jacobian dF/dw at ws.w (data.M holding M(q), data.oMi and data.J q's kinematics);
// leaves dF/dq in data.dtau_dq and the factorisation of dF/dw in ws.lu.
void evaluateResidual(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q, const double* v,
                      double dt, const double* frame_wrenches) {
  residualAcceleration(model, ws, v, dt);
  data.ddq_tmp = ws.a;
  // rnea's value (data.tau) and derivatives at (q, w, a), springs and damping included in the derivatives
  stepResidualDerivatives(model, data, q, ws.w.data(), dt, frame_wrenches, true);
  residualFromTau(model, data, ws, dt);
  // dF/dw = d rnea/dv + D + dt K + M (I - dt ds/dw) / dt
  ws.J = data.M;
  if (hasStepMaps(model)) {
    ws.tmp.setZero();
    addFrameTurnJacobian(model, ws.w.data(), dt, ws.tmp);
    denseProduct(data.M, ws.tmp, ws.J);
    ws.J = data.M - ws.J;
  }
  ws.J /= dt;
  ws.J += data.dtau_dv;
  ws.lu.compute(ws.J);
}

// |F| at ws.w, without derivatives (a trial point of the line search)
double residualNorm(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q, const double* v,
                    double dt) {
  residualAcceleration(model, ws, v, dt);
  rnea(model, data, q, ws.w.data(), ws.a.data(), false);
  residualFromTau(model, data, ws, dt);
  return ws.F.norm();
}

[[noreturn]] void newtonFailed(const Model& model, const double* q, const double* v, double dt, const char* why) {
  RD_THROW(std::runtime_error, "the implicit step's Newton iteration " << why << " (dt = " << dt << ") at q = ["
                                   << Eigen::Map<const VecX>(q, model.nq).transpose() << "], v = ["
                                   << Eigen::Map<const VecX>(v, model.nv).transpose()
                                   << "]: take a smaller dt");
}

}  // namespace

void solveImplicitVelocity(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q, const double* v,
                           const double* tau, double dt, const double* frame_wrenches, bool final_evaluation) {
  const int nv = model.nv;
  for (int i = 1; i < model.njoints; ++i)
    RD_CHECK_ARG(!isGyroscopicJoint(model, i), "implicitStep: the model's implicit gyroscopic maps are on (joint "
                                                   << i << "); this step treats the gyroscopic term implicitly itself");
  Eigen::Map<const VecX> tt(tau, nv);
  ws.tau_c = tt.cwiseMax(-model.effort_limit).cwiseMin(model.effort_limit);
  difference(model, model.rest_position.data(), q, ws.rest.data());  // also the stiffness derivatives' column
  if (frame_wrenches) {  // sum J^T w = rnea(q, 0, 0) - rnea(q, 0, 0, wrenches)
    ws.F.setZero();
    ws.ext = rnea(model, data, q, ws.F.data(), ws.F.data(), false);
    forwardKinematics(model, data, q);
    externalWrenchesFromFrames(model, data, frame_wrenches);
    ws.ext -= rnea(model, data, q, ws.F.data(), ws.F.data(), true);
  } else {
    ws.ext.setZero();
  }
  // the semi-implicit step's velocity is the first guess
  freeVelocity(model, data, q, v, tau, dt, frame_wrenches, ws.w.data());
  crba(model, data, q);  // leaves q's kinematics (data.oMi, data.J) for the rnea derivatives
  // Newton's method with the Jacobian kept while it contracts well (chord steps: a residual costs one rnea, a
  // Jacobian the rnea derivatives and an LU), refreshed when a step contracts by less than kImplicitChordRate
  evaluateResidual(model, data, ws, q, v, dt, frame_wrenches);
  bool fresh = true;  // ws.lu factorises dF/dw at ws.w
  double last_size = 0.0, last_ratio = 0.0;
  for (ws.iterations = 0;; ++ws.iterations) {
    if (ws.iterations == kImplicitNewtonMaxIter) newtonFailed(model, q, v, dt, "did not converge");
    ws.dw = ws.lu.solve(ws.F);
    const double size = ws.dw.lpNorm<Eigen::Infinity>();
    if (!std::isfinite(size)) newtonFailed(model, q, v, dt, "met a singular Jacobian");
    const double scale = 1.0 + ws.w.lpNorm<Eigen::Infinity>();
    const double ratio = last_size > 0.0 ? size / last_size : 0.0;
    // done at kImplicitNewtonTol, or once a small correction stops halving after steps that contracted well:
    // the round-off floor, which the conditioning of dF/dw can hold above kImplicitNewtonTol
    if (size <= kImplicitNewtonTol * scale ||
        (size <= kImplicitNewtonNear * scale && ratio >= 0.5 && (fresh || last_ratio < kImplicitChordRate))) {
      ws.w -= ws.dw;
      break;
    }
    if (!fresh && ratio > kImplicitChordRate) {  // the kept Jacobian contracts too slowly: a Newton step
      evaluateResidual(model, data, ws, q, v, dt, frame_wrenches);
      fresh = true;
      continue;
    }
    // halve the step until |F| decreases (Armijo on |F|^2 along the correction), except at round-off level
    const double f0 = ws.F.norm();
    ws.w_prev = ws.w;
    double alpha = 1.0;
    for (;;) {
      ws.w = ws.w_prev - alpha * ws.dw;
      const double f = residualNorm(model, data, ws, q, v, dt);
      if (f <= (1.0 - 1e-4 * alpha) * f0 || alpha * size <= kImplicitNewtonNear * scale) break;
      alpha *= 0.5;
      if (alpha < kImplicitMinStep) {
        if (fresh)
          newtonFailed(model, q, v, dt,
                       "stalled: no step decreases the residual (at this dt the velocity-implicit equation may "
                       "have no solution)");
        ws.w = ws.w_prev;  // a kept Jacobian may point badly: retry with Newton's
        break;
      }
    }
    last_size = size;
    last_ratio = ratio;
    fresh = false;  // ws.F now holds the residual at ws.w (residualNorm)
    if (alpha < 1.0) {
      evaluateResidual(model, data, ws, q, v, dt, frame_wrenches);
      fresh = true;
    }
  }
  if (final_evaluation) evaluateResidual(model, data, ws, q, v, dt, frame_wrenches);
}

void finishImplicitStep(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q, double dt,
                        double* q_out, double* v_out) {
  std::copy(ws.w.data(), ws.w.data() + model.nv, v_out);
  finishStep(model, data, q, dt, q_out, v_out);
}

void implicitStep(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q, const double* v,
                  const double* tau, double dt, const double* frame_wrenches, double* q_out, double* v_out) {
  solveImplicitVelocity(model, data, ws, q, v, tau, dt, frame_wrenches, false);
  finishImplicitStep(model, data, ws, q, dt, q_out, v_out);
}

void implicitStepDerivatives(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q,
                             const double* v, const double* tau, double dt, const double* frame_wrenches,
                             double* q_out, double* v_out) {
  solveImplicitVelocity(model, data, ws, q, v, tau, dt, frame_wrenches, true);
  finishImplicitStep(model, data, ws, q, dt, q_out, v_out);
  ws.R = ws.lu.inverse();
  denseProduct(ws.R, data.dtau_dq, data.dv_dq);
  data.dv_dq *= -1.0;
  denseProduct(ws.R, data.M, data.dv_dv);
  data.dv_dv /= dt;
  stepTorqueDerivatives(model, data, ws.R, tau, 1.0);
  stepPositionDerivatives(model, data, dt);
  reexpressStepJacobians(model, data, dt);
}

void implicitStepParameterDerivatives(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q,
                                      const double* v, const double* tau, double dt, const double* frame_wrenches,
                                      int groups, double* q_out, double* v_out, double* dq_dp, double* dv_dp) {
  RD_CHECK_ARG(groups >= 0 && groups < 32, "unknown parameter groups " << groups);
  implicitStepDerivatives(model, data, ws, q, v, tau, dt, frame_wrenches, q_out, v_out);
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int nv = model.nv, np = stepParameterCount(model, groups);
  ws.F = ws.rest + dt * ws.w;  // the springs' displacement in F (F itself is no longer needed)
  residualParameterColumns(model, data, q, ws.w.data(), ws.a.data(), ws.w.data(), ws.F.data(), ws.R, -1.0, groups,
                           dv_dp);
  Eigen::Map<RowMat> Dv(dv_dp, nv, np), Dq(dq_dp, nv, np);
  dIntegrateProduct(model, data.v_tmp.data(), 1, dt, Dv, Dq, false, Motion::Step);
  if (hasStepMaps(model)) reexpressVelocityRows(model, dt, data.v_step.data(), Dv);
}

void implicitRollout(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q0, const double* v0,
                     const double* taus, int T, double dt, double* Q, double* V) {
  chainSteps(model, q0, v0, taus, T, Q, V,
             [&](const double* q, const double* v, const double* tau, double* qn, double* vn) {
               implicitStep(model, data, ws, q, v, tau, dt, nullptr, qn, vn);
             });
}

}  // namespace rigidiff
