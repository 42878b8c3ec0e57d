#include "rigidiff/world/constraint_derivative_terms.hpp"

#include <algorithm>
#include <cmath>

#include "rigidiff/collision/feature_derivatives.hpp"
#include "rigidiff/contact/point_jacobian.hpp"
#include "rigidiff/contact/pseudo_inverse.hpp"
#include "rigidiff/world/friction_basis.hpp"

namespace rigidiff {

namespace {

using contact::LcpClass;

// The motion terms of a contact's rows: d nu_b / dq_k = S_k x (nu_b - nu_parent) for the dofs k
// moving body b, summed with sign +1 for A and -1 for B into X (6 x nv, set on the columns `cols`),
// so that d(w . (nu_A - nu_B))/dq_k at fixed w is w . X_k for every row of the contact.
void contactMotionTerms(const Model& model, const Data& data, const BodyRef& a, const BodyRef& b,
                        const std::vector<int>& cols, const Mat6X& nu, Mat6X& X) {
  X.resize(6, model.nv);
  for (int col : cols) X.col(col).setZero();
  addBodyMotionTerms(model, data, a, nu, 1.0, X);
  addBodyMotionTerms(model, data, b, nu, -1.0, X);
}

// d/dq of a row J_r u = w . (nu_A(u) - nu_B(u)) at fixed u, with w = (d, p x d) and its derivative dw
// (6 x nv, read on the columns `cols` only): the wrench moves (dw) and so do the bodies' velocities
// (the contact's motion terms X)
void rowVelocityDerivative(int ja, int jb, const Vec6& w, const Mat6X& dw, const std::vector<int>& cols,
                           const Mat6X& nu, const Mat6X& X, Ref<VecX> out) {
  const Vec6 rel = nu.col(ja) - nu.col(jb);  // out is zero off `cols` (contactGeometryDerivatives)
  for (int col : cols) out[col] = dw.col(col).dot(rel) + w.dot(X.col(col));
}

// d(S_b^T W)/dq for a wrench W (world origin) on body b whose derivative is dW (6 x nv, read on the
// columns `cols`), added into F with `sign`: the chain's columns turn (d S_m / dq_k = S_k x S_m for m at or
// below k) and W moves. A particle's columns are world translations that never turn: only W moves.
void addImpulseDerivative(const Model& model, const Data& data, const BodyRef& body, const Vec6& W, const Mat6X& dW,
                          const std::vector<int>& cols, double sign, const ConstraintTermSink& F) {
  if (body.kind == BodyKind::Static) return;
  if (body.kind == BodyKind::Particle) {
    const int v0 = model.joints[body.index].idx_v;
    for (int k = 0; k < 3; ++k)
      for (int col : cols) F.addFq(v0 + k, col, sign * dW(k, col));
    return;
  }
  const int b = body.index;
  for (int jk = b; jk > 0; jk = model.parents[jk]) {
    const JointModel& ck = model.joints[jk];
    for (int k = ck.idx_v; k < ck.idx_v + ck.nv; ++k) {
      const Vec6 y = crossForce(data.J.col(k), W);
      for (int jm = b; jm > 0; jm = model.parents[jm]) {
        if (!model.supports(jk, jm)) continue;
        const JointModel& cm = model.joints[jm];
        for (int m = cm.idx_v; m < cm.idx_v + cm.nv; ++m) F.addFq(m, k, -sign * data.J.col(m).dot(y));
      }
    }
  }
  forChainDofs(model, b, [&](int m) {
    for (int col : cols) F.addFq(m, col, sign * data.J.col(m).dot(dW.col(col)));
  });
}

// point, normal, distance and friction-direction derivatives of contact k with respect to q
void contactGeometryDerivatives(const Model& model, const Data& data, const CollisionModel& cmodel,
                                ContactStepData& cd, const ContactOptions& options, int k) {
  ConstraintDerivativeBuffers& w = cd.deriv;
  const int nv = model.nv;
  const Contact& c = cd.cdata.contacts.contacts[k];
  const BodyRef& ba = cmodel.geometries[c.geom_a].body;
  const BodyRef& bb = cmodel.geometries[c.geom_b].body;
  const SE3& Mb = cd.cdata.placements[c.geom_b];
  FeatureGeometry value;
  FeaturePointDerivatives der;  // with respect to the features' points, chained below through each side's map
  evaluateFeaturePointDerivatives(c.feature_a, cd.cdata.placements[c.geom_a], c.feature_b, Mb, c.normal, value,
                                  der);
  const int cb0 = 3 * der.a.count;  // B's first column
  // the dofs that move A or B: every derivative of this contact vanishes on the others, which are never
  // read (only the columns `cols` are set, so the buffers are not cleared). onB, ddistance and rowq are
  // read whole, so they are kept zero off `cols`: the previous contact's entries are cleared here, in
  // O(its dofs) rather than O(nv) per contact
  const int nt = options.frictionDirections;
  for (int col : w.cols) {
    w.onB[col] = 0;
    w.ddistance[col] = 0.0;
    w.rowq[col] = 0.0;
  }
  w.cols.clear();
  forBodyDofs(model, bb, [&](int col) {
    w.onB[col] = 1;
    w.bcols.push_back(col);
  });
  forBodyDofs(model, ba, [&](int col) {
    if (!w.onB[col]) w.cols.push_back(col);
  });
  std::sort(w.bcols.begin(), w.bcols.end());  // B's dofs after A's own, ascending
  w.cols.insert(w.cols.end(), w.bcols.begin(), w.bcols.end());
  w.bcols.clear();
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
  // ddistance is read whole (rows of G_q) and zero off `cols` (cleared above)
  addStencilProduct(model, data, ba, der.a, der.dpoint, 0, w.dpoint);
  addStencilProduct(model, data, bb, der.b, der.dpoint, cb0, w.dpoint);
  addStencilProduct(model, data, ba, der.a, der.dnormal, 0, w.dnormal);
  addStencilProduct(model, data, bb, der.b, der.dnormal, cb0, w.dnormal);
  addStencilProduct(model, data, ba, der.a, der.ddistance, 0, w.ddistance.transpose());
  addStencilProduct(model, data, bb, der.b, der.ddistance, cb0, w.ddistance.transpose());
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

// rows of contact k start at r0 and end before r1; adds their terms to Fq, Gq, Gv (through sink)
void contactRowDerivatives(const Model& model, const Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                           const ContactOptions& options, double dt, int k, int r0, int r1,
                           const ConstraintTermSink& sink) {
  ConstraintDerivativeBuffers& w = cd.deriv;
  const int nv = model.nv, nt = options.frictionDirections;
  const Contact& c = cd.cdata.contacts.contacts[k];
  const BodyRef& ba = cmodel.geometries[c.geom_a].body;
  const BodyRef& bb = cmodel.geometries[c.geom_b].body;
  const int ja = ba.joint(), jb = bb.joint();
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
    const int a = w.clamping.slot[r];
    if (a < 0) continue;
    // clamped: d(J_r v') = d target_r
    if (!motion_next) contactMotionTerms(model, data, ba, bb, w.cols, w.nuNext, w.motionNext);
    motion_next = true;
    rowVelocityDerivative(ja, jb, wr, w.dw, w.cols, w.nuNext, w.motionNext, w.rowq);
    // row a of G_q (zero off the contact's dofs, as rowq and ddistance are) into the matrix, or times
    // mu_a straight into g_q
    const double ma = sink.Gq ? 0.0 : sink.mu[a];
    if (sink.Gq) {
      for (int col : w.cols) (*sink.Gq)(a, col) = -w.rowq[col];
    } else {
      for (int col : w.cols) sink.g_q[col] -= ma * w.rowq[col];
    }
    switch (cd.targetKind[r]) {
      case TargetKind::Gap:
        if (sink.Gq) {
          for (int col : w.cols) (*sink.Gq)(a, col) -= w.ddistance[col] / dt;
        } else {
          for (int col : w.cols) sink.g_q[col] -= ma * w.ddistance[col] / dt;
        }
        break;
      case TargetKind::Correction:
        if (sink.Gq) {
          sink.Gq->row(a) -= (options.erp / dt) * w.ddistance.transpose();
        } else {
          for (int col : w.cols) sink.g_q[col] -= ma * (options.erp / dt) * w.ddistance[col];
        }
        break;
      case TargetKind::Restitution: {
        const double e = cd.restitution[k];
        if (!motion_prev) contactMotionTerms(model, data, ba, bb, w.cols, w.nuPrev, w.motionPrev);
        motion_prev = true;
        rowVelocityDerivative(ja, jb, wr, w.dw, w.cols, w.nuPrev, w.motionPrev, w.rowq);
        if (sink.Gq) {
          sink.Gq->row(a) -= e * w.rowq.transpose();
          sink.Gv->row(a) = -e * cd.J.row(r);
        } else {
          for (int col : w.cols) sink.g_q[col] -= ma * e * w.rowq[col];
          addRowTo(model, cd, cd.Jseg, r, -ma * e, Eigen::Map<VecX>(sink.g_v, nv));
        }
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
    addImpulseDerivative(model, data, ba, W, w.dW, w.cols, 1.0, sink);
    addImpulseDerivative(model, data, bb, W, w.dW, w.cols, -1.0, sink);
  }
}

// joint-limit targets: -gap/dt (or the correction) with gap = q - lower or upper - q
void jointRowDerivatives(const ContactStepData& cd, const ContactOptions& options, double dt, int r,
                         const ConstraintTermSink& sink) {
  const int a = cd.deriv.clamping.slot[r];
  const ConstraintRow& row = cd.rows[r];
  if (a < 0 || row.kind == RowKind::JointFriction) return;
  const double sign = row.kind == RowKind::LowerLimit ? 1.0 : -1.0;  // d gap / dq
  double g = 0.0;
  if (cd.targetKind[r] == TargetKind::Gap) g = -sign / dt;
  if (cd.targetKind[r] == TargetKind::Correction) g = -sign * options.erp / dt;
  if (g == 0.0) return;
  if (sink.Gq)
    (*sink.Gq)(a, row.index) = g;
  else
    sink.g_q[row.index] += sink.mu[a] * g;
}


// the clamped rows and the rows following them among island rows islandRows[begin:end]; the clamped rows'
// slots, in island order, are appended to `slots` unless it is null
void islandClampedCounts(const ContactStepData& cd, std::size_t begin, std::size_t end, int& clamped, int& coupled,
                         std::vector<int>* slots = nullptr) {
  const contact::ClampingMap& P = cd.deriv.clamping;
  clamped = coupled = 0;
  for (std::size_t i = begin; i < end; ++i) {
    const int r = cd.islandRows[i];
    if (P.slot[r] >= 0) {
      ++clamped;
      if (slots) slots->push_back(P.slot[r]);
    }
    coupled += P.follows[r] >= 0;
  }
}

// does island `slot` (rows islandRows[begin:end], `clamped` of them clamped and `coupled` following them)
// hold in its LCP workspace the decomposition of its block of Q: a valid system whose clamped rows are the
// island's clamped rows and whose following rows are the island's?
bool islandSystemMatches(const ContactStepData& cd, const contact::BoxedLcpWorkspace& ws, std::size_t begin,
                         int clamped, int coupled) {
  const contact::ClampingMap& P = cd.deriv.clamping;
  if (!ws.systemValid || static_cast<int>(ws.clamped.size()) != clamped) return false;
  for (int row : ws.clamped)
    if (P.slot[cd.islandRows[begin + row]] < 0) return false;
  int coupledHere = 0;
  for (std::size_t u = 0; u < ws.bounded.size(); ++u) {
    if (ws.coupling[u] < 0) continue;  // a fixed bound adds nothing to Q
    if (P.follows[cd.islandRows[begin + ws.bounded[u]]] < 0) return false;
    ++coupledHere;
  }
  return coupledHere == coupled;
}

// The clamping system Q = J_C K couples only rows of one island, and each island's LCP solve left the
// decomposition of its block (contact/lcp_classification.hpp) when the classes are the solved ones;
// with other classes (an explored contact mode) Q gets a decomposition of its own.
void prepareClampedDecomposition(ContactStepData& cd) {
  ConstraintDerivativeBuffers& w = cd.deriv;
  w.islandCods = true;
  int slot = 0;
  for (std::size_t begin = 0; begin < cd.islandRows.size() && w.islandCods; ++slot) {
    const std::size_t end = cd.islandEnd(begin);
    int clamped, coupled;
    islandClampedCounts(cd, begin, end, clamped, coupled);
    w.islandCods = islandSystemMatches(cd, cd.lcps[slot], begin, clamped, coupled);
    begin = end;
  }
  if (!w.islandCods) {
    w.Qc.noalias() = w.Jc * w.K;
    contact::computeCod(w.cod, w.Qc);
  }
}

// Q^+ = U V^T with thin factors (rows by slot, one block of columns per island; contact/pseudo_inverse.hpp)
void islandPseudoInverseFactors(ContactStepData& cd, MatX& U, MatX& V) {
  ConstraintDerivativeBuffers& w = cd.deriv;
  const int nc = w.clamping.size();
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
        const int a = w.clamping.slot[cd.islandRows[begin + ws.clamped[j]]];
        U.row(a).segment(offset, r) = w.islandU.row(j);
        V.row(a).segment(offset, r) = w.islandV.row(j);
      }
      offset += r;
    }
    begin = cd.islandEnd(begin);
  }
}

}  // namespace

bool clampedRowSlots(const Model& model, ContactStepData& cd) {
  const int nv = model.nv, m = cd.rowCount();
  ConstraintDerivativeBuffers& w = cd.deriv;
  w.clamping.assign(m, cd.classes.data(), cd.findex.data(), cd.lo.data(), cd.hi.data());
  w.impactTime.setZero(nv);
  const int nc = w.clamping.size();
  bool any_impulse = false;
  for (int r = 0; r < m; ++r) any_impulse = any_impulse || cd.x[r] != 0.0;
  return nc > 0 || any_impulse;
}

bool prepareClampedRows(const Model& model, ContactStepData& cd) {
  if (!clampedRowSlots(model, cd)) return false;
  const int nv = model.nv;
  ConstraintDerivativeBuffers& w = cd.deriv;
  const int nc = w.clamping.size();
  // K = (M + E)^-1 J^T P: a clamped normal also carries its friction rows at the bound
  w.K.resize(nv, nc);
  w.Jc.resize(nc, nv);
  for (int a = 0; a < nc; ++a) w.Jc.row(a) = cd.J.row(w.clamping.clamped[a]);
  w.clamping.gather([&](int r) { return cd.MinvJt.col(r); }, [&](int a) { return w.K.col(a); });
  return true;
}

void constraintGeometryTerms(const Model& model, const Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                             const ContactOptions& options, const Ref<const VecX>& vq, const Ref<const VecX>& vn,
                             double dt, const ConstraintTermSink& sink) {
  const int nv = model.nv, m = cd.rowCount();
  ConstraintDerivativeBuffers& w = cd.deriv;
  const int nc = w.clamping.size();
  jointVelocities(model, data, vn, w.nuNext);
  jointVelocities(model, data, vq, w.nuPrev);
  w.active.assign(nv, 0);
  if (w.rowq.size() != nv) {  // kept zero off the current contact's dofs from here on
    w.rowq.setZero(nv);
    w.ddistance.setZero(nv);
    w.onB.assign(nv, 0);
    w.cols.clear();
  }
  if (sink.Gq) {
    sink.Gq->setZero(nc, nv);
    sink.Gv->setZero(nc, nv);
  }
  w.bounceRows.clear();
  w.bounceGap.clear();
  if (w.bounceGapDq.rows() < nc || w.bounceGapDq.cols() != nv) {  // grow only: rows are used by bounces only
    w.bounceGapDq.resize(nc, nv);
    w.bounceSpeedDq.resize(nc, nv);
  }
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
    for (int i = r; i < r1; ++i) active = active || w.clamping.slot[i] >= 0 || cd.x[i] != 0.0;
    if (active) {
      contactGeometryDerivatives(model, data, cmodel, cd, options, k);
      contactRowDerivatives(model, data, cmodel, cd, options, dt, k, r, r1, sink);
    }
    r = r1;
  }
  for (int i = ncontact_rows; i < m; ++i) jointRowDerivatives(cd, options, dt, i, sink);
}

void clampedPseudoInverseFactors(ContactStepData& cd) {
  prepareClampedDecomposition(cd);
  islandPseudoInverseFactors(cd, cd.deriv.U, cd.deriv.V);
}

namespace {
// the island's block of Q = J_C K on its clamped slots w.islandSlots, over the dofs of the trees its rows
// touch (J_C and K vanish on the others), from J^T and M^-1 J^T, decomposed into w.islandCod
void decomposeIslandBlock(const Model& model, ContactStepData& cd, std::size_t begin, std::size_t end) {
  ConstraintDerivativeBuffers& w = cd.deriv;
  w.islandDofs.clear();
  w.treeMark.assign(model.njoints, -1);  // a tree's first column in islandDofs
  for (std::size_t i = begin; i < end; ++i)
    for (int side = 0; side < 2; ++side) {
      const int t = cd.rowTrees[2 * cd.islandRows[i] + side];
      if (t <= 0 || w.treeMark[t] >= 0) continue;
      w.treeMark[t] = static_cast<int>(w.islandDofs.size());
      for (int k = 0; k < model.subtree_nv[t]; ++k) w.islandDofs.push_back(model.joints[t].idx_v + k);
    }
  const int mc = static_cast<int>(w.islandSlots.size()), nd = static_cast<int>(w.islandDofs.size());
  w.islandJ.resize(mc, nd);
  w.islandK.resize(nd, mc);
  if (static_cast<int>(w.localSlot.size()) < w.clamping.size()) w.localSlot.resize(w.clamping.clamped.size());
  w.islandJ.setZero();
  w.islandK.setZero();
  for (int a = 0; a < mc; ++a) {
    w.localSlot[w.islandSlots[a]] = a;
    const int r = w.clamping.clamped[w.islandSlots[a]];
    forRowSegments(model, cd, r, [&](int t, int, int n, int off) {
      w.islandJ.row(a).segment(w.treeMark[t], n) = cd.Jseg.segment(off, n).transpose();
      w.islandK.col(a).segment(w.treeMark[t], n) = cd.MinvJtSeg.segment(off, n);
    });
  }
  // K's columns also carry the friction rows at their bounds (prepareClampedRows)
  for (std::size_t i = begin; i < end; ++i) {
    const int r = cd.islandRows[i], a = w.clamping.follows[r];
    if (a < 0) continue;
    const double f = w.clamping.factor[r];
    forRowSegments(model, cd, r, [&](int t, int, int len, int off) {
      w.islandK.col(w.localSlot[a]).segment(w.treeMark[t], len) += f * cd.MinvJtSeg.segment(off, len);
    });
  }
  w.islandQ.noalias() = w.islandJ * w.islandK;
  contact::computeCod(w.islandCod, w.islandQ);
}
}  // namespace

void clampedPseudoInverseTransposeProduct(const Model& model, ContactStepData& cd, const Ref<const VecX>& z,
                                          Ref<VecX> mu) {
  ConstraintDerivativeBuffers& w = cd.deriv;
  int slot = 0;
  for (std::size_t begin = 0; begin < cd.islandRows.size(); ++slot) {
    const std::size_t end = cd.islandEnd(begin);
    const contact::BoxedLcpWorkspace& ws = cd.lcps[slot];
    w.islandSlots.clear();
    int mc, coupled;
    islandClampedCounts(cd, begin, end, mc, coupled, &w.islandSlots);
    if (mc > 0) {
      // the island's clamped slots in the order of the decomposition's rows
      const Eigen::CompleteOrthogonalDecomposition<MatX>* cod = &w.islandCod;
      if (islandSystemMatches(cd, ws, begin, mc, coupled)) {
        cod = &ws.clampingCod();
        for (int j = 0; j < mc; ++j) w.islandSlots[j] = w.clamping.slot[cd.islandRows[begin + ws.clamped[j]]];
      } else {
        decomposeIslandBlock(model, cd, begin, end);  // a system the LCP solve did not leave
      }
      if (w.islandZ.size() < 2 * mc) w.islandZ.resize(2 * mc);  // grows to the largest island only
      for (int j = 0; j < mc; ++j) w.islandZ[j] = z[w.islandSlots[j]];
      contact::pseudoInverseTransposeProduct(*cod, w.islandZ.head(mc), w.Vtz, w.islandZ.segment(mc, mc));
      for (int j = 0; j < mc; ++j) mu[w.islandSlots[j]] = w.islandZ[mc + j];
    }
    begin = end;
  }
}

double combineDerivative(Combine how, double a, double b) {
  switch (how) {
    case Combine::GeometricMean: return a > 0.0 ? 0.5 * std::sqrt(b / a) : 0.0;
    case Combine::Min: return a < b ? 1.0 : a == b ? 0.5 : 0.0;
    case Combine::Max: return a > b ? 1.0 : a == b ? 0.5 : 0.0;
    case Combine::Mean: return 0.5;
  }
  return 0.0;
}

void clampedResponseTransposeProduct(const Model& model, const ContactStepData& cd, const Ref<const VecX>& lambda,
                                     Ref<VecX> z) {
  cd.deriv.clamping.gather([&](int r) { return rowDot(model, cd, cd.MinvJtSeg, r, lambda); },
                           [&](int a) -> double& { return z[a]; });
}

void subtractClampedRowsTransposeProduct(const Model& model, const ContactStepData& cd, const Ref<const VecX>& mu,
                                         Ref<VecX> y) {
  const ConstraintDerivativeBuffers& w = cd.deriv;
  for (std::size_t a = 0; a < w.clamping.clamped.size(); ++a) {
    const int r = w.clamping.clamped[a];
    const double m = mu[static_cast<int>(a)];
    addRowTo(model, cd, cd.Jseg, r, -m, y);
  }
}

}  // namespace rigidiff
