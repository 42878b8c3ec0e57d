// IPC's clamped log barrier (Li et al. 2020) and its adaptive stiffness, on SQUARED distances as IPC
// Toolkit evaluates it: with s = d^2 and shat = dhat^2,
//   b(s) = -(s - shat)^2 ln(s / shat)   for 0 < s < shat,   0 for s >= shat,
// which is C2 at shat and grows without bound as s -> 0, so a solver that decreases an energy holding
// kappa * sum b never lets two surfaces touch.
#pragma once

namespace rigidiff {

/// b(s; shat) (0 for s >= shat, +inf for s <= 0).
double barrier(double s, double shat);
/// db/ds.
double barrierFirstDerivative(double s, double shat);
/// d2b/ds2.
double barrierSecondDerivative(double s, double shat);

/// The bounds and initial value of the barrier stiffness (IPC's adaptive kappa, as IPC Toolkit's
/// initial_barrier_stiffness with d_min = 0): with d0 = (1e-8 l)^2 (l the scene's box diagonal),
/// kappa_min = 1e11 m_avg / (4 d0 b''(d0)), kappa_max = 100 kappa_min, and kappa the least-squares balance
/// -g_B . g_E / |g_B|^2 of the barrier's gradient g_B against the rest of the energy's g_E, clamped to
/// [kappa_min, kappa_max] (1 before clamping when g_B = 0). grad_dot = g_B . g_E, grad_sq = |g_B|^2.
struct BarrierStiffness {
  double kappa = 0.0, kappa_min = 0.0, kappa_max = 0.0;
};
BarrierStiffness initialBarrierStiffness(double bbox_diagonal, double shat, double average_mass, double grad_dot,
                                         double grad_sq);

/// IPC's stiffness update after a Newton iteration: doubles kappa (up to kappa_max) when the smallest squared
/// distance stays below (1e-9 l)^2 and keeps shrinking (prev_min_s, min_s: before and after the iteration).
double updateBarrierStiffness(double prev_min_s, double min_s, double kappa_max, double kappa, double bbox_diagonal);

}  // namespace rigidiff
