// Derivatives of the joint torques of external wrenches, -sum_b J_b(q)^T w_b, with respect to q. Each
// wrench w_b = (force, torque) is given in world axes at the origin of frame b and keeps its world
// components while the frame (its point of application) moves.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Adds d(-sum_b J_b^T w_b)/dq (tangent space) to D (model.nv x model.nv). frame_wrenches is
/// (nframes x 6, row-major). With S the world-frame subspaces (at the world origin), W_b the wrench
/// at the world origin and A, U the angular and linear rows of the frame's world-aligned Jacobian,
///   d(J_b^T w_b)_m / dq_k = -S_m . (S_k x* W_b)   (k's joint an ancestor of, or m's joint)
///                           - (A^T [f]x U)_mk.
/// Runs forward kinematics and fills data.J at q.
void addExternalWrenchDerivatives(const Model& model, Data& data, const double* q, const double* frame_wrenches,
                                  MatX& D);

/// Adds lambda^T d(-sum_b J_b^T w_b)/dq (tangent space, dim model.nv) to g, in O(n depth): the
/// derivative of -sum_b w_b . (J_b lambda). Runs forward kinematics and fills data.J at q.
void addExternalWrenchVJP(const Model& model, Data& data, const double* q, const double* frame_wrenches,
                          const double* lambda, double* g);

}  // namespace rigidiff
