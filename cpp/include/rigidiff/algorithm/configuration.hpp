// Operations on the configuration manifold of a whole model: integrate, difference, neutral, checks.
#pragma once

#include "rigidiff/multibody/model.hpp"

namespace rigidiff {

/// q_out = q (+) dv (dims model.nq, model.nv, model.nq); q_out may alias q. `motion` says how free
/// joints move (multibody/joint.hpp): Group for integrate, Step for the time step's update.
void integrate(const Model& model, const double* q, const double* dv, double* q_out, Motion motion = Motion::Group);
/// d = q1 (-) q0 (dim model.nv): the tangent vector with integrate(q0, d) = q1.
void difference(const Model& model, const double* q0, const double* q1, double* d);
/// The neutral configuration (dim model.nq).
void neutralConfiguration(const Model& model, double* q);
/// Throws invalid_argument naming `what` and the joint when q has a non-finite entry or a quaternion
/// whose norm differs from 1 by more than tol.
void checkConfiguration(const Model& model, const double* q, double tol = 1e-6, const char* what = "q");
/// Throws invalid_argument naming `what` when x (dim n) has a non-finite entry.
void checkFinite(const double* x, long n, const char* what);
/// Normalises every quaternion of q in place.
void normalizeConfiguration(const Model& model, double* q);

}  // namespace rigidiff
