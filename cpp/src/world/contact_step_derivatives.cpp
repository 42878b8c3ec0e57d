#include "rigidiff/world/contact_step_derivatives.hpp"

#include <cmath>

#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/collision/feature_derivatives.hpp"
#include "rigidiff/contact/pseudo_inverse.hpp"
#include "rigidiff/linalg/dense_product.hpp"
#include "rigidiff/world/free_joint_motion.hpp"
#include "rigidiff/world/friction_basis.hpp"
#include "rigidiff/world/step_derivatives.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"

namespace rigidiff {

namespace {

using contact::LcpClass;

// The motion terms of a contact's rows: d nu_b / dq_k = S_k x (nu_b - nu_parent) for the dofs k
// moving body b, summed with sign +1 for A and -1 for B into X (6 x nv, set on the columns `cols`),
// so that d(w . (nu_A - nu_B))/dq_k at fixed w is w . X_k for every row of the contact.
void contactMotionTerms(const Model& model, const Data& data, int ja, int jb, const std::vector<int>& cols,
                        const Mat6X& nu, Mat6X& X) {
  X.resize(6, model.nv);
  for (int col : cols) X.col(col).setZero();
  const int ends[2] = {ja, jb};
  for (int side = 0; side < 2; ++side) {
    const int b = ends[side];
    const double sign = side == 0 ? 1.0 : -1.0;
    for (int j = b; j > 0; j = model.parents[j]) {
      const JointModel& jm = model.joints[j];
      const Vec6 delta = nu.col(b) - nu.col(model.parents[j]);
      for (int c = jm.idx_v; c < jm.idx_v + jm.nv; ++c) X.col(c) += sign * crossMotion(data.J.col(c), delta);
    }
  }
}

// d/dq of a row J_r u = w . (nu_A(u) - nu_B(u)) at fixed u, with w = (d, p x d) and its derivative dw
// (6 x nv, read on the columns `cols` only): the wrench moves (dw) and so do the bodies' velocities
// (the contact's motion terms X)
void rowVelocityDerivative(int ja, int jb, const Vec6& w, const Mat6X& dw, const std::vector<int>& cols,
                           const Mat6X& nu, const Mat6X& X, Ref<VecX> out) {
  const Vec6 rel = nu.col(ja) - nu.col(jb);
  out.setZero();
  for (int col : cols) out[col] = dw.col(col).dot(rel) + w.dot(X.col(col));
}

// d(S_b^T W)/dq for a wrench W (world origin) on body b whose derivative is dW (6 x nv, read on the
// columns `cols`), added into F with `sign`: the chain's columns turn (d S_m / dq_k = S_k x S_m for m at or
// below k) and W moves
void addImpulseDerivative(const Model& model, const Data& data, int b, const Vec6& W, const Mat6X& dW,
                          const std::vector<int>& cols, double sign, MatX& F) {
  for (int jk = b; jk > 0; jk = model.parents[jk]) {
    const JointModel& ck = model.joints[jk];
    for (int k = ck.idx_v; k < ck.idx_v + ck.nv; ++k) {
      const Vec6 y = crossForce(data.J.col(k), W);
      for (int jm = b; jm > 0; jm = model.parents[jm]) {
        if (!model.supports(jk, jm)) continue;
        const JointModel& cm = model.joints[jm];
        for (int m = cm.idx_v; m < cm.idx_v + cm.nv; ++m) F(m, k) -= sign * data.J.col(m).dot(y);
      }
    }
  }
  for (int jm = b; jm > 0; jm = model.parents[jm]) {
    const JointModel& cm = model.joints[jm];
    for (int m = cm.idx_v; m < cm.idx_v + cm.nv; ++m)
      for (int col : cols) F(m, col) += sign * data.J.col(m).dot(dW.col(col));
  }
}

// adds the twist Jacobian of body b (world convention) times the k x 6 block D into out (k x nv)
template <typename Block, typename Out>
void addChainProduct(const Model& model, const Data& data, int b, const Block& D, Out&& out) {
  for (int j = b; j > 0; j = model.parents[j]) {
    const JointModel& jm = model.joints[j];
    for (int c = jm.idx_v; c < jm.idx_v + jm.nv; ++c) out.col(c).noalias() += D * data.J.col(c);
  }
}

// point, normal, distance and friction-direction derivatives of contact k with respect to q
void contactGeometryDerivatives(const Model& model, const Data& data, const CollisionModel& cmodel,
                                ContactStepData& cd, const ContactOptions& options, int k) {
  ConstraintDerivativeBuffers& w = cd.deriv;
  const int nv = model.nv;
  const Contact& c = cd.cdata.contacts.contacts[k];
  const int ja = cmodel.geometries[c.geom_a].joint, jb = cmodel.geometries[c.geom_b].joint;
  const SE3& Mb = cd.cdata.placements[c.geom_b];
  FeatureGeometry value;
  FeatureGeometryDerivatives der;
  evaluateFeatureDerivatives(c.feature_a, cd.cdata.placements[c.geom_a], c.feature_b, Mb, c.normal, value, der);
  // the dofs that move A or B: every derivative of this contact vanishes on the others, which are never
  // read (only the columns `cols` are set, so the buffers are not cleared)
  const int nt = options.frictionDirections;
  w.onB.assign(nv, 0);
  for (int j = jb; j > 0; j = model.parents[j])
    for (int col = model.joints[j].idx_v; col < model.joints[j].idx_v + model.joints[j].nv; ++col) w.onB[col] = 1;
  w.cols.clear();
  for (int j = ja; j > 0; j = model.parents[j])
    for (int col = model.joints[j].idx_v; col < model.joints[j].idx_v + model.joints[j].nv; ++col)
      if (!w.onB[col]) w.cols.push_back(col);
  for (int col = 0; col < nv; ++col)
    if (w.onB[col]) w.cols.push_back(col);
  w.dpoint.resize(3, nv);
  w.dnormal.resize(3, nv);
  w.dtangent.resize(3, nt * nv);
  w.dw.resize(6, nv);
  w.dW.resize(6, nv);
  for (int col : w.cols) {
    w.active[col] = 1;
    w.dpoint.col(col).setZero();
    w.dnormal.col(col).setZero();
    for (int t = 0; t < nt; ++t) w.dtangent.col(t * nv + col).setZero();
  }
  w.ddistance.setZero(nv);  // read whole (rows of G_q)
  addChainProduct(model, data, ja, der.dpoint.leftCols<6>(), w.dpoint);
  addChainProduct(model, data, jb, der.dpoint.rightCols<6>(), w.dpoint);
  addChainProduct(model, data, ja, der.dnormal.leftCols<6>(), w.dnormal);
  addChainProduct(model, data, jb, der.dnormal.rightCols<6>(), w.dnormal);
  addChainProduct(model, data, ja, der.ddistance.leftCols<6>(), w.ddistance.transpose());
  addChainProduct(model, data, jb, der.ddistance.rightCols<6>(), w.ddistance.transpose());
  // friction directions turn with the normal and with B
  Vec3 dt[4];
  for (int col : w.cols) {
    const Vec3 wb = w.onB[col] ? Vec3(data.J.col(col).tail<3>()) : Vec3::Zero();
    const Vec3 dn = w.dnormal.col(col);
    if (!w.onB[col] && dn.isZero(0.0)) continue;
    frictionBasisDerivative(c.normal, Mb.R, nt, dn, wb, dt);
    for (int t = 0; t < nt; ++t) w.dtangent.col(t * nv + col) = dt[t];
  }
}

// rows of contact k start at r0 and end before r1; adds their terms to Fq, Gq, Gv
void contactRowDerivatives(const Model& model, const Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                           const ContactOptions& options, double dt, int k, int r0, int r1) {
  ConstraintDerivativeBuffers& w = cd.deriv;
  const int nv = model.nv, nt = options.frictionDirections;
  const Contact& c = cd.cdata.contacts.contacts[k];
  const int ja = cmodel.geometries[c.geom_a].joint, jb = cmodel.geometries[c.geom_b].joint;
  const Vec3& p = c.point;
  Vec6 W = Vec6::Zero();
  bool pushes = false;  // some row of the contact carries an impulse
  bool motion_next = false, motion_prev = false;  // the motion terms under v' and v, formed when first needed
  for (int col : w.cols) w.dW.col(col).setZero();  // dw's columns `cols` are set per row
  for (int r = r0; r < r1; ++r) {
    const ConstraintRow& row = cd.rows[r];
    const bool normal = row.kind == RowKind::ContactNormal;
    const Vec3 d = normal ? c.normal : cd.tangents[nt * k + row.direction];
    const auto dd = normal ? w.dnormal.leftCols(nv) : w.dtangent.middleCols(row.direction * nv, nv);
    Vec6 wr;
    wr << d, p.cross(d);
    for (int col : w.cols) {
      w.dw.col(col).head<3>() = dd.col(col);
      w.dw.col(col).tail<3>() = w.dpoint.col(col).cross(d) + p.cross(dd.col(col));
    }
    const double x = cd.x[r];
    if (x != 0.0) {
      pushes = true;
      W += x * wr;
      for (int col : w.cols) w.dW.col(col) += x * w.dw.col(col);
    }
    const int a = w.slot[r];
    if (a < 0) continue;
    // clamped: d(J_r v') = d target_r
    if (!motion_next) contactMotionTerms(model, data, ja, jb, w.cols, w.nuNext, w.motionNext);
    motion_next = true;
    rowVelocityDerivative(ja, jb, wr, w.dw, w.cols, w.nuNext, w.motionNext, w.rowq);
    for (int col : w.cols) w.Gq(a, col) = -w.rowq[col];  // row a of Gq is zero elsewhere, as rowq and ddistance are
    switch (cd.targetKind[r]) {
      case TargetKind::Gap:
        for (int col : w.cols) w.Gq(a, col) -= w.ddistance[col] / dt;
        break;
      case TargetKind::Correction: w.Gq.row(a) -= (options.erp / dt) * w.ddistance.transpose(); break;
      case TargetKind::Restitution: {
        const double e = cd.restitution[k];
        if (!motion_prev) contactMotionTerms(model, data, ja, jb, w.cols, w.nuPrev, w.motionPrev);
        motion_prev = true;
        rowVelocityDerivative(ja, jb, wr, w.dw, w.cols, w.nuPrev, w.motionPrev, w.rowq);
        w.Gq.row(a) -= e * w.rowq.transpose();
        w.Gv.row(a) = -e * cd.J.row(r);
        const int b = static_cast<int>(w.bounceRows.size());
        w.bounceRows.push_back(r);
        w.bounceGap.push_back(c.distance);
        w.bounceGapDq.row(b) = w.ddistance.transpose();
        w.bounceSpeedDq.row(b) = w.rowq.transpose();
        break;
      }
      default: break;
    }
  }
  if (pushes) {
    addImpulseDerivative(model, data, ja, W, w.dW, w.cols, 1.0, w.Fq);
    addImpulseDerivative(model, data, jb, W, w.dW, w.cols, -1.0, w.Fq);
  }
}

// joint-limit targets: -gap/dt (or the correction) with gap = q - lower or upper - q
void jointRowDerivatives(const ContactStepData& cd, const ContactOptions& options, double dt, int r,
                         ConstraintDerivativeBuffers& w) {
  const int a = w.slot[r];
  const ConstraintRow& row = cd.rows[r];
  if (a < 0 || row.kind == RowKind::JointFriction) return;
  const double sign = row.kind == RowKind::LowerLimit ? 1.0 : -1.0;  // d gap / dq
  if (cd.targetKind[r] == TargetKind::Gap) w.Gq(a, row.index) = -sign / dt;
  if (cd.targetKind[r] == TargetKind::Correction) w.Gq(a, row.index) = -sign * options.erp / dt;
}

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

// The clamping system Q = J_C K couples only rows of one island, and each island's LCP solve left the
// decomposition of its block (contact/lcp_classification.hpp) when the classes are the solved ones;
// with other classes (an explored contact mode) Q gets a decomposition of its own.
void prepareClampedDecomposition(ContactStepData& cd) {
  ConstraintDerivativeBuffers& w = cd.deriv;
  const int nc = static_cast<int>(w.clamped.size());
  w.islandCods = true;
  int covered = 0, slot = 0, coupled = 0, coupledHere = 0;
  for (int r = 0; r < cd.rowCount(); ++r) {
    const bool bound = cd.classes[r] == contact::LcpClass::UpperBound || cd.classes[r] == contact::LcpClass::LowerBound;
    if (bound && cd.findex[r] >= 0 && w.slot[cd.findex[r]] >= 0) ++coupled;
  }
  for (std::size_t begin = 0; begin < cd.islandRows.size() && w.islandCods; ++slot) {
    const std::size_t end = cd.islandEnd(begin);
    const contact::BoxedLcpWorkspace& ws = cd.lcps[slot];
    w.islandCods = ws.systemValid;
    for (std::size_t j = 0; j < ws.clamped.size() && w.islandCods; ++j)
      w.islandCods = w.slot[cd.islandRows[begin + ws.clamped[j]]] >= 0;
    for (std::size_t u = 0; u < ws.bounded.size() && w.islandCods; ++u) {
      if (ws.coupling[u] < 0) continue;  // a fixed bound adds nothing to Q
      const contact::LcpClass c = cd.classes[cd.islandRows[begin + ws.bounded[u]]];
      w.islandCods = c == contact::LcpClass::UpperBound || c == contact::LcpClass::LowerBound;
      ++coupledHere;
    }
    covered += static_cast<int>(ws.clamped.size());
    begin = end;
  }
  w.islandCods = w.islandCods && covered == nc && coupledHere == coupled;
  if (!w.islandCods) {
    w.Qc.noalias() = w.Jc * w.K;
    w.cod.compute(w.Qc);
  }
}

// Q^+ = U V^T with thin factors (rows by slot, one block of columns per island; contact/pseudo_inverse.hpp)
void clampedPseudoInverseFactors(ContactStepData& cd, MatX& U, MatX& V) {
  ConstraintDerivativeBuffers& w = cd.deriv;
  const int nc = static_cast<int>(w.clamped.size());
  if (!w.islandCods) {
    contact::pseudoInverseFactors(w.cod, U, V);
    return;
  }
  int rank = 0, slot = 0;
  for (std::size_t begin = 0; begin < cd.islandRows.size(); ++slot) {
    if (!cd.lcps[slot].clamped.empty()) rank += static_cast<int>(cd.lcps[slot].clampingCod().rank());
    begin = cd.islandEnd(begin);
  }
  U.setZero(nc, rank);
  V.setZero(nc, rank);
  int offset = 0;
  slot = 0;
  for (std::size_t begin = 0; begin < cd.islandRows.size(); ++slot) {
    const contact::BoxedLcpWorkspace& ws = cd.lcps[slot];
    const int mc = static_cast<int>(ws.clamped.size());
    if (mc > 0) {
      const int r = contact::pseudoInverseFactors(ws.clampingCod(), w.islandU, w.islandV);
      for (int j = 0; j < mc; ++j) {
        const int a = w.slot[cd.islandRows[begin + ws.clamped[j]]];
        U.row(a).segment(offset, r) = w.islandU.row(j);
        V.row(a).segment(offset, r) = w.islandV.row(j);
      }
      offset += r;
    }
    begin = cd.islandEnd(begin);
  }
}

}  // namespace

void contactStepDerivatives(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                            const ContactOptions& options, const double* q, const double* v, const double* tau,
                            double dt, const double* frame_wrenches, double* q_out, double* v_out) {
  contactStep(model, data, cmodel, cd, options, q, v, tau, dt, frame_wrenches, q_out, v_out);
  const int nv = model.nv, m = cd.rowCount();
  // an alternative mode: differentiate with its classes, then give the step back its own
  struct ClassSwap {
    ContactStepData& cd;
    bool active;
    ~ClassSwap() {
      if (active) cd.classes.swap(cd.classOverride);
    }
  } swap{cd, static_cast<int>(cd.classOverride.size()) == m && m > 0};
  if (swap.active) cd.classes.swap(cd.classOverride);
  // vn: the step velocity (before free joints' re-expression), on which the rows act
  Eigen::Map<const VecX> vq(v, nv), vn(data.v_step.data(), nv);
  data.ddq_tmp = (vn - vq) / dt;  // the impulse acts as a fixed generalized force J^T x / dt
  subtractFrameTurnAcceleration(model, v, data.ddq_tmp.data());

  ConstraintDerivativeBuffers& w = cd.deriv;
  w.clamped.clear();
  w.slot.assign(m, -1);
  w.impactTime.setZero(nv);
  for (int r = 0; r < m; ++r)
    if (cd.classes[r] == LcpClass::Clamping) {
      w.slot[r] = static_cast<int>(w.clamped.size());
      w.clamped.push_back(r);
    }
  const int nc = static_cast<int>(w.clamped.size());
  bool any_impulse = false;
  for (int r = 0; r < m; ++r) any_impulse = any_impulse || cd.x[r] != 0.0;
  if (nc == 0 && !any_impulse) {
    w.P.resize(0, 0);  // no constraint acts: parameters see (M + E)^-1
    stepVelocityDerivatives(model, data, q, v, tau, dt, frame_wrenches, m > 0);  // a step with rows computed Minv
    stepPositionDerivatives(model, data, dt);
    reexpressStepJacobians(model, data, dt);
    return;
  }
  stepResidualDerivatives(model, data, q, v, dt, frame_wrenches, true);

  // K = (M + E)^-1 J^T P: a clamped normal also carries its friction rows at the bound
  w.K.resize(nv, nc);
  w.Jc.resize(nc, nv);
  for (int a = 0; a < nc; ++a) {
    w.K.col(a) = cd.MinvJt.col(w.clamped[a]);
    w.Jc.row(a) = cd.J.row(w.clamped[a]);
  }
  for (int r = 0; r < m; ++r) {
    const bool upper = cd.classes[r] == LcpClass::UpperBound;
    if (!upper && cd.classes[r] != LcpClass::LowerBound) continue;
    const int n = cd.findex[r];
    if (n >= 0 && w.slot[n] >= 0) w.K.col(w.slot[n]) += (upper ? cd.hi[r] : cd.lo[r]) * cd.MinvJt.col(r);
  }

  // geometry: d(J^T x)/dq and the clamped rows' d target - (dJ) v'
  jointVelocities(model, data, vn, w.nuNext);
  jointVelocities(model, data, vq, w.nuPrev);
  w.Fq.setZero(nv, nv);
  w.active.assign(nv, 0);
  w.rowq.resize(nv);
  w.Gq.setZero(nc, nv);
  w.Gv.setZero(nc, nv);
  w.bounceRows.clear();
  w.bounceGap.clear();
  w.bounceGapDq.resize(nc, nv);
  w.bounceSpeedDq.resize(nc, nv);
  int r = 0;
  const int ncontact_rows = [&] {
    int n = 0;
    while (n < m && (cd.rows[n].kind == RowKind::ContactNormal || cd.rows[n].kind == RowKind::ContactFriction)) ++n;
    return n;
  }();
  while (r < ncontact_rows) {
    const int k = cd.rows[r].index;
    int r1 = r + 1;
    while (r1 < ncontact_rows && cd.rows[r1].index == k) ++r1;
    bool active = false;
    for (int i = r; i < r1; ++i) active = active || w.slot[i] >= 0 || cd.x[i] != 0.0;
    if (active) {
      contactGeometryDerivatives(model, data, cmodel, cd, options, k);
      contactRowDerivatives(model, data, cmodel, cd, options, dt, k, r, r1);
    }
    r = r1;
  }
  for (int i = ncontact_rows; i < m; ++i) jointRowDerivatives(cd, options, dt, i, w);

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
    prepareClampedDecomposition(cd);
    clampedPseudoInverseFactors(cd, w.U, w.V);
    w.H.resize(nc, 2 * nv + g);
    for (int a = 0; a < nc; ++a) w.H.row(a).head(nv) = cd.MinvJt.col(w.clamped[a]).transpose();  // J_C (M + E)^-1
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
  if (hasFreeJoints(model)) reexpressVelocityRows(model, dt, data.v_step.data(), Dv);
}

namespace {
// d combine(a, b) / da
double combineDerivative(Combine how, double a, double b) {
  switch (how) {
    case Combine::GeometricMean: return a > 0.0 ? 0.5 * std::sqrt(b / a) : 0.0;
    case Combine::Min: return a < b ? 1.0 : a == b ? 0.5 : 0.0;
    case Combine::Max: return a > b ? 1.0 : a == b ? 0.5 : 0.0;
    case Combine::Mean: return 0.5;
  }
  return 0.0;
}
}  // namespace

void contactCoefficientDerivatives(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                                   const ContactOptions& options, const double* v, double dt, MatX& dq_dmu,
                                   MatX& dv_dmu, MatX& dq_de, MatX& dv_de) {
  const int nv = model.nv, ng = static_cast<int>(cmodel.geometries.size()), m = cd.rowCount();
  const ConstraintDerivativeBuffers& w = cd.deriv;
  const int nc = static_cast<int>(w.clamped.size());
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
    if (w.slot[r] >= 0 && cd.targetKind[r] == TargetKind::Restitution) {
      const double vn = cd.J.row(r).dot(vq);  // target = -e vn
      Ge(w.slot[r], c.geom_a) -= vn * combineDerivative(options.restitutionCombine, ga.restitution, gb.restitution);
      Ge(w.slot[r], c.geom_b) -= vn * combineDerivative(options.restitutionCombine, gb.restitution, ga.restitution);
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
  if (hasFreeJoints(model)) {
    reexpressVelocityRows(model, dt, data.v_step.data(), dv_dmu);
    reexpressVelocityRows(model, dt, data.v_step.data(), dv_de);
  }
}

}  // namespace rigidiff
