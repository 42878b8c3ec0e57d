#include "rigidiff/world/contact_step_cotangents.hpp"

#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/world/contact_step_derivatives.hpp"
#include "rigidiff/world/contact_step_vjp.hpp"
#include "rigidiff/world/free_joint_motion.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"

namespace rigidiff {

namespace {

// g_state += [A^T] (gq, gv), g_tau += B^T (gq, gv), g_params += P^T (gq, gv) for the dense Jacobians
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
}  // namespace

int contactParameterCount(const Model& m, const CollisionModel& cm, int groups) {
  const int ng = static_cast<int>(cm.geometries.size());
  return stepParameterCount(m, groups & 31) + (groups & kFrictionGroup ? ng : 0) +
         (groups & kRestitutionGroup ? ng : 0);
}

void contactStepJacobiansInto(const Model& m, Data& d, const CollisionModel& cm, ContactStepData& cd,
                              const ContactOptions& o, const double* q, const double* v, const double* tau, double dt,
                              const double* fext, int groups, double* q_out, double* v_out, double* jac,
                              double* pjac) {
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int nv = m.nv, npm = stepParameterCount(m, groups & 31);
  const int np = contactParameterCount(m, cm, groups);
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
      if (groups & (kFrictionGroup | kRestitutionGroup)) {
        MatX qmu, vmu, qe, ve;
        contactCoefficientDerivatives(m, d, cm, cd, o, v, dt, qmu, vmu, qe, ve);
        int col = npm;
        const int ng = static_cast<int>(cm.geometries.size());
        if (groups & kFrictionGroup) {
          Pq.middleCols(col, ng) = qmu;
          Pv.middleCols(col, ng) = vmu;
          col += ng;
        }
        if (groups & kRestitutionGroup) {
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

// a normal row's impulse would lower the loss when dL/dx_r = (M^-1 J_r^T) . dL/dv' < 0, with dL/dv'
// gathering the cotangents of v' and of q' = integrate(q, dt v')
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

void contactStepCotangents(const Model& m, Data& d, const CollisionModel& cm, ContactStepData& cd,
                           const ContactOptions& o, const double* q, const double* v, const double* tau, double dt,
                           const double* fext, int groups, bool explore, const double* gq, const double* gv,
                           double* q_out, double* v_out, std::vector<double>& jac, std::vector<double>& pjac,
                           double* g_q, double* g_v, double* g_tau, double* g_params) {
  const int nv = m.nv, np = contactParameterCount(m, cm, groups);
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
      const int npm = stepParameterCount(m, groups & 31);
      double* g_friction = params && (groups & kFrictionGroup) ? params + npm : nullptr;
      double* g_restitution = params && (groups & kRestitutionGroup) ? params + np - ng : nullptr;  // the last ng
      contactStepVJP(m, d, cm, cd, o, q, v, tau, dt, fext, gq, gv, q_out, v_out, out, g_friction, g_restitution);
      return;
    }
    jac.resize(6L * nv * nv);
    pjac.resize(2L * nv * np);
    contactStepJacobiansInto(m, d, cm, cd, o, q, v, tau, dt, fext, params ? groups : 0, q_out, v_out, jac.data(),
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

}  // namespace rigidiff
