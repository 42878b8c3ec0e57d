#include "rigidiff/multibody/model.hpp"

#include <cmath>
#include <limits>

#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {
void grow(VecX& x, int n, double fill) {
  const Eigen::Index old = x.size();
  x.conservativeResize(old + n);
  x.tail(n).setConstant(fill);
}
}  // namespace

int Model::addJoint(int parent, JointType type, const SE3& placement, const Vec3& axis, const Vec3& axis2,
                    const Inertia& inertia, const std::string& name) {
  RD_CHECK_ARG(parent >= 0 && parent < njoints,
               "parent joint index " << parent << " out of range [0, " << njoints << ")");
  RD_CHECK_ARG(type != JointType::Universe, "joint " << name << ": the universe joint cannot be added");
  // depth-first order keeps every subtree's velocity coordinates contiguous
  for (int a = njoints - 1; a != parent; a = parents[a])
    RD_CHECK_ARG(a != 0, "joint " << name << ": joints must be added depth-first (parent " << parent
                                  << " is not the last joint or one of its ancestors)");
  RD_CHECK_ARG(inertia.mass >= 0.0 && std::isfinite(inertia.mass), "joint " << name << ": negative or non-finite mass");
  JointModel j = makeJoint(type, axis, axis2);
  j.idx_q = nq;
  j.idx_v = nv;
  joints.push_back(j);
  parents.push_back(parent);
  joint_placements.push_back(placement);
  const Mat3 K = skew(j.axis);  // zero but for revolute joints' use
  placed_axis_cross.push_back(placement.R * K);
  placed_axis_cross2.push_back(placement.R * K * K);
  inertias.push_back(inertia);
  inertia_matrices.push_back(inertia.matrix());
  names.push_back(name);
  subtree_nv.push_back(j.nv);
  for (int a = parent; a != 0; a = parents[a]) subtree_nv[a] += j.nv;
  for (int k = 0; k < j.nv; ++k) dof_joint.push_back(njoints);
  const double inf = std::numeric_limits<double>::infinity();
  grow(damping, j.nv, 0.0);
  grow(stiffness, j.nv, 0.0);
  grow(armature, j.nv, 0.0);
  grow(friction, j.nv, 0.0);
  grow(effort_limit, j.nv, inf);
  grow(velocity_limit, j.nv, inf);
  grow(lower_limit, j.nq, -inf);
  grow(upper_limit, j.nq, inf);
  grow(rest_position, j.nq, 0.0);
  jointNeutral(j, rest_position.data() + j.idx_q);
  nq += j.nq;
  nv += j.nv;
  return njoints++;
}

void Model::appendInertia(int j, const Inertia& inertia) {
  RD_CHECK_ARG(j >= 0 && j < njoints, "joint index " << j << " out of range");
  inertias[j] += inertia;
  inertia_matrices[j] = inertias[j].matrix();
}

int Model::addFrame(const std::string& name, int j, const SE3& placement) {
  RD_CHECK_ARG(j >= 0 && j < njoints, "frame " << name << ": joint index " << j << " out of range");
  frames.push_back(Frame{name, j, placement});
  return static_cast<int>(frames.size()) - 1;
}

}  // namespace rigidiff
