// Rollouts of the constrained step and their reverse pass: T steps that warm-start each contact solve
// from the step before, and the sweep back over a recorded rollout that re-solves every step in the
// contact mode it had (contact_step_cotangents.hpp). Inputs are not checked here (bind/ checks them).
#pragma once

#include <cstdint>
#include <vector>

#include "rigidiff/world/contact_step.hpp"
#include "rigidiff/world/step.hpp"

namespace rigidiff {

/// T constrained steps from (q0, v0) into Q ((T + 1) x nq) and V ((T + 1) x nv), each warm-started from
/// the one before (cd's cache is emptied first); after(t) runs after step t.
template <typename After>
void contactChain(const Model& m, Data& data, const CollisionModel& cm, ContactStepData& cd, const ContactOptions& o,
                  const double* q0, const double* v0, const double* taus, int T, double dt, double* Q, double* V,
                  const After& after) {
  cd.warmClasses.clear();
  int t = 0;
  chainSteps(m, q0, v0, taus, T, Q, V,
             [&](const double* q, const double* v, const double* tau, double* qn, double* vn) {
               contactStep(m, data, cm, cd, o, q, v, tau, dt, nullptr, qn, vn);
               after(t++);
             });
}

/// contactChain on buffers of its own. rows (T) receives each step's row count; unless null, keys,
/// classes and impulses receive each step's rows' warm-start keys, classes and impulses, step after step:
/// the record that lets the reverse pass re-solve every step exactly as the rollout did (a pile whose
/// clamping system has many solutions keeps the one nearest the previous impulses, so the classes alone
/// do not fix the answer).
void contactRollout(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* q0,
                    const double* v0, const double* taus, int T, double dt, double* Q, double* V, int* rows,
                    std::vector<std::int64_t>* keys, std::vector<int>* classes, std::vector<double>* impulses);

/// The reverse pass of a constrained rollout (Q, V: T + 1 states, taus: T torques) for the cotangents GQ
/// (tangent space) and GV of every state: writes g_taus (T x nv), g_state (2 nv: q0 tangent, v0) and
/// g_params (contactParameterCount(groups)). rows, keys, classes and impulses: the record of contactRollout,
/// or null to rerun the rollout first (impulses alone may be null: a record without them). Each recomputed
/// step must reproduce its recorded successor (runtime_error otherwise: the model changed);
/// invalid_argument for a malformed record.
void contactRolloutBackward(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* Q,
                            const double* V, const double* taus, int T, double dt, const double* GQ,
                            const double* GV, int groups, bool explore, double* g_taus, double* g_state,
                            double* g_params, const int* rows, const std::int64_t* keys, const int* classes,
                            const double* impulses);

}  // namespace rigidiff
