// Bindings of the constrained step's Jacobians and reverse mode (declared in rigidiff/bind/api.hpp).
// The reverse mode pulls the cotangent through the clamped rows' factors (world/contact_step_vjp.hpp);
// it multiplies the step's dense Jacobians only for joints that the reverse-mode RNEA does not take.
#include <cmath>
#include <string>
#include <vector>

#include "rigidiff/bind/api.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/world/contact_step_derivatives.hpp"
#include "rigidiff/world/contact_step_vjp.hpp"
#include "rigidiff/world/free_joint_motion.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"

namespace rigidiff {
namespace bind {

namespace {
constexpr int kFriction = 32, kRestitution = 64;  // contact coefficient groups (after the model's)

void checkGroups(int groups) { RD_CHECK_ARG(groups >= 0 && groups < 128, "unknown parameter groups " << groups); }

void checkInputs(const Model& m, const double* q, const double* v, const double* tau, const double* fext,
                 int groups) {
  checkGroups(groups);
  checkState(m, q, v);
  checkFinite(tau, m.nv, "tau");
  if (fext) checkFinite(fext, 6 * static_cast<long>(m.frames.size()), "f_ext");
}

// the step's Jacobians (6 column-major nv x nv blocks, as Data::setStepJacobianStorage) and, if pjac,
// the parameter Jacobians (dq_dp then dv_dp, row-major nv x np): the model's groups, then the
// friction and the restitution of every geometry
void jacobiansInto(const Model& m, Data& d, const CollisionModel& cm, ContactStepData& cd, const ContactOptions& o,
                   const double* q, const double* v, const double* tau, double dt, const double* fext, int groups,
                   double* q_out, double* v_out, double* jac, double* pjac) {
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int nv = m.nv, npm = rigidiff::stepParameterCount(m, groups & 31);
  const int np = constrainedParameterCount(m, cm, groups);
  d.setStepJacobianStorage(jac);
  try {
    contactStepDerivatives(m, d, cm, cd, o, q, v, tau, dt, fext, q_out, v_out);
    if (pjac && np > 0) {
      Eigen::Map<RowMat> Pq(pjac, nv, np), Pv(pjac + static_cast<long>(nv) * np, nv, np);
      if (npm > 0) {
        RowMat mq(nv, npm), mv(nv, npm);
        contactStepParameterDerivatives(m, d, cd, q, v, dt, groups & 31, mq.data(), mv.data());
        Pq.leftCols(npm) = mq;
        Pv.leftCols(npm) = mv;
      }
      if (groups & (kFriction | kRestitution)) {
        MatX qmu, vmu, qe, ve;
        contactCoefficientDerivatives(m, d, cm, cd, o, v, dt, qmu, vmu, qe, ve);
        int col = npm;
        const int ng = static_cast<int>(cm.geometries.size());
        if (groups & kFriction) {
          Pq.middleCols(col, ng) = qmu;
          Pv.middleCols(col, ng) = vmu;
          col += ng;
        }
        if (groups & kRestitution) {
          Pq.middleCols(col, ng) = qe;
          Pv.middleCols(col, ng) = ve;
        }
      }
    }
  } catch (...) {
    d.setStepJacobianStorage(nullptr);
    throw;
  }
  d.setStepJacobianStorage(nullptr);
}

// g_state += [A^T] (gq, gv), g_tau += B^T (gq, gv), g_params += P^T (gq, gv)
void transposeProducts(const Model& m, const double* jac, const double* pjac, int np, const double* gq,
                       const double* gv, double* g_q, double* g_v, double* g_tau, double* g_params) {
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int nv = m.nv;
  const long b = static_cast<long>(nv) * nv;
  Eigen::Map<const VecX> q(gq, nv), vv(gv, nv);
  auto block = [&](int i) { return Eigen::Map<const MatX>(jac + i * b, nv, nv); };
  // blocks: dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv, dv_dtau
  Eigen::Map<VecX>(g_q, nv).noalias() += block(0).transpose() * q + block(3).transpose() * vv;
  Eigen::Map<VecX>(g_v, nv).noalias() += block(1).transpose() * q + block(4).transpose() * vv;
  Eigen::Map<VecX>(g_tau, nv).noalias() += block(2).transpose() * q + block(5).transpose() * vv;
  if (np > 0) {
    Eigen::Map<const RowMat> Pq(pjac, nv, np), Pv(pjac + static_cast<long>(nv) * np, nv, np);
    Eigen::Map<VecX>(g_params, np).noalias() += Pq.transpose() * q + Pv.transpose() * vv;
  }
}
// The loss-driven contact mode of DiffDART's complementarity-aware backward (seed section 4.4): a normal
// row whose impulse would lower the loss (dL/dx_r = (M^-1 J_r^T) . dL/dv' < 0, with dL/dv' gathering the
// cotangents of v' and of q' = integrate(q, dt v')) separates, any other clamps; friction rows separate;
// joint rows keep their classes. Returns false if this mode is the solved one.
bool lossDrivenClasses(const Model& m, Data& d, ContactStepData& cd, double dt, const double* gq, const double* gv) {
  const int nv = m.nv, rows = cd.rowCount();
  VecX gvn(nv), gvs(nv);
  d.v_tmp = dt * d.v_step;  // the step's dt v_step (world/free_joint_motion.hpp)
  dIntegrateTransposeProduct(m, d.v_tmp.data(), 1, gq, gvn.data(), Motion::Step);
  reexpressCotangent(m, dt, d.v_step.data(), gv, gvs.data());
  gvn = dt * gvn + gvs;
  cd.classOverride = cd.classes;
  for (int r = 0; r < rows; ++r) {
    const RowKind kind = cd.rows[r].kind;
    if (kind == RowKind::ContactFriction) cd.classOverride[r] = contact::LcpClass::Separating;
    if (kind == RowKind::ContactNormal)
      cd.classOverride[r] =
          rowDot(m, cd, cd.MinvJtSeg, r, gvn) < 0.0 ? contact::LcpClass::Separating : contact::LcpClass::Clamping;
  }
  if (cd.classOverride == cd.classes) {
    cd.classOverride.clear();
    return false;
  }
  return true;
}

// J^T g of a step into (g_q, g_v, g_tau, g_params); with explore, the contact mode whose state and
// torque gradients are larger (|g_v|^2 + |g_tau|^2) is kept, parameters always from the solved mode
void stepCotangents(const Model& m, Data& d, const CollisionModel& cm, ContactStepData& cd, const ContactOptions& o,
                    const double* q, const double* v, const double* tau, double dt, const double* fext, int groups,
                    bool explore, const double* gq, const double* gv, double* q_out, double* v_out,
                    std::vector<double>& jac, std::vector<double>& pjac, double* g_q, double* g_v, double* g_tau,
                    double* g_params) {
  const int nv = m.nv, np = constrainedParameterCount(m, cm, groups);
  // adds the cotangents of the step in the mode of cd.classOverride (or the solved one) to (cq, cv, ct)
  // and, unless params is null, those of the parameters: through the clamped rows' factors, or for
  // joints the reverse-mode RNEA does not take, by the dense Jacobians
  auto pull = [&](double* cq, double* cv, double* ct, double* params) {
    if (contactStepVjpSupported(m)) {
      StepCotangents out = params ? parameterCotangentSlices(m, groups & 31, params) : StepCotangents();
      out.q = cq;
      out.v = cv;
      out.tau = ct;
      // params: the model's groups, then the friction and the restitution of every geometry
      const int ng = static_cast<int>(cm.geometries.size());
      const int npm = rigidiff::stepParameterCount(m, groups & 31);
      double* g_friction = params && (groups & kFriction) ? params + npm : nullptr;
      double* g_restitution = params && (groups & kRestitution) ? params + np - ng : nullptr;  // the last ng
      contactStepVJP(m, d, cm, cd, o, q, v, tau, dt, fext, gq, gv, q_out, v_out, out, g_friction, g_restitution);
      return;
    }
    jac.resize(6L * nv * nv);
    pjac.resize(2L * nv * np);
    jacobiansInto(m, d, cm, cd, o, q, v, tau, dt, fext, params ? groups : 0, q_out, v_out, jac.data(),
                  params ? pjac.data() : nullptr);
    transposeProducts(m, jac.data(), params ? pjac.data() : nullptr, params ? np : 0, gq, gv, cq, cv, ct, params);
  };
  if (!explore) {
    pull(g_q, g_v, g_tau, g_params);
    return;
  }
  VecX q1 = VecX::Zero(nv), v1 = VecX::Zero(nv), t1 = VecX::Zero(nv);
  pull(q1.data(), v1.data(), t1.data(), g_params);
  if (lossDrivenClasses(m, d, cd, dt, gq, gv)) {
    VecX q2 = VecX::Zero(nv), v2 = VecX::Zero(nv), t2 = VecX::Zero(nv);
    try {
      pull(q2.data(), v2.data(), t2.data(), nullptr);
    } catch (...) {
      cd.classOverride.clear();
      throw;
    }
    cd.classOverride.clear();
    if (v2.squaredNorm() + t2.squaredNorm() > v1.squaredNorm() + t1.squaredNorm()) {
      q1.swap(q2);
      v1.swap(v2);
      t1.swap(t2);
    }
  }
  Eigen::Map<VecX>(g_q, nv) += q1;
  Eigen::Map<VecX>(g_v, nv) += v1;
  Eigen::Map<VecX>(g_tau, nv) += t1;
}
// the recomputed step t must reproduce the recorded state t + 1 (the LCP solve's tolerance)
void checkReproduced(const Model& m, int t, const double* qn, const double* vn, const double* Qr, const double* Vr) {
  const double tol = 1e-6;
  for (int k = 0; k < m.nv; ++k)
    if (!(std::abs(vn[k] - Vr[k]) <= tol * (1.0 + std::abs(Vr[k]))))
      RD_THROW(std::runtime_error, "rollout backward: the recorded V[" << t + 1 << "] does not follow from step " << t
                                                                       << " (was the model changed?)");
  for (int k = 0; k < m.nq; ++k)
    if (!(std::abs(qn[k] - Qr[k]) <= tol * (1.0 + std::abs(Qr[k]))))
      RD_THROW(std::runtime_error, "rollout backward: the recorded Q[" << t + 1 << "] does not follow from step " << t
                                                                       << " (was the model changed?)");
}
}  // namespace

int constrainedParameterCount(const Model& m, const CollisionModel& cm, int groups) {
  checkGroups(groups);
  const int ng = static_cast<int>(cm.geometries.size());
  return rigidiff::stepParameterCount(m, groups & 31) + (groups & kFriction ? ng : 0) + (groups & kRestitution ? ng : 0);
}

void constrainedStepJacobians(const Model& m, Data& d, const CollisionModel& cm, ContactStepData& cd,
                              const ContactOptions& o, const double* q, const double* v, const double* tau, double dt,
                              const double* fext, int groups, double* q_out, double* v_out, double* jac,
                              double* pjac) {
  checkInputs(m, q, v, tau, fext, groups);
  jacobiansInto(m, d, cm, cd, o, q, v, tau, dt, fext, groups, q_out, v_out, jac, pjac);
  checkResult(jac, 6L * m.nv * m.nv, "step_jacobians");
  if (pjac) checkResult(pjac, 2L * m.nv * constrainedParameterCount(m, cm, groups), "step_jacobians");
}

void constrainedStepVJP(const Model& m, Data& d, const CollisionModel& cm, ContactStepData& cd,
                        const ContactOptions& o, const double* q, const double* v, const double* tau, double dt,
                        const double* fext, const double* gq, const double* gv, int groups, bool explore,
                        double* q_out, double* v_out, double* g_state, double* g_tau, double* g_params) {
  checkInputs(m, q, v, tau, fext, groups);
  checkFinite(gq, m.nv, "dL_dq_next");
  checkFinite(gv, m.nv, "dL_dv_next");
  const int np = constrainedParameterCount(m, cm, groups);
  std::vector<double> jac, pjac;  // sized by stepCotangents if it needs the dense Jacobians
  std::fill(g_state, g_state + 2 * m.nv, 0.0);
  std::fill(g_tau, g_tau + m.nv, 0.0);
  std::fill(g_params, g_params + np, 0.0);
  stepCotangents(m, d, cm, cd, o, q, v, tau, dt, fext, groups, explore, gq, gv, q_out, v_out, jac, pjac, g_state,
                 g_state + m.nv, g_tau, g_params);
  checkResult(g_state, 2 * m.nv, "step_vjp");
  checkResult(g_tau, m.nv, "step_vjp");
  checkResult(g_params, np, "step_vjp");
}

void constrainedRolloutBackward(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* Q,
                                const double* V, const double* taus, int T, double dt, const double* GQ,
                                const double* GV, int groups, bool explore, double* g_taus, double* g_state,
                                double* g_params, const int* rec_rows, const std::int64_t* rec_keys,
                                const int* rec_classes) {
  checkGroups(groups);
  RD_CHECK_ARG(T >= 0, "the rollout has a negative number of steps");
  const int nq = m.nq, nv = m.nv, np = constrainedParameterCount(m, cm, groups);
  for (int t = 0; t <= T; ++t) {
    const std::string row = "[" + std::to_string(t) + "]";
    checkState(m, Q + static_cast<long>(t) * nq, V + static_cast<long>(t) * nv, ("Q" + row).c_str(),
               ("V" + row).c_str());
  }
  checkFinite(taus, static_cast<long>(T) * nv, "taus");
  checkFinite(GQ, static_cast<long>(T + 1) * nv, "dL_dQ");
  checkFinite(GV, static_cast<long>(T + 1) * nv, "dL_dV");
  Data d(m);
  ContactStepData cd(cm);
  std::vector<double> jac, pjac, qn(nq), vn(nv);  // jac, pjac: sized by stepCotangents if needed
  // the rollout's own warm-start chain, each step's rows and classes, so that the reverse pass re-solves
  // every step in exactly its recorded contact mode (a problem with several valid modes resolves to the
  // one its predecessor chose): recorded by the rollout, or found by rerunning it
  std::vector<std::vector<long>> keys(T);
  std::vector<std::vector<contact::LcpClass>> classes(T);
  if (rec_keys && rec_classes && rec_rows) {
    long offset = 0;
    for (int t = 0; t < T; ++t) {
      RD_CHECK_ARG(rec_rows[t] >= 0, "rollout backward: negative row count of step " << t);
      keys[t].assign(rec_keys + offset, rec_keys + offset + rec_rows[t]);
      classes[t].resize(rec_rows[t]);
      for (int r = 0; r < rec_rows[t]; ++r) {
        const int c = rec_classes[offset + r];
        RD_CHECK_ARG(c >= 0 && c <= 3, "rollout backward: row class " << c << " outside 0..3");
        classes[t][r] = static_cast<contact::LcpClass>(c);
      }
      offset += rec_rows[t];
    }
  } else {
    for (int t = 0; t < T; ++t) {
      const long o_v = static_cast<long>(t) * nv, o_q = static_cast<long>(t) * nq;
      contactStep(m, d, cm, cd, o, Q + o_q, V + o_v, taus + o_v, dt, nullptr, qn.data(), vn.data());
      keys[t] = cd.warmKeys;
      classes[t] = cd.classes;
      checkReproduced(m, t, qn.data(), vn.data(), Q + o_q + nq, V + o_v + nv);
    }
  }
  // cq, cv: cotangent of state t + 1; pq, pv: that of state t
  VecX cq = Eigen::Map<const VecX>(GQ + static_cast<long>(T) * nv, nv);
  VecX cv = Eigen::Map<const VecX>(GV + static_cast<long>(T) * nv, nv);
  VecX pq(nv), pv(nv);
  std::fill(g_params, g_params + np, 0.0);
  for (int t = T - 1; t >= 0; --t) {
    const long o_v = static_cast<long>(t) * nv, o_q = static_cast<long>(t) * nq;
    pq = Eigen::Map<const VecX>(GQ + o_v, nv);
    pv = Eigen::Map<const VecX>(GV + o_v, nv);
    std::fill(g_taus + o_v, g_taus + o_v + nv, 0.0);
    // the step swaps warmKeys into its previous-step keys. Recorded modes: the warm start step t had in
    // the rollout (step t - 1's rows; none at t = 0), which reproduces it exactly, checked below. Rerun:
    // step t's own classes, which re-solve it in its mode (to the LCP's tolerance)
    const bool recorded = rec_keys != nullptr;
    if (!recorded) {
      cd.warmKeys = keys[t];
      cd.warmClasses = classes[t];
    } else if (t > 0) {
      cd.warmKeys = keys[t - 1];
      cd.warmClasses = classes[t - 1];
    } else {
      cd.warmKeys.clear();
      cd.warmClasses.clear();
    }
    stepCotangents(m, d, cm, cd, o, Q + o_q, V + o_v, taus + o_v, dt, nullptr, groups, explore, cq.data(), cv.data(),
                   qn.data(), vn.data(), jac, pjac, pq.data(), pv.data(), g_taus + o_v, g_params);
    if (recorded) checkReproduced(m, t, qn.data(), vn.data(), Q + o_q + nq, V + o_v + nv);
    cq.swap(pq);
    cv.swap(pv);
  }
  Eigen::Map<VecX>(g_state, nv) = cq;
  Eigen::Map<VecX>(g_state + nv, nv) = cv;
  checkResult(g_state, 2 * nv, "rollout backward");
  checkResult(g_taus, static_cast<long>(T) * nv, "rollout backward");
  checkResult(g_params, np, "rollout backward");
}

}  // namespace bind
}  // namespace rigidiff
