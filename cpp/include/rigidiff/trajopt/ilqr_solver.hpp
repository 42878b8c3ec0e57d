// iLQR over a world's exact step Jacobians with every loop in C++ (the algorithm of trajopt/ilqr.py):
// the rollout of the first guess with its step Jacobians in one pass, the cost terms along the whole
// trajectory (cost_terms.hpp), the Riccati backward pass (riccati.hpp) and the line search's
// closed-loop rollouts. Made once per problem; a solve (start, then iterate) reuses every buffer.
#pragma once

#include <vector>

#include "rigidiff/trajopt/cost_terms.hpp"
#include "rigidiff/world/world_data.hpp"
#include "rigidiff/world/world_model.hpp"

namespace rigidiff {

/// What one iLQR iteration did.
enum class IlqrStep : int {
  Accepted = 0,       ///< a step was accepted; iterate again
  Converged = 1,      ///< a step was accepted and the relative cost decrease fell below tol
  NoDecrease = 2,     ///< no step accepted, the model predicts none: a (local) minimum
  Failed = 3,         ///< no step accepted at any regularisation tried
};

class IlqrSolver {
 public:
  /// A problem of T steps on a world of nq, nv; the controls u (nu) drive the torques tau = S u (S: nv x nu,
  /// row-major) within lo <= u <= hi (T x nu each, +-inf for none).
  IlqrSolver(int T, int nq, int nv, const double* S, int nu, const double* lo, const double* hi);

  TrajectoryCosts costs;

  /// Rolls the torques guess (T x nv; its actuated part, clamped into the bounds, is the first U) out
  /// from (q0, v0) with the step Jacobians in the same pass; mu starts the regularisation. False when
  /// the rollout diverged (a step threw or a state is not finite).
  bool start(const WorldModel& world, WorldData& wd, const double* q0, const double* v0, const double* guess,
             double mu);
  /// One iteration: linearise (unless start just did), backward pass, line search.
  IlqrStep iterate(const WorldModel& world, WorldData& wd, double tol);
  /// The threads that differentiate the knots in start and in each linearisation (world/knot_team.hpp; 1, the
  /// default: the calling thread alone). The results are the same, bit for bit, whatever the count.
  void setThreads(int threads);
  int threads() const { return threads_; }

  double cost() const { return cost_; }
  double dynamicsSeconds() const { return dynamics_seconds_; }
  bool hasGains() const { return has_gains_; }
  const std::vector<double>& Q() const { return Q_; }    ///< (T + 1) x nq
  const std::vector<double>& V() const { return V_; }    ///< (T + 1) x nv
  const std::vector<double>& U() const { return U_; }    ///< T x nu
  const std::vector<double>& K() const { return K_kept_; }  ///< T x nu x 2nv gains of the last accepted step
  int nu() const { return nu_; }

 private:
  bool rollout(const WorldModel& world, WorldData& wd, double alpha);
  void torques(const std::vector<double>& U, std::vector<double>& tau) const;
  void linearise(const WorldModel& world, WorldData& wd);
  void fillModel();

  int T_, nq_, nv_, nu_, threads_ = 1;
  std::vector<double> S_;  // nv x nu, row-major
  std::vector<double> lo_, hi_;
  bool bounded_;
  std::vector<double> q0_, v0_;
  std::vector<double> Q_, V_, U_, tau_, Qt_, Vt_, Ut_, taut_;  // the plan, then a line-search trial
  std::vector<double> jac_, A_, B_, lx_, lxx_, lu_, luu_, gq_, gv_, gtau_, huu_, dlo_, dhi_;
  std::vector<double> k_, K_, k_start_, K_kept_;
  double cost_ = 0.0, trial_cost_ = 0.0, mu_ = 1e-6, dynamics_seconds_ = 0.0;
  bool linearised_ = false, has_gains_ = false;
};

}  // namespace rigidiff
