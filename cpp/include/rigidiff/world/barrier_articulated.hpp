// Articulated skeletons in a barrier world: their links' surfaces are barrier participants through the
// articulated point map (kind Articulated), their generalised coordinates join the state before the affine
// bodies, and a step minimises one incremental potential over both.
//
// Each link surface enters the contact model (a BarrierWorldModel, barrier_contacts.hpp) as a massless
// participant whose 12 coordinates y = (p, rows of R) are the pose of its joint from forward kinematics, so
// that x = R xbar + p is the contact code's affine point map and every pair, distance, barrier and friction
// term is reused unchanged. Gradients reach the joint coordinates by the chain rule g_q = J_y^T g_y and the
// Newton matrix by the Gauss-Newton product J_y^T H_y J_y (PSD since H_y's element blocks are), with
// J_y = dy/dq the 12 x nv map of the link's joint Jacobian. Revolute, prismatic, universal and translational
// joints (dq/dt = v), and free, ball and planar joints (floating bases and planar bases, stepped in the tangent
// of their group: floating_base_chart.hpp) are supported.
#pragma once

#include <vector>

#include "rigidiff/multibody/data.hpp"
#include "rigidiff/multibody/model.hpp"
#include "rigidiff/world/barrier_world.hpp"

namespace rigidiff {

/// One link surface of a skeleton: a closed mesh attached to a joint of the multibody model.
struct ArticulatedSurface {
  int joint = 0;  ///< the joint whose frame carries the mesh (0: welded to the world, a static participant)
  int parent_joint = -1;  ///< the joint carrying its link's parent link (0: the world; -1: none)
  int group = 0;  ///< the skeleton it belongs to
  /// whether it pairs with the surfaces of its group on other links that are neither its link's parent nor
  /// child (the skeleton's self_collision; off: surfaces of one group never form pairs)
  bool self_collision = false;
  AffineBody mesh;  ///< rest vertices in the joint frame, faces, edges; massless (density, mass, stiffness 0)
};

/// The skeletons of a barrier world: one multibody model of all of them (their coordinates first in q and v)
/// and their link surfaces.
struct ArticulatedBarrier {
  Model model;
  std::vector<ArticulatedSurface> surfaces;
  /// whether the joints' position limits act (as the barrier of barrier_joint_limits.cpp); off by default,
  /// as in the lcp world's contact options
  bool joint_limits = false;

  int nq() const { return model.nq; }
  bool empty() const { return model.nv == 0 && surfaces.empty(); }
  /// invalid_argument naming the joint unless every joint is revolute, prismatic, translational, free, ball or planar
  /// (universal joints are two revolutes in the core).
  void checkSupported() const;
};

/// Scratch of the articulated step.
struct ArticulatedBarrierData {
  explicit ArticulatedBarrierData(const Model& model) : data(model) {}
  Data data;
  BarrierWorldModel contact;  ///< the affine bodies and static meshes, then every link surface
};

/// The contact model of a world: world's bodies in order, then art's link surfaces (static when welded to the
/// world), with the collision groups that keep one skeleton's surfaces from pairing with each other (unless its
/// self-collision is on: then only surfaces of one link, or of a parent and a child link, never pair).
void buildArticulatedContactModel(const BarrierWorldModel& world, const ArticulatedBarrier& art,
                                  BarrierWorldModel& contact);

/// y (contact.nq()) = the contact coordinates of the state q = (q_skeletons, q_bodies): the bodies' own, then
/// each link surface's pose (p, rows of R) by forward kinematics. Leaves the kinematics at q in data.
void contactCoordinates(const ArticulatedBarrier& art, Data& data, int nbodies, const double* q, double* y);

/// jac (12 x nv, column-major) = dy/dq of surface k at the kinematics of data.J (after computeJointJacobians).
void surfaceJacobian(const ArticulatedBarrier& art, const Data& data, int k, MatX& jac);

/// The largest alpha in (0, 1] such that the move q (+) t alpha dq, t in [0, 1], of the state q (moveState of
/// floating_base_chart.hpp: q + t alpha dq for vector-space joints and bodies) keeps every pair
/// of the contact model apart: piecewise-linear substeps of the joint-space path, each tested by additive CCD
/// of the chords with a minimum separation that bounds each point's deviation from its chord
/// (docs/affine.md, "Skeletons"). gap is the smallest distance at q (its tenth bounds the deviation).
double articulatedCollisionFreeStep(const ArticulatedBarrier& art, ArticulatedBarrierData& ad, BarrierWorldData& data,
                                    const double* q, const double* dq, double gap);

/// E(q) of the step from (q_n, v_n, tau) below with barrier stiffness kappa, without friction; grad (the tangent's
/// size, nv + 12 per body) = dE/dq when given, along q (+) delta with free and ball joints (moveState's chart), for
/// tests against finite differences.
double articulatedIncrementalPotential(const BarrierWorldModel& world, ArticulatedBarrier& art,
                                       ArticulatedBarrierData& ad, BarrierWorldData& data, const double* q,
                                       const double* q_n, const double* v_n, const double* tau, double kappa,
                                       double* grad);

/// The lagged friction potential at the state q of the pairs within dhat at the start state q_n, frozen there with
/// barrier stiffness kappa (barrier_friction.hpp); grad (the tangent's size) = its gradient, pulled back to the
/// joints through the surfaces' Jacobians, when given (for tests against finite differences).
double articulatedFrictionPotential(const BarrierWorldModel& world, ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                                    BarrierWorldData& data, const double* q, const double* q_n, double kappa,
                                    double* grad);

/// The barrier of the joint position limits (vector-space joints' coordinates, planar joints' x, y and turn): sum
/// over the finite limits of b(g^2; dhat^2) (the contact barrier, contact/barrier.hpp) of the gaps g = q - lower and
/// upper - q (in the joint's units; a planar joint's x and y in its parent frame); adds weight times its gradient in
/// the tangent at q (q (+) delta, Motion::Step: a planar joint's x and y move by R(theta) delta_xy) to grad (nv), and
/// weight times its Gauss-Newton Hessian there, each gap's second derivative clamped to >= 0, to hess (nv x nv),
/// when given. Zero when art.joint_limits is off.
double jointLimitBarrier(const ArticulatedBarrier& art, double dhat, const double* q, double weight, double* grad,
                         MatX* hess);
/// The largest alpha in (0, 1] such that q (+) alpha dq keeps at least a tenth of each limit's gap (1 when
/// art.joint_limits is off): the limited coordinates move linearly in alpha, so this keeps them strictly within.
double jointLimitStep(const ArticulatedBarrier& art, const double* q, const double* dq);
/// invalid_argument naming the joint unless q lies strictly within every limit (when art.joint_limits is on).
void checkWithinJointLimits(const ArticulatedBarrier& art, const double* q);

/// Steps the state (q, v) of a world with skeletons (q: art.nq() + world.nq(); v, tau: art.model.nv + world.nq())
/// under tau into (q_out, v_out): implicit Euler in the joint coordinates, as one incremental potential with the
/// affine bodies'
///   E(q') = 1/2 u^T M(q_n) u - h^2 (tau_c - b(q_n, v_n))^T dq + h/2 dq^T D dq + h^2/2 (dq + q_n - q_r)^T K (...)
///           + E_bodies(q'_bodies) + kappa B(y(q')) + kappa B_limits(q') + friction,  dq = q' - q_n, u = dq - h v_n,
/// (tau_c: tau clipped to the effort limits; D, K: joint damping and stiffness about q_r, the rest position),
/// minimised by the barrier world's projected Newton method with a dense solve. With free or ball joints dq is the
/// displacement in the step's chart and u, the springs and v' change accordingly (floating_base_chart.hpp).
/// invalid_argument for non-finite input, a quaternion off unit norm, a free or ball joint turning by pi or more in
/// a step, or an intersecting start; runtime_error when Newton does not converge.
void articulatedBarrierStep(const BarrierWorldModel& world, ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                            BarrierWorldData& data, const double* q, const double* v, const double* tau,
                            double* q_out, double* v_out);

}  // namespace rigidiff
