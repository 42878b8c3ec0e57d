// Reverse mode of the recursive Newton-Euler algorithm: vector-Jacobian products of the rigid-body
// torques in O(n), without forming any Jacobian.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// For tau_rb(q, v, a, theta, g) the rigid-body terms of rnea (armature and external wrenches
/// excluded) and a cotangent lambda (dim model.nv), writes
///   g_q = (d tau_rb / dq)^T lambda (tangent space, dim nv), g_v = (d tau_rb / dv)^T lambda (nv),
///   g_theta = Y^T lambda (10 (njoints - 1), parameters of regressor.hpp), g_gravity (3).
/// Any output may be nullptr. The adjoint sweeps run in joint frames: the cotangent of the joint
/// forces is the motion fbar_i = X_i fbar_parent + S_i lambda_i (top-down), then the cotangents of
/// accelerations and velocities flow bottom-up; a joint perturbation d rotates its frame by
/// exp(S d), so dX_i / dq_ik = -(S_k x) X_i.
/// Universal joints are not supported (invalid_argument).
void rneaVJP(const Model& model, Data& data, const double* q, const double* v, const double* a, const double* lambda,
             double* g_q, double* g_v, double* g_theta, double* g_gravity);

}  // namespace rigidiff
