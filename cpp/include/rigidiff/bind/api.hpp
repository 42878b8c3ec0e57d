// The C++ surface seen by Cython: plain pointers and sizes, no Eigen types. Every function checks
// its inputs (finite values, unit quaternions, indices) and throws: invalid_argument -> ValueError,
// out_of_range -> IndexError, runtime_error -> RuntimeError.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rigidiff/collision/collision_model.hpp"
#include "rigidiff/world/contact_step.hpp"
#include "rigidiff/world/world_options.hpp"
#include "rigidiff/world/implicit_step.hpp"
#include "rigidiff/world/rk4_step.hpp"
#include "rigidiff/multibody/data.hpp"

namespace rigidiff {
namespace bind {

// ---- model building
/// placement: 12 numbers, R row-major then p; axes: axis (3) then axis2 (3);
/// inertia: mass, com (3), rotational inertia about the com (xx, xy, xz, yy, yz, zz).
int addJoint(Model& model, int parent, int type, const double* placement, const double* axes, const double* inertia,
             const std::string& name);
/// Per-dof passive terms and limits of joint j: lower, upper, rest (nq); damping, stiffness, armature,
/// friction, effort, velocity (nv).
void setJointParameters(Model& model, int j, const double* lower, const double* upper, const double* rest,
                        const double* damping, const double* stiffness, const double* armature, const double* friction,
                        const double* effort, const double* velocity);
void appendInertia(Model& model, int j, const double* inertia);
int addFrame(Model& model, const std::string& name, int j, const double* placement);

// ---- the world's options (api_world_options.cpp): the only copy of dt, gravity and the contact settings
void setTimeStep(WorldOptions& o, double dt);
/// Gravity into the options and into the model the algorithms read it from.
void setGravity(WorldOptions& o, Model& model, const double* g);
void getGravity(const WorldOptions& o, double* g);
/// Contact solver settings; combine codes: 0 geometric mean, 1 min, 2 max, 3 mean. The margin goes into
/// cmodel too. Nothing changes if an argument is invalid.
void setContactOptions(WorldOptions& o, CollisionModel& cmodel, int friction_directions, int friction_combine,
                       int restitution_combine, double restitution_threshold, double erp,
                       double penetration_allowance, double max_correction_velocity, bool joint_limits,
                       bool joint_friction, double lcp_tolerance, bool bounce_correction, bool warm_start,
                       bool speculative, double rest_depth, double margin, double max_penetration);
/// The contact settings as setContactOptions takes them: flags (8) friction_directions, friction_combine,
/// restitution_combine, joint_limits, joint_friction, bounce_correction, warm_start, speculative; values
/// (8) restitution_threshold, erp, penetration_allowance, max_correction_velocity, lcp_tolerance,
/// rest_depth, margin, max_penetration.
void readContactOptions(const WorldOptions& o, int* flags, double* values);

// ---- algorithms (outputs are caller-allocated arrays)
void inverseDynamics(const Model& m, Data& d, const double* q, const double* v, const double* a, const double* fext,
                     double* tau);
void forwardDynamics(const Model& m, Data& d, const double* q, const double* v, const double* tau, const double* fext,
                     double* ddq);
void massMatrix(const Model& m, Data& d, const double* q, double* M);
void massMatrixInverse(const Model& m, Data& d, const double* q, double* Minv);
void biasForces(const Model& m, Data& d, const double* q, const double* v, double* b);
/// (nframes x 16) row-major 4x4 world poses of every frame.
void framePoses(const Model& m, Data& d, const double* q, double* poses);
/// (nframes x 6) spatial velocities (linear, angular) of every frame; local = frame axes, else world axes.
void frameVelocities(const Model& m, Data& d, const double* q, const double* v, bool local, double* out);
/// (nframes x 6) spatial accelerations (gravity excluded) of every frame.
void frameAccelerations(const Model& m, Data& d, const double* q, const double* v, const double* a, bool local,
                        double* out);
/// (6 x nv) row-major Jacobian of frame f; local = frame axes, else world-aligned at the frame origin.
void frameJacobian(const Model& m, Data& d, const double* q, int f, bool local, double* J);
void frameJacobianTimeVariation(const Model& m, Data& d, const double* q, const double* v, int f, bool local,
                                double* dJ);
/// com (3) and, if Jcom is not null, its (3 x nv) row-major Jacobian; returns the total mass.
double centerOfMass(const Model& m, Data& d, const double* q, double* com, double* Jcom);
double kineticEnergy(const Model& m, Data& d, const double* q, const double* v);
double potentialEnergy(const Model& m, Data& d, const double* q);
void integrate(const Model& m, const double* q, const double* dv, double* out);
void difference(const Model& m, const double* q0, const double* q1, double* out);
void neutral(const Model& m, double* q);
void normalize(const Model& m, double* q);

// ---- derivatives (outputs nv x nv, row-major)
/// fext: (nframes x 6) world-axes wrenches at the frame origins, or nullptr.
void inverseDynamicsDerivatives(const Model& m, Data& d, const double* q, const double* v, const double* a,
                                const double* fext, double* dtau_dq, double* dtau_dv);
void forwardDynamicsDerivatives(const Model& m, Data& d, const double* q, const double* v, const double* tau,
                                const double* fext, double* ddq_dq, double* ddq_dv, double* ddq_dtau);

/// Jacobians of integrate(q, dv) with respect to q and dv, and of difference(q0, q1) with respect to
/// q0 and q1 (each nv x nv, row-major, tangent space).
void integrateJacobians(const Model& m, const double* q, const double* dv, double* d_dq, double* d_ddv);
void differenceJacobians(const Model& m, const double* q0, const double* q1, double* d_dq0, double* d_dq1);

/// One step and its Jacobians; jac holds dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv, dv_dtau (6 x nv x nv, each block
/// column-major).
void stepJacobians(const Model& m, Data& d, const double* q, const double* v, const double* tau, double dt,
                   const double* fext, double* q_out, double* v_out, double* jac);

// ---- parameters and reverse mode (api_gradients.cpp)
/// Replaces the merged body inertia of joint j (10 numbers as in addJoint).
void setJointInertia(Model& model, int j, const double* inertia);
/// (10 (njoints - 1)) inertial parameters (mass, first moment, inertia about the joint origin) of every joint.
void jointInertiaParameters(const Model& m, double* theta);
/// (nv x 10 (njoints - 1)) row-major regressor of the rigid-body torques.
void inverseDynamicsRegressor(const Model& m, Data& d, const double* q, const double* v, const double* a, double* Y);
/// Number of parameter columns of the groups (world/step_parameter_derivatives.hpp).
int stepParameterCount(const Model& m, int groups);
/// stepJacobians plus pjac: dq_dp then dv_dp (2 x nv x stepParameterCount(groups), row-major).
void stepParameterJacobians(const Model& m, Data& d, const double* q, const double* v, const double* tau, double dt,
                            const double* fext, int groups, double* q_out, double* v_out, double* jac, double* pjac);
/// One step and J^T (gq, gv); outputs overwritten: g_state (2 nv: q tangent, v), g_tau (nv), g_params
/// (stepParameterCount(groups), the groups' order).
void stepVJP(const Model& m, Data& d, const double* q, const double* v, const double* tau, double dt,
             const double* fext, const double* gq, const double* gv, int groups, double* q_out, double* v_out,
             double* g_state, double* g_tau, double* g_params);
/// Reverse pass of a recorded rollout (world/step_vjp.hpp); outputs overwritten: g_taus (T x nv), g_state
/// (2 nv: q0 tangent, v0), g_params (stepParameterCount(groups)). Uses a Data of its own.
void rolloutBackward(const Model& m, const double* Q, const double* V, const double* taus, int T, double dt,
                     const double* GQ, const double* GV, int groups, double* g_taus, double* g_state, double* g_params);
/// Gradient maps between coordinates (nq) and the tangent space (nv), rows of N configurations.
void tangentGradients(const Model& m, const double* Q, const double* Gc, int N, double* Gt);
void coordinateGradients(const Model& m, const double* Q, const double* Gt, int N, double* Gc);

/// Derivatives of frame f's velocity (dv_dq, dv_dv) or acceleration (da_dq, da_dv, da_da), each
/// (6 x nv, row-major), in the frame's axes (local) or world axes at its origin.
void frameVelocityDerivatives(const Model& m, Data& d, const double* q, const double* v, int f, bool local,
                              double* dv_dq, double* dv_dv);
void frameAccelerationDerivatives(const Model& m, Data& d, const double* q, const double* v, const double* a, int f,
                                  bool local, double* da_dq, double* da_dv, double* da_da);
/// (3 x nv, row-major) derivative of the centre-of-mass velocity with respect to q.
void centerOfMassVelocityDerivatives(const Model& m, Data& d, const double* q, const double* v, double* out);

// ---- collision (api_collision.cpp)
/// Signed distance of two shapes: each described by a type code (collision/shape.hpp), 3 numbers of
/// parameters (sphere: r; capsule, cylinder: r, length; box: size; plane: normal) plus offset (planes),
/// mesh vertices (n x 3) for convex meshes, and a pose (12 numbers as placement). out: distance,
/// point_a (3), point_b (3), normal (3).
void shapeDistance(int type_a, const double* params_a, const double* vertices_a, int nvert_a, const double* pose_a,
                   int type_b, const double* params_b, const double* vertices_b, int nvert_b, const double* pose_b,
                   double* out);

// ---- feature-contact derivatives, for tests (api_feature_derivatives.cpp; collision/feature_derivatives.hpp)
/// Value and first derivatives of a feature pair under world twists of A and B (12 columns: v_a, w_a,
/// v_b, w_b). Each feature: kind code (collision/feature.hpp: 0 point, 1 segment, 2 face, 3 circle, A
/// only, 4 edge cut), p (3), d (3, unit for segments, faces, circles and edge cuts, finite for points)
/// and margin >= 0; A's circle radius and angle; placements as 12 numbers (rotation row-major, then
/// translation); fallback (3, unit); the side plane (side_p (3), side_n (3, unit)) that the face
/// carries against an edge cut. Outputs: value (7: point, normal, distance), dpoint and dnormal
/// (3 x 12, row-major), ddistance (12).
void featureDerivatives(int kind_a, const double* p_a, const double* d_a, double margin_a, double radius_a,
                        double angle_a, const double* pose_a, int kind_b, const double* p_b, const double* d_b,
                        double margin_b, const double* pose_b, const double* fallback, const double* side_p,
                        const double* side_n, double* value, double* dpoint, double* dnormal, double* ddistance);

// ---- collision model and contact queries (api_collision_model.cpp)
/// Builds a shape from its type code, 4 parameters and (convex mesh) n x 3 vertices (see shapeDistance).
CollisionShape readShape(int type, const double* params, const double* vertices, int nvert);
/// Changes the contact coefficients of geometry g (friction >= 0, restitution in [0, 1]).
void setGeometryCoefficients(CollisionModel& cmodel, int g, double friction, double restitution);
/// Attaches a shape to frame `frame` of `model` (placement: 12 numbers); returns the geometry index.
/// A triangle mesh (type 7) passes its convex hull as vertices and its points (n_points x 3), faces
/// (n_faces x 3) and prism thickness in the mesh arguments (unused by the other types).
int addGeometry(CollisionModel& cmodel, const Model& model, int type, const double* params, const double* vertices,
                int nvert, int frame, int skeleton, const double* placement, double friction, double restitution,
                unsigned group, unsigned mask, const std::string& name, const double* mesh_points, int n_points,
                const int* mesh_faces, int n_faces, double thickness);
void setSelfCollision(CollisionModel& cmodel, int skeleton, bool enabled);
/// Contacts at q; returns their number (read them with readContacts).
int computeContacts(const Model& m, Data& d, const CollisionModel& cm, CollisionData& cd, const double* q);
/// The contacts of the last query: points, normals (n x 3), distances (n), geometries a, b and types (n).
void readContacts(const CollisionData& cd, double* points, double* normals, double* distances, int* geom_a,
                  int* geom_b, int* types);

// ---- constrained stepping (api_contact_step.cpp)
/// Can any constraint row ever appear (a pair of geometries allowed to touch, a finite limit, friction)?
bool needsConstraints(const Model& m, const CollisionModel& cm, const ContactOptions& o);
/// One constrained step (world/contact_step.hpp); updates the warm-start cache in cd.
void constrainedStep(const Model& m, Data& d, const CollisionModel& cm, ContactStepData& cd, const ContactOptions& o,
                     const double* q, const double* v, const double* tau, double dt, const double* fext,
                     double* q_out, double* v_out);
/// Forget the previous step's contact classes: the next constrainedStep on cd solves without a warm start.
/// The Python layer calls it whenever a step does not start from the previous step's end state.
void clearWarmStart(ContactStepData& cd);
/// Number of rows in the warm-start cache of cd (0 when it is empty).
int warmStartSize(const ContactStepData& cd);
/// The cache: the previous step's row keys and the classes (0..3) of those rows (warmStartSize each).
void readWarmStart(const ContactStepData& cd, std::int64_t* keys, int* classes);
/// Replaces the cache with n rows (n = 0 empties it); invalid_argument for a class outside 0..3.
void writeWarmStart(ContactStepData& cd, const std::int64_t* keys, const int* classes, int n);
/// T constrained steps with their own buffers (warm-started within the rollout); rows (T) receives
/// the number of constraint rows of each step. Unless null, keys and classes receive each step's row
/// keys and classes after it (rows[t] each, step after step): the contact modes a reverse pass re-solves
/// the steps in, without rerunning the rollout.
void constrainedRollout(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* q0,
                        const double* v0, const double* taus, int T, double dt, double* Q, double* V, int* rows,
                        std::vector<std::int64_t>* keys = nullptr, std::vector<int>* classes = nullptr);
/// N independent constrained steps on `threads` threads (no warm start: results do not depend on order).
void constrainedStepBatch(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* Q,
                          const double* V, const double* TAU, int N, double dt, int threads, double* Qout,
                          double* Vout);
/// Columns of the parameter Jacobians of a constrained step: stepParameterCount of the model groups
/// (bits 1..16), then the friction (bit 32) and restitution (bit 64) of every geometry.
int constrainedParameterCount(const Model& m, const CollisionModel& cm, int groups);
/// constrainedStep and its Jacobians (world/contact_step_derivatives.hpp): jac as stepJacobians and,
/// unless null, pjac as stepParameterJacobians (api_contact_gradients.cpp).
void constrainedStepJacobians(const Model& m, Data& d, const CollisionModel& cm, ContactStepData& cd,
                              const ContactOptions& o, const double* q, const double* v, const double* tau, double dt,
                              const double* fext, int groups, double* q_out, double* v_out, double* jac,
                              double* pjac);
/// constrainedStep and J^T (gq, gv), outputs as stepVJP. explore: also try the loss-driven contact
/// mode and keep the one with the larger state and torque gradients (parameters: the solved mode).
void constrainedStepVJP(const Model& m, Data& d, const CollisionModel& cm, ContactStepData& cd,
                        const ContactOptions& o, const double* q, const double* v, const double* tau, double dt,
                        const double* fext, const double* gq, const double* gv, int groups, bool explore,
                        double* q_out, double* v_out, double* g_state, double* g_tau, double* g_params);
/// Reverse pass of a recorded constrained rollout, outputs as rolloutBackward; explore per step as above.
/// rows, keys, classes: the modes constrainedRollout recorded, or null to rerun the rollout for them.
void constrainedRolloutBackward(const Model& m, const CollisionModel& cm, const ContactOptions& o, const double* Q,
                                const double* V, const double* taus, int T, double dt, const double* GQ,
                                const double* GV, int groups, bool explore, double* g_taus, double* g_state,
                                double* g_params, const int* rows = nullptr, const std::int64_t* keys = nullptr,
                                const int* classes = nullptr);
int lastRowCount(const ContactStepData& cd);
/// Smallest signed distance among the contacts of the last step (+inf without contacts).
double lastDeepest(const ContactStepData& cd);
/// The boxed LCP of the last step (m = lastRowCount): A (m x m), b, lo, hi, x (m), findex (m).
void readLastLcp(const ContactStepData& cd, double* A, double* b, double* lo, double* hi, double* x, int* findex);
int lastContactCount(const ContactStepData& cd);
/// Per contact of the last step: normal impulse (n), friction impulse (n x 3, world), class of the
/// normal row (n; LcpClass codes), and the solver stage and friction-dropped flag (2).
void readLastImpulses(const ContactStepData& cd, double* normal, double* friction, int* classes, int* status);
/// Rows of the last step (m = lastRowCount): kind (RowKind codes), contact or dof index, LCP class.
void readLastRows(const ContactStepData& cd, int* kinds, int* index, int* classes);
/// Contacts of the last step (as readContacts).
void readLastContacts(const ContactStepData& cd, double* points, double* normals, double* distances, int* geom_a,
                      int* geom_b, int* types);

// ---- time stepping
void step(const Model& m, Data& d, const double* q, const double* v, const double* tau, double dt, const double* fext,
          double* q_out, double* v_out);
void rollout(const Model& m, const double* q0, const double* v0, const double* taus, int T, double dt, double* Q,
             double* V);
void stepBatch(const Model& m, const double* Q, const double* V, const double* TAU, int N, double dt, int threads,
               double* Qout, double* Vout);

// ---- contact solver core (api_contact.cpp; contact/boxed_lcp.hpp)
/// Solves the boxed LCP w = A x + b with bounds lo <= x <= hi, friction rows scaled by x[findex[i]].
/// Inputs: A (n x n, symmetric, finite), b, lo, hi (n; lo <= 0 <= hi, finite b), findex (n, -1 or a row
/// with findex -1 and lo 0) or null, warm (n classes 0..3, contact::LcpClass) or null, tolerance > 0.
/// Outputs: x, w (n), classes (n), status (4: contact::LcpSolver, friction dropped, success, standardised).
/// Optional (null to skip): dx_db (n x n, row-major) = dx/db; with g (n) = dL/dx: grad_b (n) = dL/db and
/// grad_A (n x n, row-major) = dL/dA, entries of A taken as independent.
void solveBoxedLcp(int n, const double* A, const double* b, const double* lo, const double* hi, const int* findex,
                   const int* warm, double tolerance, double* x, double* w, int* classes, int* status, double* dx_db,
                   const double* g, double* grad_b, double* grad_A);


// ---- trajectory optimisation (api_trajopt.cpp; trajopt/riccati.hpp)
/// Step Jacobians at every (Q[t], V[t], TAU[t]) of a trajectory, t < T, into jac (T x 6 x nv x nv) in
/// stepJacobians' layout; through the constraint solve when cm, cd and o are given (null: the plain step),
/// or of the RK4 step when rk4 is given (world/rk4_step.hpp; cm, cd, o then null), or of the implicit step when
/// implicit is given (world/implicit_step.hpp; cm, cd, o, rk4 then null).
/// Row t > 0 is warm-started from row t - 1 only if it starts bitwise at that row's end state.
void trajectoryJacobians(const Model& m, Data& d, const CollisionModel* cm, ContactStepData* cd,
                         const ContactOptions* o, const double* Q, const double* V,
                         const double* TAU, int T, double dt, double* jac, Rk4Workspace* rk4 = nullptr,
                         ImplicitWorkspace* implicit = nullptr);
/// iLQR's closed-loop rollout from (q0, v0): u_t = clamp(Ur[t] + alpha k[t] + K[t] dx_t, lo[t], hi[t]) with
/// dx_t = (difference(Qr[t], q_t), v_t - Vr[t]), tau_t = S u_t (S: nv x nu, row-major). Writes Q (T+1, nq),
/// V (T+1, nv) and U (T, nu). lo and hi may hold infinities. cm, cd, o, rk4 and implicit as in
/// trajectoryJacobians.
void closedLoopRollout(const Model& m, Data& d, const CollisionModel* cm, ContactStepData* cd,
                       const ContactOptions* o, const double* q0, const double* v0,
                       const double* Qr, const double* Vr, const double* Ur, const double* k, const double* K,
                       double alpha, const double* S, int nu, const double* lo, const double* hi, int T, double dt,
                       double* Q, double* V, double* U, Rk4Workspace* rk4 = nullptr,
                       ImplicitWorkspace* implicit = nullptr);
/// Pose (N x 16, row-major 4x4) and, if J is not null, world-aligned Jacobian (N x 6 x nv, rows linear then
/// angular, as frameJacobian) of frame f at each of the N configurations Q (N x nq).
void frameAlongTrajectory(const Model& m, Data& d, const double* Q, int N, int f, double* poses, double* J);
/// iLQR's backward pass (trajopt/riccati.hpp, arrays row-major); lo and hi bound the control change k
/// (null: none); k holds the box QP's start on entry. Returns false if a regularised Q_uu is not
/// positive definite.
bool riccatiBackward(int T, int nx, int nu, const double* A, const double* B, const double* lx, const double* lxx,
                     const double* lu, const double* luu, const double* lo, const double* hi, double mu, double* k,
                     double* K, double* dV);
// ---- dense products of the derivative code (linalg/dense_product.hpp), for the tests and show_config
/// C (m x n) = A B or A^T B (+ C with accumulate); A is m x k (k x m with transposed_a), B k x n, all
/// column-major.
void linalgDenseProduct(int m, int k, int n, const double* A, const double* B, double* C, bool accumulate,
                        bool transposed_a);
/// Whether those products run the AVX2/FMA kernel on this CPU.
bool linalgUsesAvx2();

}  // namespace bind
}  // namespace rigidiff
