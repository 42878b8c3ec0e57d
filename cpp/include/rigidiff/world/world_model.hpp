// What a world is (docs/architecture.md, "The world"): the multibody model, the collision model and the
// options, with the step they call for. A WorldModel is built by the Python World's compile, then only
// read while it steps, so threads may share it; every buffer lives in a WorldData (world_data.hpp).
#pragma once

#include <string>
#include <vector>

#include "rigidiff/collision/collision_model.hpp"
#include "rigidiff/multibody/model.hpp"
#include "rigidiff/world/world_options.hpp"

namespace rigidiff {

/// Why a world's step needs constraint rows: kNeedsNothing, or the first reason found.
constexpr int kNeedsNothing = 0, kNeedsContacts = 1, kNeedsJointFriction = 2, kNeedsJointLimits = 3;

/// Which step a world takes (stepKind).
enum class StepKind : int { SemiImplicit = 0, Rk4 = 1, Implicit = 2, Constrained = 3 };

/// Why the step of (model, cmodel) under options o needs constraint rows: kNeedsContacts (a pair of
/// shapes that may touch), kNeedsJointFriction (switched on, and a joint has friction), kNeedsJointLimits
/// (switched on, and a one-dof joint has a finite limit), else kNeedsNothing.
int constraintReason(const Model& model, const CollisionModel& cmodel, const ContactOptions& o);

/// A body of the world that moves with a joint of the model: the joint's own body, or one welded to it
/// (through fixed joints). A joint's inertia is its own body's plus its welded bodies', in body order.
struct BodyPart {
  int joint = 0;     ///< the model joint the body moves with (>= 1)
  bool own = false;  ///< the joint's own body (its frame is the joint frame), else a welded one
  Inertia inertia;   ///< in the joint frame
};

/// What a block of the state holds.
enum class BlockKind : int { Skeleton = 0, Particles = 1 };

/// A named block of the state: q[q_begin, q_begin + nq) and v[v_begin, v_begin + nv) belong to one
/// skeleton or one particle set (world.layout(name)).
struct StateBlock {
  std::string name;
  BlockKind kind = BlockKind::Skeleton;
  int q_begin = 0, nq = 0, v_begin = 0, nv = 0;
};

struct WorldModel {
  Model model;
  CollisionModel cmodel;
  /// dt, gravity, the contact settings and the integrator: their only copy; they outlive a rebuild
  /// (reset) and are copied into each new Model and CollisionModel (applyWorldOptions)
  WorldOptions options;
  /// constraintReason of the model as built and the options as set: refreshed by refresh()
  int constraint_reason = kNeedsNothing;

  /// The moving bodies, in the order they were added (addBodyPart).
  std::vector<BodyPart> body_parts;
  /// The state layout: one block per skeleton and particle set, in state order (addStateBlock).
  std::vector<StateBlock> blocks;

  /// Starts a new, empty model and collision model under the current options.
  void reset();
  /// Adds a body moving with joint j, its inertia in the joint frame, and returns its index. The joint's
  /// own body (own: its inertia is the one the joint was added with) comes first; a welded body's
  /// inertia is added to the joint's. A body welded to the world (j = 0) adds its inertia to the world's
  /// (total mass, centre of mass, energy) and is not kept (-1): it never moves.
  int addBodyPart(int j, const Inertia& inertia, bool own);
  /// Appends the block of the next nq coordinates and nv velocities (after the blocks before it; the
  /// blocks must tile the model's q and v by finalize time) and returns its index. invalid_argument for a
  /// duplicate name or negative sizes.
  int addStateBlock(const std::string& name, BlockKind kind, int nq, int nv);
  /// The index of the block called name, or -1.
  int findStateBlock(const std::string& name) const;
  /// Replaces body b's inertia and recomputes its joint's from the joint's bodies (own first, then the
  /// welded ones in order, those without mass or rotational inertia skipped, as addBodyPart adds them).
  void setBodyPartInertia(int b, const Inertia& inertia);
  /// Recomputes constraint_reason and copies the options into the models (after building them, or after
  /// changing the options).
  void refresh();
  bool constrained() const { return constraint_reason != kNeedsNothing; }
};

/// Throws the std::invalid_argument of an integrator (RK4, implicit) that cannot take the world's constraint
/// rows, naming the reason.
[[noreturn]] void refuseConstraints(const WorldModel& world);

/// The step the world takes: the constrained step when it needs constraint rows, else its integrator's.
/// std::invalid_argument, naming the reason, for an integrator that cannot take constraint rows.
inline StepKind stepKind(const WorldModel& world) {
  const int integrator = world.options.integrator;
  if (world.constrained()) {
    if (integrator != kIntegratorSemiImplicit) refuseConstraints(world);
    return StepKind::Constrained;
  }
  return integrator == kIntegratorRk4        ? StepKind::Rk4
         : integrator == kIntegratorImplicit ? StepKind::Implicit
                                             : StepKind::SemiImplicit;
}

}  // namespace rigidiff
