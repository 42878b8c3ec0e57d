// The skeletons' own parameters in a barrier world's step derivatives. The joints' rows of the step's residual
// (barrier_articulated_derivatives.hpp) are
//   r = h^2 (rnea(q_n, v_n, a) - tau_c) - h P^T r_g + h D dq + h^2 K (d_r + dq),   a = (dq - h v~) / h^2,
// with rnea = Y(q_n, v_n, a) theta + armature a linear in each joint's merged body's inertial parameters theta
// (mass, first moment, rotational inertia about the joint origin, in the joint frame) and gravity entering rnea
// linearly, so every derivative is a column read off the converged step. r_g, the implicit gyroscopic impulse of a
// free or ball joint carrying one body (free_joint_motion.hpp), depends on its body's inertia alone.
#pragma once

#include "rigidiff/multibody/data.hpp"
#include "rigidiff/multibody/model.hpp"

namespace rigidiff {

/// The skeletons' parameters after the world's (barrierParameterCount), in this order: the 10 inertial
/// parameters of each moving joint's merged body (joints 1..njoints-1, regressor.hpp's order), then every dof's
/// damping, every dof's stiffness, every dof's armature: 10 (njoints - 1) + 3 nv (0 without skeletons).
int skeletonParameterCount(const Model& model);

/// The derivatives of the joints' residual r above (before the chart's Jd^T with free or ball joints) at the
/// step from (q, v) to q_next: Ps (nv x skeletonParameterCount) for the skeletons' parameters, Pg (nv x 3) for
/// gravity's components. model.gravity is restored; data's kinematics are overwritten.
void skeletonParameterDerivatives(Model& model, Data& data, double h, const double* q, const double* v,
                                  const double* q_next, MatX& Ps, MatX& Pg);

}  // namespace rigidiff
