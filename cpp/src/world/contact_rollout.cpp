#include "rigidiff/world/contact_rollout.hpp"

#include <cmath>

#include "rigidiff/macros.hpp"
#include "rigidiff/world/contact_step_cotangents.hpp"

namespace rigidiff {

namespace {

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

void contactRollout(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* q0,
                    const double* v0, const double* taus, int T, double dt, double* Q, double* V, int* rows,
                    std::vector<std::int64_t>* keys, std::vector<int>* classes, std::vector<double>* impulses) {
  Data data(m);
  ContactStepData cd(cm);
  contactChain(m, data, cm, cd, o, q0, v0, taus, T, dt, Q, V, [&](int t) {
    rows[t] = cd.rowCount();
    if (keys && classes) {  // a step without rows leaves no keys, and the previous step's classes
      keys->insert(keys->end(), cd.warmKeys.begin(), cd.warmKeys.begin() + rows[t]);
      for (int r = 0; r < rows[t]; ++r) classes->push_back(static_cast<int>(cd.classes[r]));
      if (impulses) impulses->insert(impulses->end(), cd.warmImpulses.begin(), cd.warmImpulses.begin() + rows[t]);
    }
  });
}

void contactRolloutBackward(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* Q,
                            const double* V, const double* taus, int T, double dt, const double* GQ,
                            const double* GV, int groups, bool explore, double* g_taus, double* g_state,
                            double* g_params, const int* rec_rows, const std::int64_t* rec_keys,
                            const int* rec_classes, const double* rec_impulses) {
  const int nq = m.nq, nv = m.nv, np = contactParameterCount(m, cm, groups);
  Data d(m);
  ContactStepData cd(cm);
  std::vector<double> jac, pjac, qn(nq), vn(nv);  // jac, pjac: sized by stepCotangents if needed
  // the rollout's own warm-start chain, each step's rows and classes, so that the reverse pass re-solves
  // every step in exactly its recorded contact mode (a problem with several valid modes resolves to the
  // one its predecessor chose): recorded by the rollout, or found by rerunning it
  std::vector<std::vector<long>> keys(T);
  std::vector<std::vector<contact::LcpClass>> classes(T);
  std::vector<std::vector<double>> impulses(T);  // recorded ones only
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
      if (rec_impulses) impulses[t].assign(rec_impulses + offset, rec_impulses + offset + rec_rows[t]);
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
    // the rollout (step t - 1's rows, classes and impulses; none at t = 0), which reproduces it exactly,
    // checked below. Rerun: step t's own classes, which re-solve it in its mode (to the LCP's tolerance)
    const bool recorded = rec_keys != nullptr;
    if (!recorded) {
      cd.warmKeys = keys[t];
      cd.warmClasses = classes[t];
      cd.warmImpulses.clear();  // recorded modes carry no impulses
    } else if (t > 0) {
      cd.warmKeys = keys[t - 1];
      cd.warmClasses = classes[t - 1];
      cd.warmImpulses = impulses[t - 1];  // empty for a record without impulses
    } else {
      cd.warmKeys.clear();
      cd.warmClasses.clear();
      cd.warmImpulses.clear();
    }
    contactStepCotangents(m, d, cm, cd, o, Q + o_q, V + o_v, taus + o_v, dt, nullptr, groups, explore, cq.data(),
                          cv.data(), qn.data(), vn.data(), jac, pjac, pq.data(), pv.data(), g_taus + o_v, g_params);
    if (recorded) checkReproduced(m, t, qn.data(), vn.data(), Q + o_q + nq, V + o_v + nv);
    cq.swap(pq);
    cv.swap(pv);
  }
  Eigen::Map<VecX>(g_state, nv) = cq;
  Eigen::Map<VecX>(g_state + nv, nv) = cv;
}

}  // namespace rigidiff
