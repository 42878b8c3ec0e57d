// Joint models: the transform, motion subspace and bias of every joint type, and their
// configuration-manifold operations (integrate, difference). Coordinates: docs/conventions.md.
#pragma once

#include "rigidiff/spatial/explog.hpp"

namespace rigidiff {

/// Joint type codes (shared with rigidiff/joints.py). Fixed joints never reach the core: the
/// model compiler merges the bodies they weld.
enum class JointType : int {
  Universe = 0,
  Revolute = 1,       // nq 1, nv 1: angle about axis
  Prismatic = 2,      // nq 1, nv 1: offset along axis
  Ball = 3,           // nq 4 (x, y, z, w), nv 3: angular velocity in the child frame
  Free = 4,           // nq 7 (xyz, quaternion xyzw), nv 6: (linear, angular) in the child frame
  Planar = 5,         // nq 3 (x, y, theta), nv 3: (vx, vy, wz) in the child frame
  Universal = 6,      // nq 2, nv 2: about axis, then about axis2
  Translational = 7,  // nq 3, nv 3: along the joint-frame axes
};

/// One joint of a Model: its type, axes and where its coordinates sit in q and v.
struct JointModel {
  JointType type = JointType::Universe;
  int idx_q = 0, idx_v = 0, nq = 0, nv = 0;
  Vec3 axis = Vec3::UnitZ();                    // revolute / prismatic axis, universal axis1, planar normal
  Vec3 axis2 = Vec3::UnitY();                   // universal axis2
  Vec3 e1 = Vec3::UnitX(), e2 = Vec3::UnitY();  // planar in-plane axes (e1 x e2 = normal)

  /// True when the motion subspace depends on q (its columns must be recomputed per call).
  bool variableSubspace() const { return type == JointType::Universal; }
};

/// The dofs k (0 <= k < nv) of a joint whose coordinate q[idx_q + k] a step moves by dt v[idx_v + k] alone, so that
/// a position limit on it is a constant row of the contact step: a revolute or prismatic joint's one, a
/// translational joint's three, a planar joint's angle (its x and y move along the turning child frame). Writes
/// them to `dofs`; returns how many.
inline int linearlyLimitedDofs(const JointModel& j, int dofs[3]) {
  switch (j.type) {
    case JointType::Revolute:
    case JointType::Prismatic: dofs[0] = 0; return 1;
    case JointType::Translational: dofs[0] = 0, dofs[1] = 1, dofs[2] = 2; return 3;
    case JointType::Planar: dofs[0] = 2; return 1;
    default: return 0;
  }
}

/// Builds a joint of the given type; axis/axis2 are normalised. Throws invalid_argument on bad axes.
JointModel makeJoint(JointType type, const Vec3& axis, const Vec3& axis2);
/// nq and nv of a joint type.
void jointDims(JointType type, int& nq, int& nv);

/// Pose of the child frame in the joint frame at the joint's coordinates q (dim nq).
SE3 jointTransform(const JointModel& j, const double* q);
/// Motion subspace S (6 x nv, column-major, child frame) at q.
void jointSubspace(const JointModel& j, const double* q, double* S);
/// Bias acceleration c = dS/dt qdot (zero unless the subspace varies with q).
Vec6 jointBias(const JointModel& j, const double* q, const double* v);

/// How a tangent vector dv moves a configuration (docs/conventions.md).
enum class Motion : int {
  /// The joint group's exponential q (+) dv: a free joint moves as M exp6(dv) on SE(3) (Pinocchio's
  /// integrate). Perturbations of q in derivatives, integrate and difference use it.
  Group = 0,
  /// The time step's position update: as Group, except that a free joint moves on R^3 x SO(3),
  /// p' = p + R dv_lin, R' = R exp3(dv_ang), so that a body translates along its velocity at the start
  /// of the step (a rolling body's centre does not swing down on the screw of its twist).
  Step = 1,
};

/// q_out = q (+) dv on the joint's configuration manifold (dim nq, nv, nq), moved as `motion` says.
void jointIntegrate(const JointModel& j, const double* q, const double* dv, double* q_out,
                    Motion motion = Motion::Group);
/// d = q1 (-) q0, the tangent vector with q0 (+) d = q1 (dim nv).
void jointDifference(const JointModel& j, const double* q0, const double* q1, double* d);
/// Neutral configuration (zeros, identity quaternions).
void jointNeutral(const JointModel& j, double* q);

}  // namespace rigidiff
