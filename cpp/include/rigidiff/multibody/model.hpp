// Model: the immutable description of a kinematic tree (joints, placements, inertias, passive
// terms, frames). Built once, then shared read-only by any number of Data objects and threads.
#pragma once

#include <string>
#include <vector>

#include "rigidiff/multibody/joint.hpp"
#include "rigidiff/spatial/inertia.hpp"

namespace rigidiff {

/// A named frame rigidly attached to a joint (a user body, merged bodies included).
struct Frame {
  std::string name;
  int joint = 0;                                    ///< supporting joint (0: the world)
  SE3 placement = SE3::Identity();                  ///< pose of the frame in the joint frame
};

/// Joints are indexed 1..njoints-1 in depth-first order (0 is the world); a subtree's velocity
/// coordinates are contiguous: [idx_v, idx_v + subtree_nv).
struct Model {
  int nq = 0;
  int nv = 0;
  int njoints = 1;

  std::vector<JointModel> joints{JointModel()};     ///< (njoints)
  std::vector<int> parents{0};                      ///< (njoints) parent joint index
  std::vector<SE3> joint_placements{SE3()};         ///< (njoints) joint frame in the parent joint frame
  std::vector<Inertia> inertias{Inertia()};         ///< (njoints) body inertia in the joint frame
  std::vector<Mat6> inertia_matrices{Mat6::Zero()}; ///< (njoints) the same as 6x6 matrices
  /// (njoints) for revolute joints, R_p [a]x and R_p [a]x^2 (R_p: the placement's rotation, a: the unit
  /// axis), so that the placed joint rotation is R_p + sin(q) R_p [a]x + (1 - cos(q)) R_p [a]x^2
  std::vector<Mat3> placed_axis_cross{Mat3::Zero()}, placed_axis_cross2{Mat3::Zero()};
  std::vector<std::string> names{"universe"};       ///< (njoints)
  std::vector<int> subtree_nv{0};                   ///< (njoints) dofs of the joint's subtree, itself included
  std::vector<int> dof_joint;                       ///< (nv) joint owning each velocity coordinate
  std::vector<Frame> frames;                        ///< user bodies, in user order

  VecX damping, stiffness, armature, friction, effort_limit, velocity_limit;  ///< (nv) per dof
  /// The step treats the gyroscopic term of free and ball joints that carry a single body on a static parent
  /// implicitly (world/free_joint_motion.hpp); set from WorldOptions::gyroscopic.
  bool implicit_gyroscopic = false;
  VecX lower_limit, upper_limit, rest_position;  ///< (nq)
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);

  /// Appends a joint (depth-first: parent must be the last joint or one of its ancestors).
  /// Returns the new joint index. Passive terms default to zero, limits to +-inf.
  int addJoint(int parent, JointType type, const SE3& placement, const Vec3& axis, const Vec3& axis2,
               const Inertia& inertia, const std::string& name);
  /// Adds a rigidly attached body's inertia (expressed in the joint frame) to joint j.
  void appendInertia(int j, const Inertia& inertia);
  /// Adds a frame attached to joint j. Returns its index.
  int addFrame(const std::string& name, int j, const SE3& placement);

  /// True if joint a is joint b or one of its ancestors.
  bool supports(int a, int b) const {
    const JointModel& ja = joints[a];
    const JointModel& jb = joints[b];
    return a == 0 || (jb.idx_v >= ja.idx_v && jb.idx_v < ja.idx_v + subtree_nv[a]);
  }
};

}  // namespace rigidiff
