// The step Jacobians of a trajectory's knots on a team of threads (iLQR's linearisation: IlqrSolver::start,
// trajectoryJacobians). The knots of a rollout come one after the other, and so do their contact warm starts:
// the step at knot t tries the classes the step at knot t - 1 left (world_data.hpp), and a cold solve can end
// in another pivoting path, or another round-off, than a warm one. So one thread, the stepper, goes through the
// knots in order, saving each knot's warm start before its step, while the others (helpers) differentiate the
// knots already reached, each in a WorldData of its own into which it restores that knot's warm start. Every
// knot is thus differentiated from the state, torques and warm start the sequential loop would give it, and
// the Jacobians are the same bit for bit whatever the thread count.
// The stepper takes a plain step (a third of the cost of a step with its Jacobians) where a helper will take
// the knot, and the step with its Jacobians itself where the helpers have more reached knots waiting than
// there are of them (or none has started: a busy machine then costs one plain step, not the whole pass); it
// then differentiates what is left beside them. worldStepJacobians takes the step worldStep takes; the end
// states of the helpers' steps are still compared with the stepper's, and the sequential loop runs again
// instead if one differs (or if any step threw), so that what is returned or thrown is always the loop's.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "rigidiff/world/thread_team.hpp"
#include "rigidiff/world/world_data.hpp"
#include "rigidiff/world/world_model.hpp"

namespace rigidiff {

/// The step Jacobians (worldStepJacobians' layout, 6 nv^2 each) of the T knots (Q[t], V[t], TAU[t]) into jac,
/// as the loop t = 0 .. T - 1 of worldStepJacobians with wd gives them, and leaving wd's warm start as that loop
/// does. The end state of knot t's step goes to row t of Qend (nq) and Vend (nv) when not null: Qend = Q + nq,
/// Vend = V + nv make the knots a rollout from (Q[0], V[0]) (Q, V of T + 1 rows). On `threads` threads (wd's
/// knot team, made on first use); threads <= 1 runs that loop itself. Throws what the loop throws.
void knotJacobians(const WorldModel& world, WorldData& wd, int threads, const double* Q, const double* V,
                   const double* TAU, int T, double* Qend, double* Vend, double* jac);

/// The threads of knotJacobians and their buffers: made once (per WorldData, WorldData::knotTeam) and kept, so
/// that an iLQR iteration starts no thread and allocates nothing once the first has sized the buffers.
class KnotTeam {
 public:
  explicit KnotTeam(int threads);
  ~KnotTeam();
  KnotTeam(const KnotTeam&) = delete;
  KnotTeam& operator=(const KnotTeam&) = delete;

  int threads() const { return team_.size(); }
  /// Calls of run so far, those that ran the sequential loop again (never expected), the knots the helpers
  /// differentiated and those the stepper did (for tests: that the team did share the work).
  long runs() const { return runs_; }
  long fallbacks() const { return fallbacks_; }
  long helperKnots() const { return helper_knots_; }
  long stepperKnots() const { return stepper_knots_; }

  /// knotJacobians on this team; false (having changed nothing) when the team is busy with another call.
  bool run(const WorldModel& world, WorldData& wd, const double* Q, const double* V, const double* TAU, int T,
           double* Qend, double* Vend, double* jac);

 private:
  /// A WorldData's contact warm start before a step: the end state it continues from and the classes,
  /// impulses and row keys of the step that ended there.
  struct alignas(64) WarmStart {
    bool known = false;
    std::vector<double> end, impulses;
    std::vector<long> keys, prevKeys;
    std::vector<contact::LcpClass> classes;
    void save(const WorldData& wd);
    void restore(WorldData& wd) const;
  };
  /// One thread's buffers, made on that thread (its own allocations, no cache line shared with another's).
  struct alignas(64) Worker {
    explicit Worker(const WorldModel& world) : wd(world) {}
    WorldData wd;
  };

  void stepThrough(const WorldModel& world, WorldData& wd, const double* Q, const double* V, const double* TAU,
                   int T, double* Qend, double* Vend, double* jac);
  /// Differentiates reached knots until every knot is claimed; `stepper` is the stepper's thread (after its pass).
  void help(const WorldModel& world, int worker, bool stepper, const double* Q, const double* V, const double* TAU,
            int T, bool stepping, double* jac);
  int claimReached(int T);

  ThreadTeam team_;
  std::vector<std::unique_ptr<Worker>> workers_;  ///< one per thread of the team, made by that thread
  std::vector<WarmStart> warm_;                   ///< per knot: wd's warm start before its step
  std::vector<double> qend_, vend_;               ///< the steps' end states when the caller keeps none
  std::vector<double> ends_;                      ///< per knot (nq + nv): where a helper's step ended
  std::unique_ptr<std::atomic<char>[]> claimed_;  ///< per knot: taken by a thread
  int capacity_ = 0;                              ///< knots the per-knot buffers hold
  long runs_ = 0, fallbacks_ = 0, helper_knots_ = 0, stepper_knots_ = 0;
  /// per knot: 0 differentiated by the stepper with its step, 1 by the stepper after its pass, 2 by a helper
  /// (1 and 2: ends_ holds where its step ended)
  std::vector<char> done_by_;
  alignas(64) std::atomic<int> reached_{0};       ///< knots whose state and warm start are ready
  std::atomic<int> claims_{0};                    ///< knots claimed so far
  std::atomic<int> helpers_{0};                   ///< helpers in their loop
  std::atomic<int> scan_{0};                      ///< no knot below this is unclaimed
  std::atomic<bool> stopped_{false};              ///< the stepper threw: the knots after it never come
  std::atomic<bool> mismatch_{false};             ///< a knot failed or ended elsewhere than the stepper's step
};

}  // namespace rigidiff
