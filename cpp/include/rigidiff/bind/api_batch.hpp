// Batches of rollouts and of step Jacobians as seen by Cython, on `threads` threads (world/parallel.hpp):
// item i's result is bitwise that of the single call (rollout, stepJacobians and their RK4, implicit and
// constrained twins) on fresh buffers, whatever the thread count. The step is the constrained one when
// cm and o are given, else the one of `integrator` (kIntegratorSemiImplicit, kIntegratorRk4 or
// kIntegratorImplicit, world/world_options.hpp).
#pragma once

#include <algorithm>

#include "rigidiff/collision/collision_model.hpp"
#include "rigidiff/multibody/data.hpp"
#include "rigidiff/multibody/model.hpp"
#include "rigidiff/world/contact_step.hpp"

namespace rigidiff {
namespace bind {

/// T constrained steps from (q0, v0) into Q ((T + 1) x nq) and V ((T + 1) x nv), each warm-started from
/// the one before (cd's cache is emptied first); after(t) runs after step t. Inputs unchecked.
template <typename After>
void contactChain(const Model& m, Data& data, const CollisionModel& cm, ContactStepData& cd, const ContactOptions& o,
                  const double* q0, const double* v0, const double* taus, int T, double dt, double* Q, double* V,
                  const After& after) {
  const long nq = m.nq, nv = m.nv;
  cd.warmClasses.clear();
  std::copy(q0, q0 + nq, Q);
  std::copy(v0, v0 + nv, V);
  for (long t = 0; t < T; ++t) {
    contactStep(m, data, cm, cd, o, Q + t * nq, V + t * nv, taus + t * nv, dt, nullptr, Q + (t + 1) * nq,
                V + (t + 1) * nv);
    after(static_cast<int>(t));
  }
}

/// N rollouts of T steps: from row i of Q0 (N x nq) and V0 (N x nv) with torques TAUS (N x T x nv), or
/// the same (T x nv) for all when sharedTaus. Writes Q (N x (T + 1) x nq) and V (N x (T + 1) x nv).
/// Each rollout warm-starts its contact solves along its own chain only, as one rollout call.
void rolloutBatch(const Model& m, const CollisionModel* cm, const ContactOptions* o, int integrator, const double* Q0,
                  const double* V0, const double* TAUS, bool sharedTaus, int N, int T, double dt, int threads,
                  double* Q, double* V);

/// N steps from the rows of Q, V, TAU with their Jacobians: Qout (N x nq), Vout (N x nv) and jac
/// (N x 6 x nv x nv, each row of the layout of stepJacobians). Every step solves its contacts cold.
void stepJacobiansBatch(const Model& m, const CollisionModel* cm, const ContactOptions* o, int integrator, const double* Q,
                        const double* V, const double* TAU, int N, double dt, int threads, double* Qout, double* Vout,
                        double* jac);

}  // namespace bind
}  // namespace rigidiff
