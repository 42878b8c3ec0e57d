// The options of a world: time step, gravity and the settings of the constraint solve. A compiled world
// owns one WorldOptions for its whole life (its Model and CollisionModel are rebuilt when the world is
// recompiled; the options are not), and the Python layer reads every option back from it.
#pragma once

#include "rigidiff/world/contact_step.hpp"

namespace rigidiff {

struct WorldOptions {
  double dt = 1e-3;                          ///< s, > 0
  /// m/s^2; the algorithms read Model::gravity, which the world sets from this whenever either changes
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
  ContactOptions contact;                    ///< the constraint solve (docs/contact.md)
  /// m: contacts are detected below this distance; the world copies it into each CollisionModel it builds
  double contact_margin = 0.0;
  double max_penetration = 0.03;             ///< m: a step with a deeper contact warns once (never dropped)
};

/// Copies the options that the compiled models hold (gravity into model, the margin into cmodel).
inline void applyWorldOptions(const WorldOptions& options, Model& model, CollisionModel& cmodel) {
  model.gravity = options.gravity;
  cmodel.margin = options.contact_margin;
}

}  // namespace rigidiff
