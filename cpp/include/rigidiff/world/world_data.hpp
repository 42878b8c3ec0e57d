// Every buffer of a world's calls (docs/architecture.md, "The world"): the multibody Data, the collision
// and constraint buffers, the RK4 and implicit steps' workspaces (made on first use) and the warm-start
// cache with the state it belongs to. Sized from a WorldModel; a pool of them (one per thread) serves one
// shared WorldModel.
#pragma once

#include <memory>
#include <vector>

#include "rigidiff/world/contact_step.hpp"
#include "rigidiff/world/implicit_step.hpp"
#include "rigidiff/world/rk4_step.hpp"
#include "rigidiff/world/world_model.hpp"

namespace rigidiff {

class KnotTeam;  // knot_team.hpp

struct WorldData {
  explicit WorldData(const WorldModel& world);
  ~WorldData();

  Data data;
  CollisionData collision;   ///< collision queries outside the step (World.contacts)
  ContactStepData contact;   ///< the constrained step's buffers and its warm-start cache
  /// The end state (q, v) of the last single constrained step, whose row classes contact keeps as the
  /// warm start: a step from exactly that state uses them, any other solves cold (warm_known false)
  std::vector<double> warm_end;
  bool warm_known = false;

  /// The RK4 workspace (with the parameter Jacobians' buffers), made on the first RK4 call: its
  /// nv x 3 nv blocks are not paid by worlds that never take an RK4 step.
  Rk4Workspace& rk4(const Model& model);
  /// The implicit step's workspace (nv x nv blocks), likewise made on the first implicit call.
  ImplicitWorkspace& implicit(const Model& model);
  /// The threads (and their own WorldData) that differentiate a trajectory's knots (knot_team.hpp), made on
  /// the first call and again when `threads` changes; a WorldData that never runs them pays nothing.
  KnotTeam& knotTeam(int threads);
  /// The knot team if one was made (for its counters), else null.
  const KnotTeam* madeKnotTeam() const { return knots_.get(); }

  /// Before a single constrained step from (q, v): keeps the warm start only if (q, v) is bitwise the end
  /// state of the step that left it, so that a step depends on its arguments alone.
  void continueFrom(const Model& model, const double* q, const double* v);
  /// After a single constrained step that ended at (q, v).
  void endAt(const Model& model, const double* q, const double* v);
  /// Forgets the end state (the model or the options changed): the next step solves cold.
  void forgetEndState() { warm_known = false; }
  /// Sizes the collision and constraint buffers for the world's collision model as it is now (after its
  /// geometries were added), with an empty warm start; the multibody buffers stay, the knot team's go.
  void resetCollision(const WorldModel& world);

 private:
  std::unique_ptr<Rk4Workspace> rk4_;
  std::unique_ptr<ImplicitWorkspace> implicit_;
  std::unique_ptr<KnotTeam> knots_;
};

}  // namespace rigidiff
