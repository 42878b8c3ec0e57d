#include "rigidiff/world/contact_step_derivatives.hpp"

#include <cmath>

#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/linalg/dense_product.hpp"
#include "rigidiff/world/constraint_derivative_terms.hpp"
#include "rigidiff/world/free_joint_motion.hpp"
#include "rigidiff/world/step_derivatives.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"

namespace rigidiff {

namespace {


// The continuous-time bounce correction: a bounce detected at the start of a step happened at the time
// of impact t_c = -sum d_i vn_i / sum vn_i^2 <= 0 (gaps d_i <= 0 closing at vn_i < 0 along the island's
// bouncing rows; one contact gives t_c = -d / vn). With the velocity jump v' - v of the island's dofs
// happening at that time instead of at the start of the step, q' moves by -t_c (v' - v), whose
// derivative corrects the position Jacobians of the island's dofs:
//   d q' += -(v' - v) d t_c - t_c (d v' - d v).
// One bounce off a wall gives dd'/dd = -e, as a continuous-time bounce does; two balls exchanging
// their velocities get the sensitivities of the exchange. The step itself is unchanged.
void addBounceCorrection(const Model& model, Data& data, ContactStepData& cd, const Eigen::Map<const VecX>& vq,
                         const Eigen::Map<const VecX>& vn) {
  ConstraintDerivativeBuffers& w = cd.deriv;
  const int nv = model.nv, nb = static_cast<int>(w.bounceRows.size());
  std::vector<char> done(nb, 0), dofs(nv);
  VecX dtc_q(nv), dtc_v(nv), jump(nv);
  for (int b0 = 0; b0 < nb; ++b0) {
    if (done[b0]) continue;
    const int island = cd.rowIsland[w.bounceRows[b0]];
    double N = 0.0, D = 0.0;
    VecX dNq = VecX::Zero(nv), dNv = VecX::Zero(nv), dDq = VecX::Zero(nv), dDv = VecX::Zero(nv);
    for (int b = b0; b < nb; ++b) {
      const int r = w.bounceRows[b];
      if (cd.rowIsland[r] != island) continue;
      done[b] = 1;
      const double d = w.bounceGap[b], vn = cd.J.row(r).dot(vq);
      N += d * vn;
      D += vn * vn;
      dNq += vn * w.bounceGapDq.row(b).transpose() + d * w.bounceSpeedDq.row(b).transpose();
      dNv += d * cd.J.row(r).transpose();
      dDq += 2.0 * vn * w.bounceSpeedDq.row(b).transpose();
      dDv += 2.0 * vn * cd.J.row(r).transpose();
    }
    if (!(D > 0.0)) continue;
    const double tc = -N / D;
    dtc_q = -dNq / D + (N / (D * D)) * dDq;
    dtc_v = -dNv / D + (N / (D * D)) * dDv;
    // the island's dofs and their velocity jump
    std::fill(dofs.begin(), dofs.end(), 0);
    for (int r = 0; r < cd.rowCount(); ++r)
      if (cd.rowIsland[r] == island)
        for (int k = 0; k < nv; ++k) dofs[k] = dofs[k] || cd.MinvJt(k, r) != 0.0;
    jump = vn - vq;
    for (int k = 0; k < nv; ++k) {
      if (!dofs[k]) continue;
      w.impactTime[k] = tc;
      data.dq_dq.row(k) -= jump[k] * dtc_q.transpose() + tc * data.dv_dq.row(k);
      data.dq_dv.row(k) -= jump[k] * dtc_v.transpose() + tc * data.dv_dv.row(k);
      data.dq_dv(k, k) += tc;
      data.dq_dtau.row(k) -= tc * data.dv_dtau.row(k);
    }
  }
}

}  // namespace

void contactStepDerivatives(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                            const ContactOptions& options, const double* q, const double* v, const double* tau,
                            double dt, const double* frame_wrenches, double* q_out, double* v_out) {
  contactStep(model, data, cmodel, cd, options, q, v, tau, dt, frame_wrenches, q_out, v_out);
  denseConstraintRows(model, data, cd);
  const int nv = model.nv, m = cd.rowCount();
  const ClassOverrideScope mode(cd);  // an alternative mode: differentiate with its classes
  // vn: the step velocity (before free joints' re-expression), on which the rows act
  Eigen::Map<const VecX> vq(v, nv), vn(data.v_step.data(), nv);
  data.ddq_tmp = (vn - vq) / dt;  // the impulse acts as a fixed generalized force J^T x / dt
  subtractFrameTurnAcceleration(model, v, data.ddq_tmp.data());

  ConstraintDerivativeBuffers& w = cd.deriv;
  if (!prepareClampedRows(model, cd)) {
    w.P.resize(0, 0);  // no constraint acts: parameters see (M + E)^-1
    stepVelocityDerivatives(model, data, q, v, tau, dt, frame_wrenches, m > 0);  // a step with rows computed Minv
    stepPositionDerivatives(model, data, dt);
    reexpressStepJacobians(model, data, dt);
    return;
  }
  stepResidualDerivatives(model, data, q, v, dt, frame_wrenches, true);
  const int nc = w.clamping.size();
  // geometry: d(J^T x)/dq and the clamped rows' d target - (dJ) v'
  w.Fq.setZero(nv, nv);
  ConstraintTermSink sink;
  sink.Fq = &w.Fq;
  sink.Gq = &w.Gq;
  sink.Gv = &w.Gv;
  constraintGeometryTerms(model, data, cmodel, cd, options, vq, vn, dt, sink);

  // the constrained response to generalized forces, P = (M + E)^-1 - K Q^+ J_C (M + E)^-1: with s the
  // derivative at fixed impulses, dv' = s + K Q^+ (G - J_C s) becomes
  //   dv'/dq = P (d(J^T x)/dq - dt dr/dq) + K Q^+ G_q,  dv'/dv = I - dt P dr/dv + K Q^+ (G_v - J_C),
  //   dv'/dtau = dt P,
  // with I + S in place of I in dv'/dv (S: free joints' frame-turn shift, world/free_joint_motion.hpp).
  // Q^+ = U V^T is never formed: the three right-hand sides (stacked in H) meet V^T, then K U. U and V
  // have rank(Q) columns, 12 for two flat feet of 21 clamped rows.
  w.gcols.clear();  // the columns of G_q that are not zero (contact chains, limited joints)
  if (nc > 0) {
    for (int k = 0; k < nv; ++k)
      if (!w.Gq.col(k).isZero(0.0)) w.gcols.push_back(k);
    const int g = static_cast<int>(w.gcols.size());
    clampedPseudoInverseFactors(cd);
    w.H.resize(nc, 2 * nv + g);
    for (int a = 0; a < nc; ++a) w.H.row(a).head(nv) = cd.MinvJt.col(w.clamping.clamped[a]).transpose();  // J_C (M + E)^-1
    for (int j = 0; j < g; ++j) w.H.col(nv + j) = w.Gq.col(w.gcols[j]);
    w.H.rightCols(nv) = w.Gv - w.Jc;
    subtractRowsTimesFrameTurnJacobian(model, v, dt, w.Jc, w.H.rightCols(nv));  // J_C (I + S)
    denseProductTransposedA(w.V, w.H, w.VtH);
    denseProduct(w.K, w.U, w.KU);
    denseProduct(w.KU, w.VtH, w.KZ);
    w.P = data.Minv - w.KZ.leftCols(nv);
  } else {
    w.P = data.Minv;
  }
  // one product of P with the residual's derivatives; d(J^T x)/dq lives on the dofs that move contacting bodies
  w.R.resize(nv, 2 * nv);
  w.R.leftCols(nv) = (-dt) * data.dtau_dq;
  w.R.rightCols(nv) = (-dt) * data.dtau_dv;
  w.activeList.clear();
  for (int k = 0; k < nv; ++k)
    if (w.active[k]) w.activeList.push_back(k);
  if (!w.activeList.empty()) w.R(w.activeList, w.activeList) += w.Fq(w.activeList, w.activeList);
  denseProduct(w.P, w.R, w.PR);
  data.dv_dq = w.PR.leftCols(nv);
  data.dv_dv = w.PR.rightCols(nv);
  data.dv_dv.diagonal().array() += 1.0;
  addFrameTurnJacobian(model, v, dt, data.dv_dv);
  stepTorqueDerivatives(model, data, w.P, tau, dt);
  if (nc > 0) {
    for (std::size_t j = 0; j < w.gcols.size(); ++j) data.dv_dq.col(w.gcols[j]) += w.KZ.col(nv + j);
    data.dv_dv += w.KZ.rightCols(nv);
  }
  stepPositionDerivatives(model, data, dt);
  if (options.bounceCorrection) addBounceCorrection(model, data, cd, vq, vn);
  reexpressStepJacobians(model, data, dt);
}

namespace {
// the bounce correction of parameter columns: q' moves by -t_c dv' (t_c does not depend on them)
template <typename V, typename Q>
void addImpactTimeShift(const ConstraintDerivativeBuffers& w, const V& Dv, Q& Dq) {
  if (w.impactTime.size() != Dq.rows()) return;
  for (int k = 0; k < Dq.rows(); ++k)
    if (w.impactTime[k] != 0.0) Dq.row(k) -= w.impactTime[k] * Dv.row(k);
}
}  // namespace

void contactStepParameterDerivatives(const Model& model, Data& data, ContactStepData& cd, const double* q,
                                     const double* v, double dt, int groups, double* dq_dp, double* dv_dp) {
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int nv = model.nv, np = stepParameterCount(model, groups);
  ConstraintDerivativeBuffers& w = cd.deriv;
  // the parameters move no target and no row: their derivatives are those at fixed impulses with the
  // constrained response P in place of (M + E)^-1
  const bool constrained = cd.rowCount() > 0 && w.P.rows() == nv;
  if (constrained) data.Minv.swap(w.P);
  stepParameterDerivatives(model, data, q, v, dt, groups, dq_dp, dv_dp, false);
  if (constrained) data.Minv.swap(w.P);
  Eigen::Map<RowMat> Dv(dv_dp, nv, np), Dq(dq_dp, nv, np);
  addImpactTimeShift(w, Dv, Dq);
  if (hasStepMaps(model)) reexpressVelocityRows(model, dt, data.v_step.data(), Dv);
  addGyroscopicRateParameterColumns(model, data.v_step.data(), dt, groups, Dv);
}

void contactCoefficientDerivatives(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                                   const ContactOptions& options, const double* v, double dt, MatX& dq_dmu,
                                   MatX& dv_dmu, MatX& dq_de, MatX& dv_de) {
  const int nv = model.nv, ng = static_cast<int>(cmodel.geometries.size()), m = cd.rowCount();
  const ConstraintDerivativeBuffers& w = cd.deriv;
  const int nc = w.clamping.size();
  dv_dmu.setZero(nv, ng);
  dv_de.setZero(nv, ng);
  Eigen::Map<const VecX> vq(v, nv);
  // velocity change at fixed clamped impulses (friction), and target changes of the clamped rows (restitution)
  MatX Ge = MatX::Zero(nc, ng);
  const auto& contacts = cd.cdata.contacts.contacts;
  for (int r = 0; r < m; ++r) {
    const ConstraintRow& row = cd.rows[r];
    if (row.kind != RowKind::ContactNormal && row.kind != RowKind::ContactFriction) continue;
    const Contact& c = contacts[row.index];
    const Geometry& ga = cmodel.geometries[c.geom_a];
    const Geometry& gb = cmodel.geometries[c.geom_b];
    const bool bound = cd.classes[r] == contact::LcpClass::UpperBound || cd.classes[r] == contact::LcpClass::LowerBound;
    if (row.kind == RowKind::ContactFriction && bound && cd.friction[row.index] > 0.0) {
      // x_r = +-(mu / scale) x_n: d x_r / d mu = x_r / mu
      const double dx = cd.x[r] / cd.friction[row.index];
      dv_dmu.col(c.geom_a) += dx * combineDerivative(options.frictionCombine, ga.friction, gb.friction) * cd.MinvJt.col(r);
      dv_dmu.col(c.geom_b) += dx * combineDerivative(options.frictionCombine, gb.friction, ga.friction) * cd.MinvJt.col(r);
    }
    if (w.clamping.slot[r] >= 0 && cd.targetKind[r] == TargetKind::Restitution) {
      const double vn = cd.J.row(r).dot(vq);  // target = -e vn
      Ge(w.clamping.slot[r], c.geom_a) -= vn * combineDerivative(options.restitutionCombine, ga.restitution, gb.restitution);
      Ge(w.clamping.slot[r], c.geom_b) -= vn * combineDerivative(options.restitutionCombine, gb.restitution, ga.restitution);
    }
  }
  if (nc > 0) {  // K Q^+ = (K U) V^T, both factors left by contactStepDerivatives
    const MatX H = -(w.Jc * dv_dmu);
    dv_dmu.noalias() += w.KU * (w.V.transpose() * H);
    dv_de.noalias() = w.KU * (w.V.transpose() * Ge);
  }
  dq_dmu.resize(nv, ng);
  dq_de.resize(nv, ng);
  dIntegrateProduct(model, data.v_tmp.data(), 1, dt, dv_dmu, dq_dmu, false, Motion::Step);
  dIntegrateProduct(model, data.v_tmp.data(), 1, dt, dv_de, dq_de, false, Motion::Step);
  addImpactTimeShift(w, dv_dmu, dq_dmu);
  addImpactTimeShift(w, dv_de, dq_de);
  if (hasStepMaps(model)) {
    reexpressVelocityRows(model, dt, data.v_step.data(), dv_dmu);
    reexpressVelocityRows(model, dt, data.v_step.data(), dv_de);
  }
}

}  // namespace rigidiff
