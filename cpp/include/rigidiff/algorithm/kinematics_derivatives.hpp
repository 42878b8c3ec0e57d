// Analytic derivatives of kinematic quantities: body velocities and accelerations, Jacobian products
// and the centre-of-mass velocity, with respect to q (tangent space), v and a.
#pragma once

#include "rigidiff/algorithm/jacobian.hpp"

namespace rigidiff {

/// Derivatives of the spatial velocity (linear, angular) of frame f, in rf, with respect to q and v:
/// dv_dq and dv_dv (6 x model.nv, column-major; dv_dv is the frame Jacobian). dv_dq is also the
/// derivative of the product J(q) x with respect to q for x = v. In the world frame, with S_k the
/// world-frame subspace of dof k and lambda the parent of k's joint, d ov_b / dq_k = S_k x (ov_b - ov_lambda).
void frameVelocityDerivatives(const Model& model, Data& data, const double* q, const double* v, int f,
                              ReferenceFrame rf, double* dv_dq, double* dv_dv);

/// Derivatives of the spatial acceleration of frame f (as frameAccelerations: the time derivative of the
/// body-fixed spatial velocity, gravity excluded), in rf: da_dq, da_dv, da_da (6 x model.nv,
/// column-major; da_da is the frame Jacobian). In the world frame
///   d oa_b / dq_k = S_k x (oa_b - oa_lambda) - (S_k x ov_lambda) x (ov_b - ov_lambda),
///   d oa_b / dv_k = ov_j x S_k + S_k x (ov_b - ov_lambda)   (j: k's joint).
void frameAccelerationDerivatives(const Model& model, Data& data, const double* q, const double* v, const double* a,
                                  int f, ReferenceFrame rf, double* da_dq, double* da_dv, double* da_da);

/// Derivative of the centre-of-mass velocity Jcom(q) v with respect to q: dvcom_dq (3 x model.nv,
/// column-major). With respect to v it is Jcom (jacobianCenterOfMass).
void centerOfMassVelocityDerivatives(const Model& model, Data& data, const double* q, const double* v,
                                     double* dvcom_dq);

}  // namespace rigidiff
