// Reverse mode of the implicit step (world/implicit_step.hpp): one transposed solve with dF/dw.
#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/rnea_vjp.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/free_joint_motion.hpp"
#include "rigidiff/world/implicit_step.hpp"
#include "rigidiff/world/step.hpp"

namespace rigidiff {

namespace {

// -(dF/dp)^T lambda into the parameter cotangents asked, F's parameter derivatives at (q, w, a):
// the regressor and gravity (rneaVJP), armature a, damping w, stiffness d + dt w.
void subtractImplicitParameterVJP(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q, double dt,
                                  const StepCotangents& out) {
  const int nv = model.nv;
  const VecX& lam = data.lam;
  if (out.theta || out.gravity) {
    Vec3 g_grav;
    rneaVJP(model, data, q, ws.w.data(), ws.a.data(), lam.data(), nullptr, nullptr,
            out.theta ? data.vjp_theta.data() : nullptr, out.gravity ? g_grav.data() : nullptr);
    if (out.theta) Eigen::Map<VecX>(out.theta, data.vjp_theta.size()) -= data.vjp_theta;
    if (out.gravity) Eigen::Map<Vec3>(out.gravity) -= g_grav;
  }
  if (out.armature) Eigen::Map<VecX>(out.armature, nv) -= lam.cwiseProduct(ws.a);
  if (out.damping) Eigen::Map<VecX>(out.damping, nv) -= lam.cwiseProduct(ws.w);
  if (out.stiffness) Eigen::Map<VecX>(out.stiffness, nv) -= lam.cwiseProduct(ws.rest + dt * ws.w);
}

}  // namespace

void implicitStepVJP(const Model& model, Data& data, ImplicitWorkspace& ws, const double* q, const double* v,
                     const double* tau, double dt, const double* gq_next, const double* gv_next, double* q_out,
                     double* v_out, const StepCotangents& out, const double* frame_wrenches) {
  const int nv = model.nv;
  solveImplicitVelocity(model, data, ws, q, v, tau, dt, frame_wrenches, true);
  finishImplicitStep(model, data, ws, q, dt, q_out, v_out);
  // the cotangent of w: through the re-expression of v' and through q' = integrate(q, dt w, Motion::Step)
  data.v_tmp = dt * ws.w;
  dIntegrateTransposeProduct(model, data.v_tmp.data(), 1, gq_next, data.vjp_tmp.data(), Motion::Step);
  reexpressCotangent(model, dt, ws.w.data(), gv_next, data.gvt.data());
  data.gvt += dt * data.vjp_tmp;
  data.lam = ws.lu.transpose().solve(data.gvt);  // dw/dx = -(dF/dw)^-1 dF/dx
  const VecX& lam = data.lam;
  if (out.tau)
    for (int k = 0; k < nv; ++k)
      if (torqueActs(model, k, tau[k])) out.tau[k] += lam[k];
  if (out.v) Eigen::Map<VecX>(out.v, nv).noalias() += data.M * lam / dt;  // dF/dv = -M / dt
  if (out.q) {
    Eigen::Map<VecX> gqo(out.q, nv);
    dIntegrateTransposeProduct(model, data.v_tmp.data(), 0, gq_next, data.vjp_tmp.data(), Motion::Step);
    gqo += data.vjp_tmp;
    gqo.noalias() -= data.dtau_dq.transpose() * lam;
  }
  subtractImplicitParameterVJP(model, data, ws, q, dt, out);
}

void implicitRolloutBackward(const Model& model, Data& data, ImplicitWorkspace& ws, const double* Q,
                             const double* V, const double* taus, int T, double dt, const double* GQ,
                             const double* GV, double* g_taus, const StepCotangents& out) {
  RD_CHECK_ARG(T >= 0, "implicitRolloutBackward: T must be >= 0, got " << T);
  const long nq = model.nq, nv = model.nv;
  StepCotangents sc = out;
  sweepRecordedRollout(model, data, Q, V, T, GQ, GV, g_taus, out,
                       [&](int t, const double* gq_next, const double* gv_next, double* g_q, double* g_v,
                           double* g_tau) {
                         sc.q = g_q;
                         sc.v = g_v;
                         sc.tau = g_tau;
                         implicitStepVJP(model, data, ws, Q + t * nq, V + t * nv, taus + t * nv, dt, gq_next,
                                         gv_next, data.q_next.data(), data.v_next.data(), sc);
                       });
}

}  // namespace rigidiff
