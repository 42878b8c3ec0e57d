// The model shared by the C++ test programs: a free base carrying branches of every joint type,
// with frames and passive terms (the universal joint only when asked: the dynamics derivatives do
// not cover it yet).
#pragma once

#include "rigidiff/multibody/model.hpp"

inline rigidiff::Model buildEveryJointModel(bool with_universal = true) {
  using namespace rigidiff;
  Model m;
  Inertia I(1.3, Vec3(0.1, -0.05, 0.2), Vec3(0.02, 0.03, 0.04).asDiagonal());
  SE3 off(axisAngle(Vec3(0.3, 0.5, 0.8).normalized(), 0.4), Vec3(0.1, 0.2, -0.3));
  int base = m.addJoint(0, JointType::Free, SE3(), Vec3::UnitZ(), Vec3::UnitY(), I, "base");
  int a = m.addJoint(base, JointType::Revolute, off, Vec3(0.2, 1.0, 0.1), Vec3::UnitY(), I, "rev");
  m.addJoint(a, JointType::Prismatic, off, Vec3(1.0, 0.0, 0.3), Vec3::UnitY(), I, "pri");
  int b = m.addJoint(base, JointType::Ball, off, Vec3::UnitZ(), Vec3::UnitY(), I, "ball");
  if (with_universal) m.addJoint(b, JointType::Universal, off, Vec3::UnitX(), Vec3(0.0, 1.0, 0.2), I, "uni");
  int c = m.addJoint(base, JointType::Planar, off, Vec3(0.0, 0.3, 1.0), Vec3::UnitY(), I, "planar");
  m.addJoint(c, JointType::Translational, off, Vec3::UnitZ(), Vec3::UnitY(), I, "trans");
  for (int j = 1; j < m.njoints; ++j) m.addFrame(m.names[j], j, off);
  m.damping.setConstant(0.1);
  m.stiffness.setConstant(2.0);
  m.armature.setConstant(0.01);
  return m;
}
