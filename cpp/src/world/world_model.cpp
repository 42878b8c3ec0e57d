#include "rigidiff/world/world_model.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace rigidiff {

int constraintReason(const Model& m, const CollisionModel& cm, const ContactOptions& o) {
  const int n = static_cast<int>(cm.geometries.size());
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (cm.allowed(m, i, j)) return kNeedsContacts;
  if (o.jointFriction && (m.friction.array() > 0.0).any()) return kNeedsJointFriction;
  if (o.jointLimits)
    for (int j = 1; j < m.njoints; ++j) {
      const JointModel& jm = m.joints[j];
      if (jm.nq == 1 && jm.nv == 1 &&
          (std::isfinite(m.lower_limit[jm.idx_q]) || std::isfinite(m.upper_limit[jm.idx_q])))
        return kNeedsJointLimits;
    }
  return kNeedsNothing;
}

void WorldModel::reset() {
  model = Model();
  cmodel = CollisionModel();
  applyWorldOptions(options, model, cmodel);
  constraint_reason = kNeedsNothing;
}

void WorldModel::refresh() {
  applyWorldOptions(options, model, cmodel);
  constraint_reason = constraintReason(model, cmodel, options.contact);
}

void refuseConstraints(const WorldModel& world) {
  const char* why = world.constraint_reason == kNeedsJointFriction
                        ? "has joint friction switched on: use integrator='semi_implicit', or "
                          "contact_options(joint_friction=False)"
                    : world.constraint_reason == kNeedsJointLimits
                        ? "has joint limits switched on: use integrator='semi_implicit', or "
                          "contact_options(joint_limits=False)"
                        : "has shapes that may touch: use integrator='semi_implicit', or remove the shapes or filter "
                          "their pairs";
  throw std::invalid_argument(std::string("integrator='rk4' is for smooth, contact-free dynamics, and this world ") +
                              why);
}

}  // namespace rigidiff
