// A Projective Dynamics world (deformable/pd_step.hpp) as the Python ProjectiveWorld sees it: plain pointers
// and sizes. Positions, velocities and forces are flat (3 per vertex, bodies in insertion order).
#pragma once

#include <memory>
#include <string>

#include "rigidiff/deformable/pd_skeleton.hpp"
#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace bind {

class ProjectiveWorld {
 public:
  void setTimeStep(double dt);
  double timeStep() const { return model_.dt; }
  void setGravity(const double* g);
  void gravity(double* out) const;
  /// tolerance > 0, max_iterations >= 1, history >= 1, contact_stiffness > 0 (invalid_argument otherwise);
  /// method: a deformable::PdMethod (0 L-BFGS, 1 Newton-CG, 2 Newton-Cholesky).
  void setOptions(double tolerance, int max_iterations, int history, double contact_stiffness, int method);
  /// out (5) = tolerance, max_iterations, history, contact_stiffness, method
  void options(double* out) const;
  /// Threads of the per-element work of steps and adjoints (>= 1; results do not depend on it).
  void setThreads(int threads);
  int threads() const { return model_.options.threads; }
  /// friction >= 0 (Coulomb's mu of the obstacles and links), friction_velocity > 0 (eps_v, m/s).
  void setFriction(double friction, double friction_velocity);
  double friction() const { return model_.friction; }
  double frictionVelocity() const { return model_.friction_velocity; }
  /// The ground planes' contact model: 0 the penalty, 1 the complementarity (invalid_argument otherwise).
  void setContactModel(int contact_model);
  int contactModel() const { return static_cast<int>(model_.contact_model); }
  /// Rest vertices (n x 3) and elements (m x nodes, nodes 4 or 8), energies a deformable::PdEnergy mask;
  /// returns the body's index.
  int addBody(const std::string& name, const double* points, int n, const int* elements, int m, int nodes,
              double youngs_modulus, double poisson_ratio, double density, int energies);
  void setMaterial(int body, double youngs_modulus, double poisson_ratio);
  void setDensity(int body, double density);
  /// Holds the listed vertices (indices into the body's mesh) at their start position; replaces the body's set.
  void setFixed(int body, const int* vertices, int count);
  /// A muscle over elements (indices into the body's mesh) with fibres (1 or count rows of 3); its index.
  int addMuscle(const std::string& name, int body, const int* elements, int count, const double* fibers,
                int fiber_rows, double stiffness);
  void setMuscleStiffness(int muscle, double stiffness);
  int muscleCount() const { return static_cast<int>(model_.muscles.size()); }
  double muscleStiffness(int muscle) const { return model_.muscles.at(muscle).stiffness; }
  /// The activations (one per muscle, finite) of the next steps, adjoints and energies.
  void setActivation(const double* a);
  /// out (2 muscles) = the last adjoint's cotangents of the activations, then of the muscles' stiffnesses.
  void muscleGradients(double* out) const;
  void addPlane(const double* normal, double offset);
  /// A static frictionless ball (radius > 0).
  void addSphere(const double* centre, double radius);
  /// A box of half extents half (3) at the pose (rotation row-major 9, position 3); its obstacle index.
  int addBox(const double* half, const double* rotation, const double* position);
  /// Moves obstacle o (a sphere: its centre to position; a box: to the pose; planes do not move).
  void setObstaclePose(int o, const double* rotation, const double* position);
  /// Sets obstacle o's velocity during the next steps (linear at its position, angular; world axes), which its
  /// friction carries the surface with (planes do not move).
  void setObstacleVelocity(int o, const double* linear, const double* angular);
  int obstacleCount() const { return model_.obstacleCount(); }
  /// out (bodies + 2) = the last adjoint's cotangents of the bodies' densities, the contact stiffness and mu.
  void contactAndDensityGradients(double* out) const;
  /// out (6 obstacles) = the last adjoint's cotangents of the obstacles' poses (translation, rotation).
  void obstacleGradients(double* out) const;
  int bodyCount() const { return static_cast<int>(model_.bodies.size()); }
  int vertexCount() const { return model_.n; }
  /// out (2) = first vertex, vertex count of the body.
  void bodyRange(int body, int* out) const;
  void masses(double* out) const;           ///< (n) lumped vertex masses
  void surfaceMask(int* out) const;         ///< (n) 1 for surface vertices
  void fixedMask(int* out) const;           ///< (n) 1 for fixed vertices
  /// Replaces the skeletons by the multibody model (revolute, prismatic and translational joints only,
  /// invalid_argument naming the joint otherwise), without shapes; their coordinates follow the vertices'.
  void setSkeletons(const Model& model);
  void clearSkeletons();
  /// A collision shape on joint (>= 0; 0: welded to the world, touching other links only) of the skeletons: kind
  /// 0 sphere (size: radius), 1 box (half extents), 2 capsule (radius, half length along its z axis); placement in
  /// the joint frame (rotation row-major 9, position 3). Its index.
  int addLinkShape(int joint, int kind, const double* rotation, const double* position, const double* size);
  /// A convex polytope on joint (>= 0) of the skeletons: nvert vertices (3 each, the shape's frame) and ntri
  /// outward triangles (3 indices each), placed in the joint frame as addLinkShape; invalid_argument for a bad
  /// joint or a surface that is not a closed convex outward one (deformable/pd_hull.hpp). Its index.
  int addLinkHull(int joint, const double* rotation, const double* position, const double* vertices, int nvert,
                  const int* triangles, int ntri);
  /// Which link shapes shape touches (deformable::PdLinkShape): those of other groups (skeletons), and of its own
  /// group with self_collision on, on links other than its own (joint), its parent link (parent_joint, 0 the world)
  /// and its children. Shapes start in group 0 without self-collision. out_of_range for a bad shape index.
  void setLinkGroup(int shape, int group, int parent_joint, bool self_collision);
  int skeletonDofs() const { return sk_ ? sk_->nv() : 0; }
  /// Whether the skeletons' joint position limits act, by the penalty k/2 (gap)^2 with k = stiffness (> 0, in
  /// N/m or N m/rad); kept across setSkeletons.
  void setJointLimits(bool on, double stiffness);
  /// out (2) = joint limits on (0 or 1), their stiffness.
  void jointLimits(double* out) const;
  /// The size of skeletonParameterGradients: 10 (njoints - 1) + 3 nv + 1 (0 without skeletons).
  int skeletonParameterCount() const { return sk_ ? 10 * (sk_->model.njoints - 1) + 3 * sk_->nv() + 1 : 0; }
  /// out (skeletonParameterCount) = the last adjoint's cotangents of the skeletons' inertial parameters (10 per
  /// joint's merged body, in its joint frame), the joints' damping, stiffness and armature, and the limits'
  /// stiffness (zeros before any adjoint).
  void skeletonParameterGradients(double* out) const;
  /// The size of v and f: 3 per vertex, then the skeletons' joint velocities.
  int stateSize() const { return 3 * model_.n + skeletonDofs(); }
  /// The size of q: 3 per vertex, then the skeletons' joint coordinates (a free or ball joint's quaternion: more
  /// than its velocities).
  int configurationSize() const { return 3 * model_.n + (sk_ ? sk_->model.nq : 0); }
  /// The step of the state (q: configurationSize, v and f: stateSize; f: vertex forces, then the joint forces
  /// tau).
  void step(const double* q, const double* v, const double* f, double* q_out, double* v_out);
  /// The step and the cotangents of q, v, f (stateSize each) and of each body's Young's modulus and Poisson's ratio
  /// (gE, gnu: one per body); q and q_out have configurationSize, the cotangents of q (gq_next, gq) are in the
  /// tangent (stateSize, as the lcp world's).
  void stepVjp(const double* q, const double* v, const double* f, const double* gq_next, const double* gv_next,
               double* q_out, double* v_out, double* gq, double* gv, double* gf, double* gE, double* gnu);
  /// Whether a step that does not converge throws (else it returns its last iterate, finite, and stats says so).
  void setRaiseOnFailure(bool raise) { model_.options.raise_on_failure = raise; }
  bool raiseOnFailure() const { return model_.options.raise_on_failure; }
  /// One more starting point (configurationSize) for the next step only: step_vjp of a recorded rollout passes the
  /// recorded next state, so that solving the step again takes no iteration.
  void setStartGuess(const double* x);
  /// out (8) = iterations, residual (relative), surface vertices in contact, force scale, converged (0 or 1),
  /// the complementarity's active-set iterations, whether its set settled (0 or 1) and the links' contact energy
  /// at the solution of the last step.
  void stats(double* out) const;
  /// E(x) (elastic and contact) and its gradient (3n).
  double energy(const double* x, double* grad) const;
  /// The product of the Hessian of E at x with z (3n). With after_energy, the Hessian is built as a Newton
  /// iteration builds it, after the energy at x, reusing its SVDs; returns how many samples it reused (else 0).
  int hessianProduct(const double* x, const double* z, double* out, bool after_energy = false) const;

 private:
  deformable::PdModel model_;
  deformable::PdData data_;
  std::unique_ptr<deformable::PdSkeletons> sk_;
  std::unique_ptr<deformable::PdSkeletonData> sk_data_;
  bool joint_limits_ = false;
  double limit_stiffness_ = 1e4;
};

/// The rotation-variant SVD of the deformable solver, F = U diag(sigma) V^T (all row-major 3 x 3; for tests).
void projectiveSvd3(const double* F, double* U, double* sigma, double* V);

/// The volume energy's projection of singular values sigma (3) onto prod s = 1, s (3) and ds/dsigma (row-major 3 x 3;
/// for tests). std::runtime_error where it does not converge.
void projectiveVolumeProjection(const double* sigma, double* s, double* jacobian);

/// The signed distances of npoints points (3 each) to the hull of (vertices, triangles) as addLinkHull builds it
/// (deformable/pd_hull.hpp), with the normals (3 each) and the fields' Hessians (9 each, row-major); a distance
/// of at least reach may be a bound, its normal and Hessian then zero (for tests).
void projectiveHullDistances(const double* vertices, int nvert, const int* triangles, int ntri, const double* points,
                             int npoints, double reach, double* distances, double* normals, double* curvatures);

}  // namespace bind
}  // namespace rigidiff
