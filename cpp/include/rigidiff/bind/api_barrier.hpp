// A barrier world (world/barrier_world.hpp) as the Python BarrierWorld sees it: plain pointers and sizes.
// Meshes are points (n x 3) and faces (m x 3) row-major; states are flat (12 per body).
#pragma once

#include <memory>
#include <string>

#include "rigidiff/world/barrier_articulated.hpp"
#include "rigidiff/world/barrier_world.hpp"

namespace rigidiff {
namespace bind {

class BarrierWorld {
 public:
  BarrierWorld();
  void setTimeStep(double dt);
  double timeStep() const { return model_.dt; }
  void setGravity(const double* g);
  void gravity(double* out) const;
  /// dhat > 0, newton_tolerance > 0, max_newton_iterations >= 1, friction >= 0, friction_velocity > 0
  /// (invalid_argument otherwise).
  void setOptions(double dhat, double newton_tolerance, int max_newton_iterations, double friction,
                  double friction_velocity);
  /// out (5) = dhat, newton_tolerance, max_newton_iterations, friction, friction_velocity
  void options(double* out) const;
  int addAffineBody(const std::string& name, const double* points, int n, const int* faces, int m, double density,
                    double stiffness);
  /// A static mesh: a closed, outward surface as an affine body's; any other (open, non-manifold, inconsistently
  /// wound, with faces without area left out) as a link's surface (makeSurfaceBody). Its mass matrix is then the
  /// identity: a static body's block of the step's Newton system is its mass matrix alone, and it never moves.
  int addStaticBody(const std::string& name, const double* points, int n, const int* faces, int m, double density,
                    double stiffness);
  /// The faces body k kept (those with an area).
  int bodyFaceCount(int k) const { return static_cast<int>(model_.bodies.at(k).faces.size()); }
  /// Sets a body's density (its mass and mass matrix follow) and orthogonality stiffness (invalid_argument unless
  /// both are finite and > 0).
  void setBodyParameters(int body, double density, double stiffness);
  /// Removes the last body (undoes an add whose start state turned out to intersect).
  void popBody();
  /// Makes the body static (a Static participant: steps keep its coordinates) or moving again.
  void setFixed(int body, bool fixed);
  void addPlane(const double* normal, double offset);
  /// Removes the last plane (undoes an add that a body already crosses).
  void popPlane();
  int bodyCount() const { return static_cast<int>(model_.bodies.size()); }
  int planeCount() const { return static_cast<int>(model_.planes.size()); }
  void plane(int i, double* out) const;  ///< (normal, offset)
  /// The size of q: the skeletons' coordinates, then 12 per body.
  int nq() const { return art_.nq() + model_.nq(); }
  /// The size of v and tau: the skeletons' velocities (nq - nv = one per free or ball joint), then 12 per body.
  int nv() const { return art_.model.nv + model_.nq(); }
  /// Replaces the world's skeletons by the multibody model of all of them (copied; its coordinates come
  /// before the bodies') with no link surface yet. invalid_argument for a joint the barrier step does not
  /// support (barrier_articulated.hpp). Its implicit_gyroscopic is the world's (setGyroscopic).
  void setSkeletons(const Model& model);
  /// Whether the step takes the implicit gyroscopic update of free and ball joints carrying one body on a static
  /// parent (free_joint_motion.hpp; on by default, as the lcp world's) or the explicit term in b(q_n, v_n).
  void setGyroscopic(bool implicit) { implicit_gyroscopic_ = art_.model.implicit_gyroscopic = implicit; }
  bool gyroscopic() const { return implicit_gyroscopic_; }
  /// Replaces the skeletons' model by model, the same joints with new parameters (masses, inertias, damping,
  /// stiffness, armature), keeping their link surfaces (invalid_argument for another joint structure).
  void updateSkeletons(const Model& model);
  /// Adds a link surface: the closed mesh (points n x 3 in the frame of joint, faces m x 3) of skeleton group,
  /// named for messages; parent_joint carries its link's parent link (0: the world) and self_collision is the
  /// skeleton's (ArticulatedSurface). Returns its index.
  int addSkeletonSurface(const std::string& name, int joint, int parent_joint, int group, bool self_collision,
                         const double* points, int n, const int* faces, int m);
  /// Removes every skeleton and link surface.
  void clearSkeletons() {
    art_ = ArticulatedBarrier();
    art_.joint_limits = joint_limits_;
    art_data_.reset();
  }
  /// Whether the skeletons' joint position limits act (off by default; kept when the skeletons are replaced).
  void setJointLimits(bool on) { joint_limits_ = art_.joint_limits = on; }
  bool jointLimits() const { return joint_limits_; }
  int skeletonSurfaceCount() const { return static_cast<int>(art_.surfaces.size()); }
  /// The faces a link's surface kept (those with an area) and whether they close it.
  int skeletonSurfaceFaces(int k) const { return static_cast<int>(art_.surfaces.at(k).mesh.faces.size()); }
  bool skeletonSurfaceClosed(int k) const { return art_.surfaces.at(k).mesh.closed; }
  /// y (12 per body, then 12 per link surface) = the contact coordinates of the state q, and jac
  /// (12 x nv_skeletons per surface, row-major, stacked) their Jacobians dy/dq_skeletons.
  void contactCoordinates(const double* q, double* y, double* jac);
  /// out (14) = mass, volume, first moment (3) and second moment (9, row-major) at the body's density.
  void massProperties(int body, double* out) const;
  void massMatrix(int body, double* out) const;  ///< 12 x 12
  int vertexCount(int body) const;
  int faceCount(int body) const;
  void restMesh(int body, double* points, int* faces) const;
  void checkState(const double* q);
  void step(const double* q, const double* v, const double* tau, double* q_out, double* v_out);
  /// The number of parameters of the derivatives: each body's density, each body's stiffness, friction, dhat.
  int parameterCount() const;
  /// The step and its six Jacobians (nv x nv each, row-major; q's in the tangent): dq_dq, dq_dv, dq_dtau, dv_dq,
  /// dv_dv, dv_dtau; jac_p: dq_dp then dv_dp (nv x parameterCount each, row-major).
  void stepJacobians(const double* q, const double* v, const double* tau, double* q_out, double* v_out, double* jac,
                     double* jac_p);
  /// The step and the cotangents (gq, gv, gtau, gparams (parameterCount)) pulled back from (gq_next, gv_next).
  void stepVjp(const double* q, const double* v, const double* tau, const double* gq_next, const double* gv_next,
               double* q_out, double* v_out, double* gq, double* gv, double* gtau, double* gparams);
  /// The reverse pass of a recorded rollout (world/barrier_step_derivatives.hpp, barrierRolloutBackward).
  void rolloutBackward(int T, const double* Q, const double* V, const double* taus, const double* kappas,
                       const double* GQ, const double* GV, double* gq0, double* gv0, double* gtaus, double* gparams);
  /// out (15) = Newton iterations, kappa, minimum distance, residual, active pairs, candidates, symbolic
  /// factorisations, line search evaluations of the last step, then its seconds in candidates, barrier,
  /// assembly, factorisation, CCD and in all, then the kappa it started with (BarrierStepStats).
  void stats(double* out) const;
  /// The frictionless incremental potential of a step from (q_n, v_n, tau) at q with barrier stiffness
  /// kappa; grad (nv).
  double incrementalPotential(const double* q, const double* q_n, const double* v_n, const double* tau,
                              double kappa, double* grad);
  /// The friction potential at q of the pairs frozen at q_n with barrier stiffness kappa; grad (nv).
  double frictionPotential(const double* q, const double* q_n, double kappa, double* grad);
  /// The barrier sum (unscaled) at q, its gradient (nq) and its PSD-projected Hessian (nq x nq, dense).
  double barrierPotential(const double* q, double* grad, double* hessian);
  /// The largest collision-free fraction of the move from q to q + dq.
  double collisionFreeStep(const double* q, const double* dq);
  /// Benchmarks only: the median seconds over `repeat` rounds of each contact part at q, out (8) = pairs
  /// within dhat from scratch (positions, candidates, distances), the barrier gradient of those pairs, their
  /// PSD-projected Hessian written into the Newton matrix's kept sparsity pattern, the collision-free step
  /// of the move dq (its swept candidates and CCD); then the numbers of candidates and pairs within dhat,
  /// the collision-free fraction and the barrier sum.
  void contactTimings(const double* q, const double* dq, int repeat, double* out);

 private:
  /// invalid_argument naming what if the world has skeletons (what is not supported with them yet).
  void refuseSkeletons(const char* what) const;
  /// One step's reverse mode at its recorded solution q_next (with or without skeletons).
  void vjpAt(const double* q, const double* v, const double* tau, const double* q_next, double kappa_start,
             double kappa_end, const double* gq_next, const double* gv_next, double* gq, double* gv, double* gtau,
             double* gparams);

  BarrierWorldModel model_;
  bool implicit_gyroscopic_ = true;
  BarrierWorldData data_;
  ArticulatedBarrier art_;
  std::unique_ptr<ArticulatedBarrierData> art_data_;  // made with the skeletons' model
  bool joint_limits_ = false;
};

/// Barrier b(s; shat) and its first two derivatives at n squared distances: out (n x 3).
void barrierValues(const double* s, int n, double shat, double* out);
/// Tests only: visits[i] += 1 for every i in [0, n) through the barrier world's two-thread chunks
/// (world/parallel_chunks.hpp), throwing invalid_argument at element bad (none when bad < 0).
void parallelChunkVisits(int n, int bad, int* visits);
/// The orthogonality energy of q (12) with weight w, its gradient (12) and Hessian (12 x 12).
double orthogonalityTerms(const double* q, double weight, double* grad, double* hessian);
/// The initial barrier stiffness: out (3) = kappa, kappa_min, kappa_max.
void barrierStiffness(double bbox_diagonal, double dhat, double average_mass, double grad_dot, double grad_sq,
                      double* out);

}  // namespace bind
}  // namespace rigidiff
