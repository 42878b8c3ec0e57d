// The calls of a world (world_model.hpp), each over the step the world takes (stepKind): the
// semi-implicit step (step.hpp), RK4 (rk4_step.hpp) or the constrained step (contact_step.hpp). The
// single-state calls use the caller's WorldData and keep its warm start only when (q, v) continues the
// last step (WorldData::continueFrom); rollouts, their reverse passes and the batches make WorldData of
// their own (one per thread), so that they may run while the caller's serves other calls. Inputs are not
// checked here: bind/api_world.hpp checks them.
#pragma once

#include <cstdint>
#include <vector>

#include "rigidiff/world/world_data.hpp"
#include "rigidiff/world/world_model.hpp"

namespace rigidiff {

/// Columns of the parameter Jacobians for `groups`: the model's (bits 1..16), then per geometry its
/// friction (32) and restitution (64), whose columns are zero for a world without constraints.
int worldParameterCount(const WorldModel& world, int groups);

void worldStep(const WorldModel& world, WorldData& wd, const double* q, const double* v, const double* tau,
               const double* fext, double* q_out, double* v_out);
/// jac: 6 column-major nv x nv blocks (dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv, dv_dtau); pjac, unless null:
/// dq_dp then dv_dp, row-major nv x worldParameterCount(groups).
void worldStepJacobians(const WorldModel& world, WorldData& wd, const double* q, const double* v, const double* tau,
                        const double* fext, int groups, double* q_out, double* v_out, double* jac, double* pjac);
/// One step and J^T (gq, gv) (gq in the tangent space); outputs overwritten: g_state (2 nv: q tangent, v),
/// g_tau (nv), g_params (worldParameterCount(groups)). explore: also the loss-driven contact mode
/// (contact_step_cotangents.hpp).
void worldStepVJP(const WorldModel& world, WorldData& wd, const double* q, const double* v, const double* tau,
                  const double* fext, const double* gq, const double* gv, int groups, bool explore, double* q_out,
                  double* v_out, double* g_state, double* g_tau, double* g_params);
/// T steps into Q ((T + 1) x nq) and V. For a constrained world, rows (T) receives each step's row count
/// and, unless null, keys, classes and impulses each step's rows' warm-start keys, classes and impulses.
void worldRollout(const WorldModel& world, const double* q0, const double* v0, const double* taus, int T, double* Q,
                  double* V, int* rows, std::vector<std::int64_t>* keys, std::vector<int>* classes,
                  std::vector<double>* impulses);
/// Reverse pass of a rollout (Q, V: T + 1 states); outputs overwritten: g_taus (T x nv), g_state (2 nv),
/// g_params. rows, keys, classes and impulses: what worldRollout recorded, or null.
void worldRolloutBackward(const WorldModel& world, const double* Q, const double* V, const double* taus, int T,
                          const double* GQ, const double* GV, int groups, bool explore, double* g_taus,
                          double* g_state, double* g_params, const int* rows, const std::int64_t* keys,
                          const int* classes, const double* impulses);

/// N independent steps from the rows of Q, V, TAU on `threads` threads; every constrained one solves
/// cold, as step() from a state no step ended at, so that no row depends on the others or on the order.
void worldStepBatch(const WorldModel& world, const double* Q, const double* V, const double* TAU, int N, int threads,
                    double* Qout, double* Vout);
/// N rollouts of T steps from the rows of Q0, V0, with torques TAUS (N x T x nv), or the same (T x nv) for
/// all when sharedTaus; each warm-starts along its own chain only, as one rollout.
void worldRolloutBatch(const WorldModel& world, const double* Q0, const double* V0, const double* TAUS,
                       bool sharedTaus, int N, int T, int threads, double* Q, double* V);
/// N step Jacobians (layout of worldStepJacobians, N blocks of 6 nv^2), each solved cold.
void worldStepJacobiansBatch(const WorldModel& world, const double* Q, const double* V, const double* TAU, int N,
                             int threads, double* Qout, double* Vout, double* jac);

}  // namespace rigidiff
