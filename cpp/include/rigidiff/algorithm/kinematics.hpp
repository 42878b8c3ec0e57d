// Forward kinematics: joint placements, spatial velocities and accelerations of every joint frame.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Fills data.liMi, data.oMi and data.S at q (dim model.nq).
void forwardKinematics(const Model& model, Data& data, const double* q);
/// Also fills data.v, data.vJ and data.c (bias) for the velocity v (dim model.nv).
void forwardKinematics(const Model& model, Data& data, const double* q, const double* v);
/// Also fills data.a (gravity excluded) for the acceleration a (dim model.nv).
void forwardKinematics(const Model& model, Data& data, const double* q, const double* v, const double* a);

/// Pose of frame f in the world (after forwardKinematics).
inline SE3 framePlacement(const Model& model, const Data& data, int f) {
  const Frame& fr = model.frames[f];
  return data.oMi[fr.joint] * fr.placement;
}

/// Converts world-axes wrenches at the frame origins (nframes x 6, row-major, (force, torque)) into
/// data.fext, the per-joint wrenches in joint frames. Needs data.oMi.
void externalWrenchesFromFrames(const Model& model, Data& data, const double* frame_wrenches);

}  // namespace rigidiff
