#include "rigidiff/world/contact_step_vjp.hpp"

#include "rigidiff/algorithm/aba.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/rnea_vjp.hpp"
#include "rigidiff/world/constraint_derivative_terms.hpp"
#include "rigidiff/world/free_joint_motion.hpp"
#include "rigidiff/world/step.hpp"
#include "rigidiff/world/step_vjp.hpp"

namespace rigidiff {

namespace {

bool bounceRow(const ContactStepData& cd, int r) {
  const RowKind kind = cd.rows[r].kind;
  return (kind == RowKind::ContactNormal || kind == RowKind::ContactFriction) && cd.deriv.clamping.slot[r] >= 0 &&
         cd.targetKind[r] == TargetKind::Restitution;
}

// The bounce correction of contact_step_derivatives.cpp (addBounceCorrection), first half: each bouncing
// island's time of impact t_c = -N / D and its dofs. q' moves by -t_c (v' - v) on them, so the cotangent
// gq' of q' adds -t_c gq' to that of v_step and t_c gq' to that of v; t_c's own derivatives follow once
// the rows' geometric terms are known (bounceTimeTerms). Returns false if no island bounces.
bool bounceImpactTimes(const Model& model, ContactStepData& cd, const Ref<const VecX>& vq, const Ref<const VecX>& vn,
                       const double* gq, VecX& lambda, double* g_v) {
  ContactVjpBuffers& b = cd.vjp;
  const int nv = model.nv, m = cd.rowCount();
  b.islands.clear();
  b.tc.clear();
  b.N.clear();
  b.D.clear();
  for (int r = 0; r < m; ++r) {
    if (!bounceRow(cd, r)) continue;
    std::size_t i = 0;
    while (i < b.islands.size() && b.islands[i] != cd.rowIsland[r]) ++i;
    if (i == b.islands.size()) {
      b.islands.push_back(cd.rowIsland[r]);
      b.N.push_back(0.0);
      b.D.push_back(0.0);
    }
    const double d = cd.cdata.contacts.contacts[cd.rows[r].index].distance, s = rowDot(model, cd, cd.Jseg, r, vq);
    b.N[i] += d * s;
    b.D[i] += s * s;
  }
  if (b.islands.empty()) return false;
  b.dofIsland.assign(nv, -1);
  b.jumpWeight.setZero(static_cast<int>(b.islands.size()));
  for (std::size_t i = 0; i < b.islands.size(); ++i) {
    b.tc.push_back(b.D[i] > 0.0 ? -b.N[i] / b.D[i] : 0.0);
    if (!(b.D[i] > 0.0)) continue;
    for (int r = 0; r < m; ++r)
      if (cd.rowIsland[r] == b.islands[i])
        forRowSegments(model, cd, r, [&](int, int dof0, int n, int off) {
          for (int k = 0; k < n; ++k)
            if (cd.MinvJtSeg[off + k] != 0.0) b.dofIsland[dof0 + k] = static_cast<int>(i);
        });
  }
  for (int k = 0; k < nv; ++k) {
    const int i = b.dofIsland[k];
    if (i < 0) continue;
    cd.deriv.impactTime[k] = b.tc[i];
    lambda[k] -= b.tc[i] * gq[k];
    g_v[k] += b.tc[i] * gq[k];
    b.jumpWeight[i] += (vn[k] - vq[k]) * gq[k];
  }
  return true;
}

// Second half: -(v' - v) d t_c, transposed: with s the island's jumpWeight and t_c = -N / D,
//   g_q -= s (a_b dgap_b + c_b dspeed_b),  g_v -= s c_b J_b   over its bouncing rows b,
// a_b = -vn_b / D, c_b = -d_b / D + 2 N vn_b / D^2 (d N = vn dgap + d dspeed, d D = 2 vn dspeed).
void bounceTimeTerms(const Model& model, ContactStepData& cd, const Ref<const VecX>& vq, double* g_q, double* g_v) {
  const ContactVjpBuffers& b = cd.vjp;
  const ConstraintDerivativeBuffers& w = cd.deriv;
  const int nv = static_cast<int>(vq.size());
  Eigen::Map<VecX> gq(g_q, nv), gv(g_v, nv);
  for (std::size_t k = 0; k < w.bounceRows.size(); ++k) {
    const int r = w.bounceRows[k];
    std::size_t i = 0;
    while (i < b.islands.size() && b.islands[i] != cd.rowIsland[r]) ++i;
    if (i == b.islands.size() || !(b.D[i] > 0.0)) continue;
    const double s = b.jumpWeight[static_cast<int>(i)], D = b.D[i];
    const double vnb = rowDot(model, cd, cd.Jseg, r, vq), d = w.bounceGap[k];
    const double a = -vnb / D, c = -d / D + 2.0 * b.N[i] * vnb / (D * D);
    gq.noalias() -= (s * a) * w.bounceGapDq.row(static_cast<int>(k)).transpose();
    gq.noalias() -= (s * c) * w.bounceSpeedDq.row(static_cast<int>(k)).transpose();
    addRowTo(model, cd, cd.Jseg, r, -s * c, gv);
  }
}

// The contact coefficients' cotangents (contactCoefficientDerivatives transposed): friction moves the
// impulses of rows at a friction bound (x_r = +-mu x_n), whose velocity change (M + E)^-1 J_r^T dx
// passes through the clamped rows as a generalized force does, so it meets y = lambda - J_C^T mu;
// restitution moves the targets -e J_r v of bouncing clamped rows, which meet mu.
void coefficientCotangents(const Model& model, const CollisionModel& cmodel, const ContactStepData& cd,
                           const ContactOptions& options, const Ref<const VecX>& vq, const Ref<const VecX>& y,
                           const Ref<const VecX>& mu, double* g_friction, double* g_restitution) {
  const ConstraintDerivativeBuffers& w = cd.deriv;
  for (int r = 0; r < cd.rowCount(); ++r) {
    const ConstraintRow& row = cd.rows[r];
    if (row.kind != RowKind::ContactNormal && row.kind != RowKind::ContactFriction) continue;
    const Contact& c = cd.cdata.contacts.contacts[row.index];
    const Geometry& ga = cmodel.geometries[c.geom_a];
    const Geometry& gb = cmodel.geometries[c.geom_b];
    const bool bound = cd.classes[r] == contact::LcpClass::UpperBound || cd.classes[r] == contact::LcpClass::LowerBound;
    if (g_friction && row.kind == RowKind::ContactFriction && bound && cd.friction[row.index] > 0.0) {
      const double s = cd.x[r] / cd.friction[row.index] * rowDot(model, cd, cd.MinvJtSeg, r, y);
      g_friction[c.geom_a] += s * combineDerivative(options.frictionCombine, ga.friction, gb.friction);
      g_friction[c.geom_b] += s * combineDerivative(options.frictionCombine, gb.friction, ga.friction);
    }
    if (g_restitution && w.clamping.slot[r] >= 0 && cd.targetKind[r] == TargetKind::Restitution) {
      const double s = rowDot(model, cd, cd.Jseg, r, vq) * mu[w.clamping.slot[r]];  // target = -e vn
      g_restitution[c.geom_a] -= s * combineDerivative(options.restitutionCombine, ga.restitution, gb.restitution);
      g_restitution[c.geom_b] -= s * combineDerivative(options.restitutionCombine, gb.restitution, ga.restitution);
    }
  }
}

}  // namespace

bool contactStepVjpSupported(const Model& model) {
  for (int i = 1; i < model.njoints; ++i)
    if (model.joints[i].type == JointType::Universal) return false;
  return true;
}

void contactStepVJP(const Model& model, Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                    const ContactOptions& options, const double* q, const double* v, const double* tau, double dt,
                    const double* frame_wrenches, const double* gq_next, const double* gv_next, double* q_out,
                    double* v_out, const StepCotangents& out, double* g_friction, double* g_restitution) {
  double *g_q = out.q, *g_v = out.v, *g_tau = out.tau;
  contactStep(model, data, cmodel, cd, options, q, v, tau, dt, frame_wrenches, q_out, v_out);
  const int nv = model.nv;
  const ClassOverrideScope mode(cd);  // an alternative mode: differentiate with its classes
  ContactVjpBuffers& b = cd.vjp;
  ConstraintDerivativeBuffers& w = cd.deriv;
  // vn: the step velocity (before free joints' re-expression), on which the rows act
  Eigen::Map<const VecX> vq(v, nv), vn(data.v_step.data(), nv);
  data.ddq_tmp = (vn - vq) / dt;  // the impulse acts as a fixed generalized force J^T x / dt
  subtractFrameTurnAcceleration(model, v, data.ddq_tmp.data());
  const bool acts = clampedRowSlots(model, cd);
  const int nc = acts ? w.clamping.size() : 0;

  // the cotangent of v_step: v' re-expresses it, q' integrates dt v_step
  data.v_tmp = dt * data.v_step;
  dIntegrateTransposeProduct(model, data.v_tmp.data(), 1, gq_next, data.vjp_tmp.data(), Motion::Step);
  b.lambda.resize(nv);
  reexpressCotangent(model, dt, data.v_step.data(), gv_next, b.lambda.data());
  b.lambda += dt * data.vjp_tmp;
  const bool bounce = acts && options.bounceCorrection && bounceImpactTimes(model, cd, vq, vn, gq_next, b.lambda, g_v);

  // mu = V U^T K^T lambda, y = lambda - J_C^T mu, w = (M + E)^-1 y = P^T lambda
  b.y = b.lambda;
  if (b.z.size() < nc) {  // grow only: a run of steps allocates when the clamped set grows, not per step
    b.z.resize(nc);
    b.mu.resize(nc);
  }
  const auto z = b.z.head(nc);
  const auto mu = b.mu.head(nc);
  if (nc > 0) {
    clampedResponseTransposeProduct(model, cd, b.lambda, b.z.head(nc));
    clampedPseudoInverseTransposeProduct(model, cd, z, b.mu.head(nc));
    subtractClampedRowsTransposeProduct(model, cd, mu, b.y);
  }
  if (acts && (g_friction || g_restitution))
    coefficientCotangents(model, cmodel, cd, options, vq, b.y, mu, g_friction, g_restitution);
  b.w.resize(nv);
  abaSolve(model, data, b.y.data(), b.w.data());  // the step's aba left the factorisation of M + E at q
  data.lam = dt * b.w;
  const VecX& lam = data.lam;
  for (int k = 0; k < nv; ++k)
    if (torqueActs(model, k, tau[k])) g_tau[k] += lam[k];

  Eigen::Map<VecX> gqo(g_q, nv), gvo(g_v, nv);
  if (acts) {  // the rows' geometry: (d(J^T x)/dq)^T w, G_q^T mu, G_v^T mu
    ConstraintTermSink sink;
    sink.w = b.w.data();
    sink.mu = b.mu.data();
    sink.g_q = g_q;
    sink.g_v = g_v;
    constraintGeometryTerms(model, data, cmodel, cd, options, vq, vn, dt, sink);
    if (bounce) bounceTimeTerms(model, cd, vq, g_q, g_v);
  }

  // the residual r(q, v) of the step at a = data.ddq_tmp, as stepVJP
  Vec3 g_grav;
  rneaVJP(model, data, q, v, data.ddq_tmp.data(), lam.data(), nullptr, data.vjp_v.data(),
          out.theta ? data.vjp_theta.data() : nullptr, out.gravity ? g_grav.data() : nullptr);
  gvo += b.y - data.vjp_v;  // lambda - J_C^T mu
  addFrameTurnTranspose(model, v, dt, b.y.data(), g_v);
  gvo.array() -= (model.damping.array() + dt * model.stiffness.array()) * lam.array();
  dIntegrateTransposeProduct(model, data.v_tmp.data(), 0, gq_next, data.vjp_tmp.data(), Motion::Step);
  gqo += data.vjp_tmp - data.vjp_q;
  subtractSpringAndWrenchVJP(model, data, q, frame_wrenches, g_q);
  // the parameters move no row and no target: their residual terms meet P^T lambda as the state's do
  subtractParameterVJP(model, data, q, v, data.ddq_tmp.data(), dt, g_grav, out);
  addGyroscopicParameterVJP(model, v, data.v_step.data(), dt, lam.data(), gv_next, out.theta, out.armature);
}

}  // namespace rigidiff
