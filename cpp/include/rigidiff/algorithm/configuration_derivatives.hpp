// Jacobians of integrate and difference on the configuration manifold (Lie-group calculus), in the
// tangent space: a perturbation of a configuration q is q (+) eps (eps of dim model.nv), a change of
// an output configuration q' is measured by difference(q', q'_perturbed). These are Pinocchio's
// dIntegrate(model, q, v, ARG0/ARG1) and dDifference(model, q0, q1, ARG0/ARG1).
#pragma once

#include "rigidiff/multibody/model.hpp"

namespace rigidiff {

/// Jacobian of q' = integrate(q, dv, motion) with respect to q (arg 0) or dv (arg 1); q and q' are
/// perturbed in their tangent spaces (always through the group's exponential, Motion::Group).
/// Block-diagonal per joint (a joint's block: nv x nv at idx_v):
///   additive joints (revolute, prismatic, universal, translational): I, for both args;
///   ball (R' = R exp3(w)): arg 0 exp3(w)^T, arg 1 Jr3(w);
///   free, Group (M' = M exp6(x)): arg 0 Ad(exp6(-x)), arg 1 Jr6(x);
///   free, Step (p' = p + R x_lin, R' = R E, E = exp3(x_ang)): arg 0 [[E^T, -E^T [x_lin]x], [0, E^T]],
///     arg 1 [[E^T, 0], [0, Jr3(x_ang)]];
///   planar (SE(2), M' = M exp(x)): the SE(2) analogues of the free joint's Group blocks.
/// The blocks do not depend on q; q is taken for symmetry with integrate.
/// \param[in] q (model.nq), dv (model.nv), arg 0 or 1 (else invalid_argument)
/// \param[out] J (model.nv x model.nv, column-major), overwritten (off-diagonal blocks zero)
void dIntegrate(const Model& model, const double* q, const double* dv, int arg, double* J,
                Motion motion = Motion::Group);

/// Jacobian of d = difference(q0, q1) (the tangent vector with integrate(q0, d) = q1) with respect
/// to q0 (arg 0) or q1 (arg 1). Block-diagonal per joint, with d_j the joint's part of d:
///   additive joints: arg 0 -I, arg 1 I;
///   ball, free and planar: arg 0 -Jr^-1(-d_j) (= -Jl^-1(d_j) = -Jr^-1(d_j) Ad(exp(-d_j))),
///   arg 1 Jr^-1(d_j), with Jr the right Jacobian of the joint's group exponential.
/// Ball and free blocks are finite for rotation angles in [0, pi] (the range of log3); the planar
/// block is singular when theta1 - theta0 is a non-zero multiple of 2 pi, like difference itself.
/// \param[in] q0 (model.nq), q1 (model.nq), arg 0 or 1 (else invalid_argument)
/// \param[out] J (model.nv x model.nv, column-major), overwritten (off-diagonal blocks zero)
void dDifference(const Model& model, const double* q0, const double* q1, int arg, double* J);

/// Joint j's (nv_j x nv_j) block of dIntegrate (arg 0: d/dq, arg 1: d/d dv) at the joint's part x of dv.
void dIntegrateJointBlock(const JointModel& j, const double* x, int arg, MatJJ& B, Motion motion = Motion::Group);

/// True when the joint's blocks of dIntegrate are the identity (additive joints).
inline bool integrateIsAdditive(const JointModel& j) {
  return j.type != JointType::Ball && j.type != JointType::Free && j.type != JointType::Planar;
}

/// out = alpha dIntegrate(q, dv, arg, motion) X (+ out if accumulate), joint block by joint block: O(nv cols(X))
/// instead of a dense product. X and out have model.nv rows and may not alias.
template <typename In, typename Out>
void dIntegrateProduct(const Model& model, const double* dv, int arg, double alpha, const Eigen::MatrixBase<In>& X,
                       const Eigen::MatrixBase<Out>& out_, bool accumulate, Motion motion = Motion::Group) {
  Eigen::MatrixBase<Out>& out = const_cast<Eigen::MatrixBase<Out>&>(out_);
  // the identity everywhere in one contiguous pass, then the joints whose block is not the identity
  if (accumulate)
    out += alpha * X;
  else
    out = alpha * X;
  MatJJ B;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (integrateIsAdditive(j)) continue;
    dIntegrateJointBlock(j, dv + j.idx_v, arg, B, motion);
    B.diagonal().array() -= 1.0;
    if (j.nv == 6) {  // a free joint: a fixed-size product (the general one costs more to set up than to run)
      const Mat6 B6 = alpha * B;
      out.template middleRows<6>(j.idx_v) += B6.lazyProduct(X.template middleRows<6>(j.idx_v));
    } else {
      out.middleRows(j.idx_v, j.nv).noalias() += alpha * B * X.middleRows(j.idx_v, j.nv);
    }
  }
}

/// out += dIntegrate(q, dv, arg, motion), touching only its diagonal blocks.
template <typename Out>
void addDIntegrateBlocks(const Model& model, const double* dv, int arg, const Eigen::MatrixBase<Out>& out_,
                         Motion motion = Motion::Group) {
  Eigen::MatrixBase<Out>& out = const_cast<Eigen::MatrixBase<Out>&>(out_);
  MatJJ B;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (integrateIsAdditive(j)) {
      out.block(j.idx_v, j.idx_v, j.nv, j.nv).diagonal().array() += 1.0;
      continue;
    }
    dIntegrateJointBlock(j, dv + j.idx_v, arg, B, motion);
    out.block(j.idx_v, j.idx_v, j.nv, j.nv) += B;
  }
}

/// out = dIntegrate(q, dv, arg, motion)^T g (dim model.nv), block by block without forming the matrix.
void dIntegrateTransposeProduct(const Model& model, const double* dv, int arg, const double* g, double* out,
                                Motion motion = Motion::Group);
/// out = dDifference(q0, q1, arg)^T g (dim model.nv), block by block without forming the matrix.
void dDifferenceTransposeProduct(const Model& model, const double* q0, const double* q1, int arg, const double* g,
                                 double* out);

/// Gradient maps between the coordinates q (dim nq) and the tangent space (dim nv) at q:
/// tangentGradient gives g_tan = G^T g_coord with G = d integrate(q, d) / d d at d = 0 (nq x nv), the
/// tangent gradient of a function whose coordinate gradient is g_coord; coordinateGradient gives
/// g_coord = C^T g_tan, with C the derivative of the tangent chart at q of the configuration
/// q / |q| (quaternions normalised), so that it is the exact coordinate gradient of f(normalise(q)).
/// Additive joints: identity; ball and free: quaternion and child-frame translation; planar: R(theta).
void tangentGradient(const Model& model, const double* q, const double* g_coord, double* g_tan);
void coordinateGradient(const Model& model, const double* q, const double* g_tan, double* g_coord);

}  // namespace rigidiff
