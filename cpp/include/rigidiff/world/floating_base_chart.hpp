// Free, ball and planar joints (floating bases, planar bases) in the implicit steps of the barrier and projective
// worlds (docs/affine.md, "Floating bases" and "Planar joints"; docs/deformable.md, "Floating bases" and "Planar
// joints").
//
// Their configurations lie on a Lie group, so the step's unknown is the displacement dq from the start
// configuration q_n in the tangent space, in the chart of the time step (Motion::Step, as the lcp world moves a
// free joint): q' = integrate(q_n, dq, Motion::Step), a free joint's origin moving by R_n dq_lin and its frame
// turning by exp3(dq_ang). The incremental potential's joint-space terms are written in dq; the Newton method
// iterates on the configuration, each direction delta in the tangent at the iterate q_k (q_k (+) t delta, the
// same chart), whose path is a straight translation and a turn about a fixed axis: the joint-space CCD's
// prismatic and revolute moves. dq as a function of delta has the Jacobian of displacementJacobian below.
// A planar joint's v = (u, w) is in its child frame, not dq/dt: it is stepped as a free joint restricted to its
// plane, on R^2 x SO(2) (dq = (R_n^T (x - x_n), theta - theta_n), its path a straight translation and a turn about
// the normal through its origin), with the free joint's frame-turn shift and re-expression (below), so that a
// spinning, sliding body keeps its velocity in space (the lcp world moves a planar joint by SE(2)'s exponential
// with its child-frame velocity, whose explicit w x u gains energy at large dt w). Additive joints (revolute,
// prismatic, universal, translational) have dq = q' - q_n and identity Jacobians.
#pragma once

#include "rigidiff/multibody/model.hpp"

namespace rigidiff {

/// True when the model has a free, ball or planar joint (stepped in the tangent of its group).
bool hasRotationGroupJoints(const Model& model);

/// invalid_argument naming the joint when a free, ball or planar joint's predicted turn h |w| (w the angular part
/// of its velocity in v, model.nv) reaches pi: the step's chart (log3 of the turn from the start, SE(2)'s log)
/// holds turns below pi.
void checkTurnsBelowPi(const Model& model, double h, const VecX& v);

/// dq (model.nv) = the displacement of q from q_n in the step's chart at q_n, the inverse of
/// integrate(q_n, dq, Motion::Step): additive joints q - q_n, a free joint (R_n^T (p - p_n), log3(R_n^T R)), a
/// ball joint log3(R_n^T R), a planar joint (R_n^T (x - x_n), theta - theta_n). Exact for turns below pi.
void stepDisplacement(const Model& model, const double* q_n, const double* q, double* dq);

/// Jd (model.nv x model.nv) = d dq / d delta, where delta moves q = integrate(q_n, dq, Motion::Step) to
/// integrate(q, delta, Motion::Step): identity on additive joints, [[E, 0], [0, Jr3inv(dq_ang)]] on a free joint
/// (E = exp3(dq_ang) = R_n^T R), Jr3inv(dq_ang) on a ball joint and [[R(dq_w), 0], [0, 1]] on a planar joint.
void displacementJacobian(const Model& model, const double* dq, MatX& Jd);

/// V (model.nv x model.nv) = d (Jd(dq)^T r) / d dq at a fixed r (model.nv): the derivative of the transposed
/// displacement Jacobian against r, zero on additive joints; on a free joint [[0, [E^T r_lin]x Jr3(phi)],
/// [0, d (Jr3inv(phi)^T r_ang) / d phi]] (phi = dq_ang), on a ball joint the angular block, on a planar joint
/// [[0, -J R(dq_w)^T r_lin], [0, 0]] (J the plane's quarter turn).
void displacementJacobianDerivative(const Model& model, const double* dq, const double* r, MatX& V);

/// Dn (model.nv x model.nv) = d dq / d delta_n with q fixed and the start moved to q_n (+) delta_n (first order
/// of both charts): -I on additive joints, [[-I, [dq_lin]x], [0, -Jr3inv(phi) E^T]] on a free joint and
/// -Jr3inv(phi) E^T on a ball joint, [[-I, -J dq_lin], [0, -1]] on a planar joint.
void displacementStartJacobian(const Model& model, const double* dq, MatX& Dn);

/// A (model.nv x model.nv) = Jd^-1 = d delta / d dq: identity on additive joints, [[E^T, 0], [0, Jr3(dq_ang)]] on a
/// free joint, Jr3(dq_ang) on a ball joint and [[R(dq_w)^T, 0], [0, 1]] on a planar joint.
void displacementInverseJacobian(const Model& model, const double* dq, MatX& A);

/// The Hessian in dq of f(integrate(q_n, dq, Motion::Step)) (model.nv x model.nv, into H) from f's gradient g and
/// Hessian H at q = integrate(q_n, dq, Motion::Step) in the chart of a chain of single-dof joints: each free or ball
/// joint a translation along its frame's axes followed by turns about its x, y then z axes (an ancestor dof moves
/// the dofs after it), as the projective world's link contacts take their second derivatives. Both charts share
/// their first order; the second orders differ on each joint's turn: the Euler turns' against exp3 (strictly upper
/// [g]x) and the curvature of delta(dq) (d (Jr3inv^T r) / d phi Jr3inv, r = Jr3^T g), so
///   H <- A^T (H + U) A,  U = [g_ang]x's strict upper triangle - d (Jr3inv(phi)^T r) / d phi Jr3inv(phi)
/// on each joint's angular block (A = displacementInverseJacobian), symmetrised. A planar joint's chain chart (x, y
/// along its child frame's axes, then the turn) is its step chart at q, affine in dq: H <- A^T H A there alone.
void chainChartHessianToDisplacement(const Model& model, const double* dq, const VecX& g, MatX& H);

/// out = the state q (model.nq joint coordinates, then `rest` plain coordinates) moved by alpha dq (model.nv,
/// then `rest`): the joints by integrate(q, alpha dq, Motion::Step) (planar joints on R^2 x SO(2)), the rest by
/// q + alpha dq. out may not alias q.
void moveState(const Model& model, int rest, const double* q, const double* dq, double alpha, double* out);

/// The step's velocity maps (free_joint_motion.hpp's, which leave planar joints alone) with a planar joint's added,
/// v = (u, w) in its child frame: the frame-turn shift v_step += dt (w J u, 0) and its Jacobian D += d shift / dv
/// (the free joints' frame turn without the implicit gyroscopic shift (a), which the barrier step takes as a force);
/// the re-expression u_out = R(dt w~)^T u~ of v_out = v_step's, the rows of its Jacobian T applied to D (nv rows)
/// and its transpose applied to a cotangent (g_step may alias g_out).
void addStepFrameTurn(const Model& model, const double* v, double dt, double* v_step);
void addStepFrameTurnJacobian(const Model& model, const double* v, double dt, Eigen::Ref<MatX> D);
/// f += (D + dt K)(v_step - v) with D, K the model's damping and stiffness: what the dampers and springs take of
/// the frame-turn shift v_step - v in a step whose potential predicts the move dt v_step, given back, so that its
/// minimiser moves as the lcp step does (which adds the shift after its damped solve). Zero without D and K.
void addFrameTurnDampingForce(const Model& model, const double* v, const VecX& v_step, double dt, VecX& f);
/// The planar joints' part of the shift and of its Jacobian alone (the projective world adds the free joints' with
/// free_joint_motion.hpp's addFrameTurnVelocity).
void addPlanarFrameTurn(const Model& model, const double* v, double dt, double* v_step);
void addPlanarFrameTurnJacobian(const Model& model, const double* v, double dt, Eigen::Ref<MatX> D);
void reexpressStepVelocities(const Model& model, double dt, const double* v_step, double* v_out);
void reexpressStepVelocityRows(const Model& model, double dt, const double* v_step, MatX& D);
void reexpressStepCotangent(const Model& model, double dt, const double* v_step, const double* g_out,
                            double* g_step);

}  // namespace rigidiff
