// How a free joint moves in a time step (docs/conventions.md): on R^3 x SO(3). Its velocity coordinates
// are (u, w), the linear velocity of the child frame's origin and the angular velocity, both in the child
// frame. A step
//   1. advances the origin's velocity in the frame the step starts from: u~ = u' + dt w x u, where
//      u' = u + dt du/dt is the semi-implicit update of the child-frame coordinates (du/dt, from ABA,
//      holds -w x u: the frame turning under a velocity fixed in space). The constraint rows act on this
//      velocity v~ (J(q) v~ is the velocity of the contact points during the step);
//   2. moves q with v~: p' = p + dt R u~, R' = R E, E = exp3(dt w~) (Motion::Step of integrate);
//   3. re-expresses the linear velocity in the new frame: u_out = E^T u~, so that R' u_out = R u~.
// A rolling ball's centre then moves along the ground (the SE(3) exponential of a constant twist would
// swing it down on the screw about the contact point), and a free body's velocity in space is kept.
//
// With model.implicit_gyroscopic, free and ball joints that carry a single body on a static parent ("gyroscopic
// joints": the joint's dofs are then decoupled from every other joint's in M) also update their rotation
// implicitly. With Ig the body's rotational inertia (about its centre of mass for a free joint, about the joint
// origin for a ball joint), w its angular velocity and A the joint's block of M + dt D + dt^2 K:
//   a. y solves exp3(dt y / 2) Ig y = Ig w (the torque-free rate at mid-step, by Newton's method), and step 1
//      adds A^-1 P^T (dt w x Ig w - Ig (w - y)) to the joint's velocity: the explicit gyroscopic impulse that the
//      dynamics subtracted is given back and the implicit one taken instead, so without other torques the
//      angular part of v~ is y;
//   b. step 3 first adds B^-1 P^T (exp3(dt w~ / 2)^T - I) Ig w~ to the joint's part of v~ (w~ its angular part,
//      B the joint's block of M): the second half of the implicit impulse, after the rotation by exp3(dt w~).
//      For a body without armature B^-1 P^T = [[c]x; I] Ig^-1, so w_out = Ig^-1 exp3(dt w~ / 2)^T Ig w~ and
//      the centre of mass keeps its velocity.
// Torque-free, R' Ig w_out = R exp3(dt y) exp3(-dt y / 2) Ig y = R Ig w: the angular momentum about the centre
// of mass (about the pivot) is kept in the world frame to round-off, and the update is symmetric in time (the
// energy error stays O(dt^2), without drift).
// Both maps depend only on v (a) and on v~ (b), so every derivative treats them like the frame-turn shift and
// the re-expression above.
// Joints other than these are untouched: these functions cost a pass over the joints.
#pragma once

#include "rigidiff/multibody/model.hpp"

namespace rigidiff {

using RowMatX = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// True when the model has a free joint or a gyroscopic joint (the only joints these functions change).
bool hasStepMaps(const Model& model);
/// True when joint i's rotation is updated implicitly (a gyroscopic joint, above). Inline: every step asks it of
/// every joint.
inline bool isGyroscopicJoint(const Model& model, int i) {
  const JointModel& j = model.joints[i];
  return model.implicit_gyroscopic && (j.type == JointType::Free || j.type == JointType::Ball) &&
         model.parents[i] == 0 && model.subtree_nv[i] == j.nv;
}

/// Step 1's shift: v_step += dt (w x u, 0) on each free joint, (u, w) from the start velocity v, plus the
/// implicit gyroscopic shift (a) on gyroscopic joints.
void addFrameTurnVelocity(const Model& model, const double* v, double dt, double* v_step);

/// The frame-turn shift alone, without (a): v_step += dt (w x u, 0) on each free joint, and its Jacobian D += d/dv.
/// The barrier world predicts its move with it and takes (a)'s impulse as a force (addGyroscopicImpulses).
void addFreeFrameTurn(const Model& model, const double* v, double dt, double* v_step);
void addFreeFrameTurnJacobian(const Model& model, const double* v, double dt, Eigen::Ref<MatX> D);
/// (a)'s impulse itself on gyroscopic joints, f += scale P^T r (r at the start velocity v; the shift is A^-1 of it),
/// and its Jacobian D += scale P^T dr/dv (nv x nv). A generalized force P^T r / dt moves the step as the shift does.
void addGyroscopicImpulses(const Model& model, const double* v, double dt, double scale, double* f);
void addGyroscopicImpulseJacobian(const Model& model, const double* v, double dt, double scale, Eigen::Ref<MatX> D);

/// a -= (w x u, 0) on each free joint: the frame-turn shift divided by dt, taken back from (v_step - v) / dt to
/// leave the acceleration that the step's forces and impulses produced, (a)'s impulse P^T r included (it acts
/// as a fixed generalized force P^T r / dt, as a constraint impulse does).
void subtractFrameTurnAcceleration(const Model& model, const double* v, double* a);
/// a += (a)'s shift / dt on gyroscopic joints: the step's acceleration with (a)'s impulse, from aba's.
void addGyroscopicAcceleration(const Model& model, const double* v, double dt, double* a);

/// The parameter derivatives of (a) and (b) (D: nv rows, the columns of stepParameterCount(model, groups),
/// step_parameter_derivatives.hpp). (a): D's inertia columns += R P^T dr/dtheta at the start velocity v, with R
/// the step's response to generalized forces ((M + E)^-1, or the constrained one), before q' is differentiated;
/// its dependence on A (armature, damping, stiffness, inertia) acts through the acceleration above.
/// (b): D's rows of v_out += d v_out / dp (inertia and armature columns) at v_step, after the re-expression.
void addGyroscopicImpulseInertiaColumns(const Model& model, const double* v, double dt, const MatX& response,
                                        Eigen::Ref<RowMatX> D);
void addGyroscopicRateParameterColumns(const Model& model, const double* v_step, double dt, int groups,
                                       Eigen::Ref<RowMatX> D);
/// The same with the columns placed by offsets: inertia0 + 10 (i - 1) + k and armature0 + the dof's index (a negative
/// offset leaves its group out).
void addGyroscopicRateParameterColumns(const Model& model, const double* v_step, double dt, int inertia0,
                                       int armature0, Eigen::Ref<RowMatX> D);
/// Their reverse: g_theta += (dr/dtheta)^T P lam / dt + (d v_out / dtheta)^T g_out, g_armature likewise from (b),
/// with lam = dt R^T g the step's adjoint of the generalized forces and g_out the cotangent of v_out; either
/// output may be nullptr.
void addGyroscopicParameterVJP(const Model& model, const double* v, const double* v_step, double dt,
                               const double* lam, const double* g_out, double* g_theta, double* g_armature);
/// (b)'s part alone: g_theta += (d v_out / dtheta)^T g_out, g_armature likewise (either may be nullptr).
void addGyroscopicRateParameterVJP(const Model& model, const double* v_step, double dt, const double* g_out,
                                   double* g_theta, double* g_armature);

/// S = d shift / dv (on free joints [[dt [w]x, -dt [u]x], [0, 0]], plus (a)'s block): D += S.
void addFrameTurnJacobian(const Model& model, const double* v, double dt, Eigen::Ref<MatX> D);
/// Rows (m x nv) times S: out -= rows S (the shift's part of a constraint row's velocity).
void subtractRowsTimesFrameTurnJacobian(const Model& model, const double* v, double dt, const MatX& rows,
                                        Eigen::Ref<MatX> out);
/// g_v += S^T g (dims nv): the shift's part of a velocity cotangent.
void addFrameTurnTranspose(const Model& model, const double* v, double dt, const double* g, double* g_v);

/// Step 3: v_out = v_step with (b) added on each gyroscopic joint, then each free joint's u replaced by E^T u
/// (v_out may alias v_step).
void reexpressFreeVelocities(const Model& model, double dt, const double* v_step, double* v_out);
/// Rows of a derivative of v_step turned into rows of the derivative of v_out (step 3's Jacobian T on the
/// left, in place; D has nv rows).
template <typename Derived>
void reexpressVelocityRows(const Model& model, double dt, const double* v_step, const Eigen::MatrixBase<Derived>& D);
/// g_step = T^T g_out (dims nv; may alias): a cotangent of v_out as one of v_step.
void reexpressCotangent(const Model& model, double dt, const double* v_step, const double* g_out, double* g_step);

/// The acceleration of a step from v to v_next (both model.nv; a may alias neither): step 3 inverted (free
/// joints' u~ = E u_out, gyroscopic joints' w~ from (b) by Newton's method), then a = (v~ - v - shift) / dt.
void stepAcceleration(const Model& model, double dt, const double* v, const double* v_next, double* a);

/// Joint i's diagonal block of T at v_step into the top-left n x n corner of Tj; returns n (0 when step 3
/// leaves the joint's velocity as it is): Z = dz/dx of (b) (I on other joints), then on free joints
/// blockdiag(E^T, I) Z + [[0, dt [u_out]x Jr3(dt w~)], [0, 0]].
int reexpressionBlock(const Model& model, int i, const double* v_step, double dt, Mat6& Tj);

template <typename Derived>
void reexpressVelocityRows(const Model& model, double dt, const double* v_step, const Eigen::MatrixBase<Derived>& D_) {
  Eigen::MatrixBase<Derived>& D = const_cast<Eigen::MatrixBase<Derived>&>(D_);
  Mat6 T;
  Vec6 x;
  for (int i = 1; i < model.njoints; ++i) {
    const int n = reexpressionBlock(model, i, v_step, dt, T);
    if (n == 0) continue;
    const int o = model.joints[i].idx_v;
    for (Eigen::Index c = 0; c < D.cols(); ++c) {  // column by column: no temporary on the heap
      for (int k = 0; k < n; ++k) x[k] = D(o + k, c);
      for (int k = 0; k < n; ++k) D(o + k, c) = T.row(k).head(n).dot(x.head(n));
    }
  }
}

}  // namespace rigidiff
