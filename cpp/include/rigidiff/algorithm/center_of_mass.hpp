// Centre of mass of the whole model and its Jacobian.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Centre of mass (world) of all bodies, welded ones included; fills data.mass_sub / com_sub
/// (per-subtree mass and world centre of mass; index 0 = whole model). Runs forward kinematics.
Vec3 centerOfMass(const Model& model, Data& data, const double* q);
/// Also fills data.Jcom (3 x model.nv), d com / dt = Jcom v.
void jacobianCenterOfMass(const Model& model, Data& data, const double* q);

}  // namespace rigidiff
