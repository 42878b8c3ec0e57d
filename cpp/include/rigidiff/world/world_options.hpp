// The options of a world: time step, gravity and the settings of the constraint solve. A compiled world
// owns one WorldOptions for its whole life (its Model and CollisionModel are rebuilt when the world is
// recompiled; the options are not), and the Python layer reads every option back from it.
#pragma once

#include "rigidiff/world/contact_step.hpp"

namespace rigidiff {

/// WorldOptions::integrator: semi-implicit Euler (world/step.hpp, the default), RK4 (world/rk4_step.hpp) or
/// backward Euler in the velocity (world/implicit_step.hpp).
constexpr int kIntegratorSemiImplicit = 0;
constexpr int kIntegratorRk4 = 1;
constexpr int kIntegratorImplicit = 2;

/// WorldOptions::gyroscopic: the semi-implicit step's gyroscopic term of free and ball joints, explicit (the
/// default) or implicit (world/free_joint_motion.hpp).
constexpr int kGyroscopicExplicit = 0;
constexpr int kGyroscopicImplicit = 1;

struct WorldOptions {
  double dt = 1e-3;                          ///< s, > 0
  /// m/s^2; the algorithms read Model::gravity, which the world sets from this whenever either changes
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
  ContactOptions contact;                    ///< the constraint solve (docs/contact.md)
  /// m: contacts are detected below this distance; the world copies it into each CollisionModel it builds
  double contact_margin = 0.0;
  double max_penetration = 0.03;             ///< m: a step with a deeper contact warns once (never dropped)
  /// kIntegratorSemiImplicit, kIntegratorRk4 or kIntegratorImplicit (the last two for contact-free worlds only:
  /// the Python layer refuses the others)
  int integrator = kIntegratorSemiImplicit;
  int gyroscopic = kGyroscopicExplicit;      ///< kGyroscopicExplicit or kGyroscopicImplicit
};

/// Copies the options that the compiled models hold (gravity into model, the margin into cmodel).
inline void applyWorldOptions(const WorldOptions& options, Model& model, CollisionModel& cmodel) {
  model.gravity = options.gravity;
  // the implicit step treats the gyroscopic term implicitly itself, without the semi-implicit step's maps
  model.implicit_gyroscopic = options.gyroscopic == kGyroscopicImplicit && options.integrator != kIntegratorImplicit;
  cmodel.margin = options.contact_margin;
}

}  // namespace rigidiff
