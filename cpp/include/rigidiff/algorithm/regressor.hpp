// Inertial parameters and the inverse-dynamics regressor: rigid-body torques are linear in the
// 10 inertial parameters of every body, tau = Y(q, v, a) theta.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

using Mat6x10 = Eigen::Matrix<double, 6, 10>;
using Vec10 = Eigen::Matrix<double, 10, 1>;

/// The 10 inertial parameters of an inertia expressed in frame f: mass m, first moment h = m c and
/// the rotational inertia about f's origin (xx, xy, xz, yy, yz, zz).
Vec10 inertiaParameters(const Inertia& I);

/// Body regressor: the spatial force I a + v x* (I v) = A(v, a) theta for the parameters theta of
/// inertiaParameters, with v and a (linear, angular) in the same frame as theta.
Mat6x10 bodyRegressor(const Vec6& v, const Vec6& a);

/// Fills data.Yreg (model.nv x 10 (njoints - 1)) with the regressor of the rigid-body terms of
/// rnea (gravity included; armature and external wrenches excluded): tau = Y theta, where theta
/// stacks the inertiaParameters of joints 1..njoints-1 (their merged body inertias in joint frames).
/// Universal joints are not supported (invalid_argument).
const MatX& inverseDynamicsRegressor(const Model& model, Data& data, const double* q, const double* v, const double* a);

}  // namespace rigidiff
