// The loops of iLQR (rigidiff/trajopt/ilqr.py) that run in C++: the step Jacobians along a trajectory and
// the closed-loop rollout of a candidate policy, over the step the world takes (world/world_step.hpp).
// Inputs are not checked here (bind/api_world.hpp checks them).
#pragma once

#include "rigidiff/world/world_data.hpp"
#include "rigidiff/world/world_model.hpp"

namespace rigidiff {

/// Step Jacobians (worldStepJacobians' layout, 6 nv^2 each) at the first T states of Q (rows of nq) and V
/// with torques TAU. A constrained step warm-starts from the row before only when its state is that
/// row's end state (the warm start is a function of the state); the first from wd's cache, as a step. On
/// `threads` threads (world/knot_team.hpp), with the same results, bit for bit, whatever their count.
void trajectoryJacobians(const WorldModel& world, WorldData& wd, const double* Q, const double* V, const double* TAU,
                         int T, double* jac, int threads = 1);

/// iLQR's closed-loop rollout from (q0, v0): u_t = clamp(Ur[t] + alpha k[t] + K[t] dx_t, lo[t], hi[t]) with
/// dx_t = (difference(Qr[t], q_t), v_t - Vr[t]), tau_t = S u_t (S: nv x nu, row-major; K: T x nu x 2 nv,
/// row-major). Writes Q ((T + 1) x nq), V ((T + 1) x nv) and U (T x nu); its steps chain, each continuing
/// the one before.
void closedLoopRollout(const WorldModel& world, WorldData& wd, const double* q0, const double* v0, const double* Qr,
                       const double* Vr, const double* Ur, const double* k, const double* K, double alpha,
                       const double* S, int nu, const double* lo, const double* hi, int T, double* Q, double* V,
                       double* U);

}  // namespace rigidiff
