// What the constrained step reports and its warm-start cache (declared in rigidiff/bind/api.hpp).
#include <algorithm>
#include <cmath>

#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/checks.hpp"

namespace rigidiff {
namespace bind {

void clearWarmStart(ContactStepData& cd) {
  cd.warmClasses.clear();
  cd.warmImpulses.clear();
}

int warmStartSize(const ContactStepData& cd) {
  // a step leaves its rows' keys and classes; an emptied cache keeps the keys but no classes
  return cd.warmClasses.size() == cd.warmKeys.size() ? static_cast<int>(cd.warmClasses.size()) : 0;
}

bool readWarmStart(const ContactStepData& cd, std::int64_t* keys, int* classes, double* impulses) {
  const int n = warmStartSize(cd);
  for (int r = 0; r < n; ++r) {
    keys[r] = cd.warmKeys[r];
    classes[r] = static_cast<int>(cd.warmClasses[r]);
  }
  if (static_cast<int>(cd.warmImpulses.size()) != n) return false;
  std::copy(cd.warmImpulses.begin(), cd.warmImpulses.end(), impulses);
  return true;
}

void writeWarmStart(ContactStepData& cd, const std::int64_t* keys, const int* classes, const double* impulses, int n) {
  RD_CHECK_ARG(n >= 0, "warm start row count must be >= 0, got " << n);
  for (int r = 0; r < n; ++r)
    RD_CHECK_ARG(classes[r] >= 0 && classes[r] <= 3, "warm start class [" << r << "] must be 0..3, got " << classes[r]);
  if (impulses) checkFinite(impulses, n, "warm start impulses");
  cd.warmKeys.assign(keys, keys + n);
  // the impulses pick, among the many solutions of a redundant pile's clamping system, the one the step
  // after the saved one found
  if (impulses)
    cd.warmImpulses.assign(impulses, impulses + n);
  else
    cd.warmImpulses.clear();
  cd.warmClasses.resize(n);
  for (int r = 0; r < n; ++r) cd.warmClasses[r] = static_cast<contact::LcpClass>(classes[r]);
}

int lastRowCount(const ContactStepData& cd) { return cd.rowCount(); }

void readLastLcp(const Model& model, const ContactStepData& cd, double* A, double* b, double* lo, double* hi, double* x, int* findex) {
  const int m = cd.rowCount();
  if (m == 0 || static_cast<int>(cd.segStart.size()) != m + 1) return;
  Eigen::Map<MatX> Am(A, m, m);  // symmetric: either storage order reads the same
  denseDelassus(model, cd, Am);
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
  // an island that no stage solved (its impulses are zero) is reported, whatever the other islands needed
  status[0] = static_cast<int>(cd.result.success ? cd.result.solver : contact::LcpSolver::None);
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
