#include "rigidiff/world/world_model.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "rigidiff/macros.hpp"

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
      // a planar joint's x and y too: the contact step refuses their limits rather than ignore them
      int dofs[3] = {0, 1, 2};
      const int n = jm.type == JointType::Planar ? 3 : linearlyLimitedDofs(jm, dofs);
      for (int k = 0; k < n; ++k)
        if (std::isfinite(m.lower_limit[jm.idx_q + dofs[k]]) || std::isfinite(m.upper_limit[jm.idx_q + dofs[k]]))
          return kNeedsJointLimits;
    }
  return kNeedsNothing;
}

namespace {

// a welded body adds nothing to its joint (and is skipped, as the Python compile skips it)
bool empty(const Inertia& I) { return I.mass <= 0.0 && I.Ic.isZero(0.0); }

}  // namespace

int WorldModel::addBodyPart(int j, const Inertia& inertia, bool own) {
  RD_CHECK_ARG(j >= (own ? 1 : 0) && j < model.njoints,
               "body part: joint index " << j << " out of range [" << (own ? 1 : 0) << ", " << model.njoints << ")");
  if (!own && !empty(inertia)) model.appendInertia(j, inertia);
  if (j == 0) return -1;  // welded to the world: counted in its mass, never changed (not a parameter)
  body_parts.push_back({j, own, inertia});
  return static_cast<int>(body_parts.size()) - 1;
}

void WorldModel::setBodyPartInertia(int b, const Inertia& inertia) {
  RD_CHECK_ARG(b >= 0 && b < static_cast<int>(body_parts.size()),
               "body index " << b << " out of range [0, " << body_parts.size() << ")");
  body_parts[b].inertia = inertia;
  const int j = body_parts[b].joint;
  bool first = true;
  for (const BodyPart& part : body_parts) {
    if (part.joint != j) continue;
    if (part.own) {
      model.inertias[j] = part.inertia;
      first = false;
    } else if (!empty(part.inertia)) {
      RD_CHECK_ARG(!first, "joint " << j << ": its own body must be added before the bodies welded to it");
      model.inertias[j] += part.inertia;
    }
  }
  model.inertia_matrices[j] = model.inertias[j].matrix();
}

int WorldModel::addStateBlock(const std::string& name, BlockKind kind, int nq, int nv) {
  RD_CHECK_ARG(nq >= 0 && nv >= 0, "state block " << name << ": sizes must be >= 0, got nq = " << nq << ", nv = " << nv);
  RD_CHECK_ARG(findStateBlock(name) < 0, "state block " << name << " exists already");
  StateBlock block{name, kind, 0, nq, 0, nv};
  if (!blocks.empty()) {
    block.q_begin = blocks.back().q_begin + blocks.back().nq;
    block.v_begin = blocks.back().v_begin + blocks.back().nv;
  }
  blocks.push_back(block);
  return static_cast<int>(blocks.size()) - 1;
}

int WorldModel::findStateBlock(const std::string& name) const {
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (blocks[b].name == name) return static_cast<int>(b);
  return -1;
}

void WorldModel::reset() {
  body_parts.clear();
  blocks.clear();
  model = Model();
  cmodel = CollisionModel();
  applyWorldOptions(options, model, cmodel);
  constraint_reason = kNeedsNothing;
}

void WorldModel::refresh() {
  const StateBlock* last = blocks.empty() ? nullptr : &blocks.back();
  RD_CHECK_ARG(!last || (last->q_begin + last->nq == model.nq && last->v_begin + last->nv == model.nv),
               "the state blocks cover " << (last ? last->q_begin + last->nq : 0) << " coordinates and "
                                         << (last ? last->v_begin + last->nv : 0) << " velocities of the model's "
                                         << model.nq << " and " << model.nv);
  applyWorldOptions(options, model, cmodel);
  constraint_reason = constraintReason(model, cmodel, options.contact);
  // the contact layer's kind of each geometry's body: a joint whose dofs lie in a particle block is a particle
  for (Geometry& g : cmodel.geometries) {
    if (g.joint == 0) continue;
    const int v = model.joints[g.joint].idx_v;
    bool particle = false;
    for (const StateBlock& block : blocks)
      particle = particle || (block.kind == BlockKind::Particles && v >= block.v_begin && v < block.v_begin + block.nv);
    // the identity point map holds for a translation in world axes attached to the world
    RD_CHECK_ARG(!particle || (model.joints[g.joint].type == JointType::Translational && model.parents[g.joint] == 0 &&
                               model.joint_placements[g.joint].R.isIdentity(0.0)),
                 "geometry " << g.name << ": a particle's joint must be a translation in world axes on the world");
    g.body = {particle ? BodyKind::Particle : BodyKind::Articulated, g.joint};
  }
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
  const char* name = world.options.integrator == kIntegratorRk4 ? "rk4" : "implicit";
  throw std::invalid_argument(std::string("integrator='") + name +
                              "' is for smooth, contact-free dynamics, and this world " + why);
}

}  // namespace rigidiff
