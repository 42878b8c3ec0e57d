// Joint and frame Jacobians and their time derivatives.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Reference frame of a frame Jacobian: rows (linear, angular).
enum class ReferenceFrame : int {
  LocalWorldAligned = 0,  ///< velocity of the frame origin and angular velocity, in world axes
  Local = 1,              ///< the same, in the frame's own axes
};

/// Fills data.J (6 x model.nv): every joint's motion-subspace columns in the world frame
/// (spatial velocity at the world origin). Runs forward kinematics at q.
void computeJointJacobians(const Model& model, Data& data, const double* q);
/// Also fills data.dJ, the time derivative of data.J along v.
void computeJointJacobiansTimeVariation(const Model& model, Data& data, const double* q, const double* v);

/// Jacobian (6 x model.nv, column-major out) of frame f from data.J (after computeJointJacobians).
void frameJacobian(const Model& model, const Data& data, int f, ReferenceFrame rf, double* out);
/// Its time derivative (after computeJointJacobiansTimeVariation).
void frameJacobianTimeVariation(const Model& model, const Data& data, int f, ReferenceFrame rf, double* out);

}  // namespace rigidiff
