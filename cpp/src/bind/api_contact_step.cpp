// Bindings of the constrained step (declared in rigidiff/bind/api.hpp).
#include <algorithm>
#include <cmath>

#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/api_batch.hpp"
#include "rigidiff/bind/api_rk4.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/world/batch_buffers.hpp"
#include "rigidiff/world/parallel.hpp"

namespace rigidiff {
namespace bind {

int constraintReason(const Model& m, const CollisionModel& cm, const ContactOptions& o) {
  const int n = static_cast<int>(cm.geometries.size());
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (cm.allowed(m, i, j)) return kNeedsContacts;
  if (o.jointFriction && (m.friction.array() > 0.0).any()) return kNeedsJointFriction;
  if (o.jointLimits)
    for (int j = 1; j < m.njoints; ++j) {
      const JointModel& jm = m.joints[j];
      if (jm.nq == 1 && jm.nv == 1 &&
          (std::isfinite(m.lower_limit[jm.idx_q]) || std::isfinite(m.upper_limit[jm.idx_q])))
        return kNeedsJointLimits;
    }
  return 0;
}

bool needsConstraints(const Model& m, const CollisionModel& cm, const ContactOptions& o) {
  return constraintReason(m, cm, o) != 0;
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

int warmStartSize(const ContactStepData& cd) {
  // a step leaves its rows' keys and classes; an emptied cache keeps the keys but no classes
  return cd.warmClasses.size() == cd.warmKeys.size() ? static_cast<int>(cd.warmClasses.size()) : 0;
}

void readWarmStart(const ContactStepData& cd, std::int64_t* keys, int* classes) {
  const int n = warmStartSize(cd);
  for (int r = 0; r < n; ++r) {
    keys[r] = cd.warmKeys[r];
    classes[r] = static_cast<int>(cd.warmClasses[r]);
  }
}

void writeWarmStart(ContactStepData& cd, const std::int64_t* keys, const int* classes, int n) {
  RD_CHECK_ARG(n >= 0, "warm start row count must be >= 0, got " << n);
  for (int r = 0; r < n; ++r)
    RD_CHECK_ARG(classes[r] >= 0 && classes[r] <= 3, "warm start class [" << r << "] must be 0..3, got " << classes[r]);
  cd.warmKeys.assign(keys, keys + n);
  cd.warmClasses.resize(n);
  for (int r = 0; r < n; ++r) cd.warmClasses[r] = static_cast<contact::LcpClass>(classes[r]);
}

void constrainedRollout(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* q0,
                        const double* v0, const double* taus, int T, double dt, double* Q, double* V, int* rows,
                        std::vector<std::int64_t>* keys, std::vector<int>* classes) {
  checkState(m, q0, v0, "q0", "v0");
  checkFinite(taus, static_cast<long>(T) * m.nv, "taus");
  Data data(m);
  ContactStepData cd(cm);
  contactChain(m, data, cm, cd, o, q0, v0, taus, T, dt, Q, V, [&](int t) {
    rows[t] = cd.rowCount();
    if (keys && classes) {  // a step without rows leaves no keys, and the previous step's classes
      keys->insert(keys->end(), cd.warmKeys.begin(), cd.warmKeys.begin() + rows[t]);
      for (int r = 0; r < rows[t]; ++r) classes->push_back(static_cast<int>(cd.classes[r]));
    }
  });
}

void constrainedStepBatch(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* Q,
                          const double* V, const double* TAU, int N, double dt, int threads, double* Qout,
                          double* Vout) {
  const long nq = m.nq, nv = m.nv;
  checkStateRows(m, Q, V, N, TAU);
  parallelFor(
      N, threads, [&] { return std::make_unique<ContactBuffers>(m, cm); },
      [&](ContactBuffers& b, long s) {
        clearWarmStart(b.cd);  // every row solves cold, as step() from a state no step ended at
        contactStep(m, b.data, cm, b.cd, o, Q + s * nq, V + s * nv, TAU + s * nv, dt, nullptr, Qout + s * nq,
                    Vout + s * nv);
      });
}

int lastRowCount(const ContactStepData& cd) { return cd.rowCount(); }

void readLastLcp(const ContactStepData& cd, double* A, double* b, double* lo, double* hi, double* x, int* findex) {
  const int m = cd.rowCount();
  if (m == 0 || static_cast<int>(cd.segStart.size()) != m + 1) return;
  Eigen::Map<MatX> Am(A, m, m);  // symmetric: either storage order reads the same
  denseDelassus(cd, Am);
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
