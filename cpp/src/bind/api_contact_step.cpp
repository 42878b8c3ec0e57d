// Bindings of the constrained step (declared in rigidiff/bind/api.hpp).
#include <algorithm>
#include <cmath>

#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/world/parallel.hpp"

namespace rigidiff {
namespace bind {

void setContactOptions(ContactOptions& o, int friction_directions, int friction_combine, int restitution_combine,
                       double restitution_threshold, double erp, double penetration_allowance,
                       double max_correction_velocity, bool joint_limits, bool joint_friction, double lcp_tolerance,
                       bool bounce_correction, bool warm_start, bool speculative, double rest_depth) {
  RD_CHECK_ARG(friction_directions == 2 || friction_directions == 4,
               "friction_directions must be 2 or 4, got " << friction_directions);
  RD_CHECK_ARG(friction_combine >= 0 && friction_combine <= 3, "unknown friction combine code " << friction_combine);
  RD_CHECK_ARG(restitution_combine >= 0 && restitution_combine <= 3,
               "unknown restitution combine code " << restitution_combine);
  RD_CHECK_ARG(std::isfinite(restitution_threshold) && restitution_threshold >= 0.0,
               "restitution_threshold must be >= 0, got " << restitution_threshold);
  RD_CHECK_ARG(std::isfinite(erp) && erp >= 0.0 && erp <= 1.0, "erp must be in [0, 1], got " << erp);
  RD_CHECK_ARG(std::isfinite(penetration_allowance) && penetration_allowance >= 0.0,
               "penetration_allowance must be >= 0, got " << penetration_allowance);
  RD_CHECK_ARG(max_correction_velocity > 0.0, "max_correction_velocity must be > 0, got " << max_correction_velocity);
  RD_CHECK_ARG(std::isfinite(lcp_tolerance) && lcp_tolerance > 0.0, "tolerance must be > 0, got " << lcp_tolerance);
  RD_CHECK_ARG(std::isfinite(rest_depth) && rest_depth >= 0.0, "rest_depth must be >= 0, got " << rest_depth);
  o.frictionDirections = friction_directions;
  o.frictionCombine = static_cast<Combine>(friction_combine);
  o.restitutionCombine = static_cast<Combine>(restitution_combine);
  o.restitutionThreshold = restitution_threshold;
  o.erp = erp;
  o.penetrationAllowance = penetration_allowance;
  o.maxCorrectionVelocity = max_correction_velocity;
  o.jointLimits = joint_limits;
  o.jointFriction = joint_friction;
  o.lcp.tolerance = lcp_tolerance;
  o.bounceCorrection = bounce_correction;
  o.warmStart = warm_start;
  o.speculative = speculative;
  o.restDepth = rest_depth;
}

bool needsConstraints(const Model& m, const CollisionModel& cm, const ContactOptions& o) {
  const int n = static_cast<int>(cm.geometries.size());
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (cm.allowed(m, i, j)) return true;
  if (o.jointFriction && (m.friction.array() > 0.0).any()) return true;
  if (o.jointLimits)
    for (int j = 1; j < m.njoints; ++j) {
      const JointModel& jm = m.joints[j];
      if (jm.nq == 1 && jm.nv == 1 &&
          (std::isfinite(m.lower_limit[jm.idx_q]) || std::isfinite(m.upper_limit[jm.idx_q])))
        return true;
    }
  return false;
}

void constrainedStep(const Model& m, Data& d, const CollisionModel& cm, ContactStepData& cd, const ContactOptions& o,
                     const double* q, const double* v, const double* tau, double dt, const double* fext,
                     double* q_out, double* v_out) {
  checkState(m, q, v);
  checkFinite(tau, m.nv, "tau");
  if (fext) checkFinite(fext, 6 * static_cast<long>(m.frames.size()), "f_ext");
  contactStep(m, d, cm, cd, o, q, v, tau, dt, fext, q_out, v_out);
}

void clearWarmStart(ContactStepData& cd) { cd.warmClasses.clear(); }

void constrainedRollout(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* q0,
                        const double* v0, const double* taus, int T, double dt, double* Q, double* V, int* rows) {
  checkState(m, q0, v0, "q0", "v0");
  checkFinite(taus, static_cast<long>(T) * m.nv, "taus");
  Data data(m);
  ContactStepData cd(cm);
  const int nq = m.nq, nv = m.nv;
  std::copy(q0, q0 + nq, Q);
  std::copy(v0, v0 + nv, V);
  for (int t = 0; t < T; ++t) {
    contactStep(m, data, cm, cd, o, Q + t * nq, V + t * nv, taus + t * nv, dt, nullptr, Q + (t + 1) * nq,
                V + (t + 1) * nv);
    rows[t] = cd.rowCount();
  }
}

void constrainedStepBatch(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* Q,
                          const double* V, const double* TAU, int N, double dt, int threads, double* Qout,
                          double* Vout) {
  const int nq = m.nq, nv = m.nv;
  for (int s = 0; s < N; ++s) {
    checkState(m, Q + s * nq, V + s * nv, "Q", "V");
    checkFinite(TAU + s * nv, nv, "TAU");
  }
  parallelChunks(N, threads, [&](int begin, int end) {
    Data data(m);
    ContactStepData cd(cm);
    cd.warmStart = false;
    for (int s = begin; s < end; ++s)
      contactStep(m, data, cm, cd, o, Q + s * nq, V + s * nv, TAU + s * nv, dt, nullptr, Qout + s * nq,
                  Vout + s * nv);
  });
}

int lastRowCount(const ContactStepData& cd) { return cd.rowCount(); }

void readLastLcp(const ContactStepData& cd, double* A, double* b, double* lo, double* hi, double* x, int* findex) {
  const int m = cd.rowCount();
  if (m == 0 || cd.A.rows() != m) return;
  Eigen::Map<MatX>(A, m, m) = cd.A;  // symmetric: either storage order reads the same
  for (int r = 0; r < m; ++r) {
    b[r] = cd.b[r];
    lo[r] = cd.lo[r];
    hi[r] = cd.hi[r];
    x[r] = cd.x.size() == m ? cd.x[r] : 0.0;
    findex[r] = cd.findex[r];
  }
}

double lastDeepest(const ContactStepData& cd) {
  double deepest = INFINITY;
  for (const Contact& c : cd.cdata.contacts.contacts) deepest = std::min(deepest, c.distance);
  return deepest;
}

int lastContactCount(const ContactStepData& cd) { return cd.cdata.contacts.size(); }

void readLastImpulses(const ContactStepData& cd, double* normal, double* friction, int* classes, int* status) {
  const int nc = cd.cdata.contacts.size();
  for (int k = 0; k < nc; ++k) {
    normal[k] = 0.0;
    classes[k] = 0;
    for (int i = 0; i < 3; ++i) friction[3 * k + i] = 0.0;
  }
  const bool solved = cd.rowCount() > 0 && cd.x.size() == cd.rowCount();
  int first_tangent = 0;
  for (int r = 0; solved && r < cd.rowCount(); ++r) {
    const ConstraintRow& row = cd.rows[r];
    if (row.kind == RowKind::ContactNormal) {
      normal[row.index] = cd.x[r];
      classes[row.index] = static_cast<int>(cd.classes[r]);
      first_tangent = r + 1;
    } else if (row.kind == RowKind::ContactFriction) {
      const int dirs = static_cast<int>(cd.tangents.size()) / std::max(1, nc);
      const Vec3& t = cd.tangents[dirs * row.index + (r - first_tangent)];
      for (int i = 0; i < 3; ++i) friction[3 * row.index + i] += cd.x[r] * t[i];
    }
  }
  status[0] = static_cast<int>(cd.result.solver);
  status[1] = cd.result.frictionDropped ? 1 : 0;
}

void readLastRows(const ContactStepData& cd, int* kinds, int* index, int* classes) {
  const bool solved = cd.x.size() == cd.rowCount();
  for (int r = 0; r < cd.rowCount(); ++r) {
    kinds[r] = static_cast<int>(cd.rows[r].kind);
    index[r] = cd.rows[r].index;
    classes[r] = solved ? static_cast<int>(cd.classes[r]) : 0;
  }
}

void readLastContacts(const ContactStepData& cd, double* points, double* normals, double* distances, int* geom_a,
                      int* geom_b, int* types) {
  readContacts(cd.cdata, points, normals, distances, geom_a, geom_b, types);
}

}  // namespace bind
}  // namespace rigidiff
