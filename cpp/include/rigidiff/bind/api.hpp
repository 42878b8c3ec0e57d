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


// ---- parameters and reverse mode (api_gradients.cpp)
/// (10 (njoints - 1)) inertial parameters (mass, first moment, inertia about the joint origin) of every joint.
void jointInertiaParameters(const Model& m, double* theta);
/// (nv x 10 (njoints - 1)) row-major regressor of the rigid-body torques.
void inverseDynamicsRegressor(const Model& m, Data& d, const double* q, const double* v, const double* a, double* Y);
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
/// mesh vertices (n x 3) for convex meshes and the convex hull of a triangle mesh (type 7), whose
/// points (n_points x 3), faces (n_faces x 3) and prism thickness follow, and a pose (12 numbers as
/// placement). out: distance, point_a (3), point_b (3), normal (3).
void shapeDistance(int type_a, const double* params_a, const double* vertices_a, int nvert_a, const double* points_a,
                   int npoints_a, const int* faces_a, int nfaces_a, double thickness_a, const double* pose_a,
                   int type_b, const double* params_b, const double* vertices_b, int nvert_b, const double* points_b,
                   int npoints_b, const int* faces_b, int nfaces_b, double thickness_b, const double* pose_b,
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
/// The same pair's derivatives with respect to the points of its features' stencils
/// (collision/feature_stencil.hpp): counts (2) the points of A and B, points (3 per point, A's first, at most
/// 36), and row-major blocks dpoint, dnormal (3 x 3 (na + nb)) and ddistance (3 (na + nb)).
void featurePointDerivatives(int kind_a, const double* p_a, const double* d_a, double margin_a, double radius_a,
                             double angle_a, const double* pose_a, int kind_b, const double* p_b, const double* d_b,
                             double margin_b, const double* pose_b, const double* fallback, const double* side_p,
                             const double* side_n, double* value, int* counts, double* points, double* dpoint,
                             double* dnormal, double* ddistance);

// ---- collision model and contact queries (api_collision_model.cpp)
/// Builds a shape from its type code, 4 parameters and (convex mesh) n x 3 vertices (see shapeDistance);
/// a triangle mesh (type 7) also from its points, faces and prism thickness.
CollisionShape readShape(int type, const double* params, const double* vertices, int nvert,
                         const double* mesh_points = nullptr, int n_points = 0, const int* mesh_faces = nullptr,
                         int n_faces = 0, double thickness = 0.0);
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

// ---- what the constrained step reports, and its warm-start cache (api_contact_step.cpp; the step itself:
// api_world.hpp)
/// Forget the previous step's contact classes: the next constrained step on cd solves without a warm start.
void clearWarmStart(ContactStepData& cd);
/// Number of rows in the warm-start cache of cd (0 when it is empty).
int warmStartSize(const ContactStepData& cd);
/// The cache: the previous step's row keys, the classes (0..3) and the impulses of those rows (warmStartSize
/// each). Returns false, leaving `impulses` untouched, when the cache holds classes only.
bool readWarmStart(const ContactStepData& cd, std::int64_t* keys, int* classes, double* impulses);
/// Replaces the cache with n rows (n = 0 empties it), with their impulses unless null; invalid_argument for a
/// class outside 0..3 or an impulse that is not finite.
void writeWarmStart(ContactStepData& cd, const std::int64_t* keys, const int* classes, const double* impulses, int n);
int lastRowCount(const ContactStepData& cd);
/// Smallest signed distance among the contacts of the last step (+inf without contacts).
double lastDeepest(const ContactStepData& cd);
/// The boxed LCP of the last step (m = lastRowCount): A (m x m), b, lo, hi, x (m), findex (m).
void readLastLcp(const Model& model, const ContactStepData& cd, double* A, double* b, double* lo, double* hi, double* x, int* findex);
int lastContactCount(const ContactStepData& cd);
/// Per contact of the last step: normal impulse (n), friction impulse (n x 3, world), class of the
/// normal row (n; LcpClass codes), and the solver stage and friction-dropped flag (2).
void readLastImpulses(const ContactStepData& cd, double* normal, double* friction, int* classes, int* status);
/// Rows of the last step (m = lastRowCount): kind (RowKind codes), contact or dof index, LCP class.
void readLastRows(const ContactStepData& cd, int* kinds, int* index, int* classes);
/// Contacts of the last step (as readContacts).
void readLastContacts(const ContactStepData& cd, double* points, double* normals, double* distances, int* geom_a,
                      int* geom_b, int* types);

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
/// Test-only: the same LCP with A = J K^T given by its factors (J, K: n x dim, row-major; the coordinates
/// in `blocks` ranges blockStart[0..blocks]) and A left to the solver (BoxedLcp::lazyA). Outputs as
/// solveBoxedLcp, status[1] = whether A was formed densely, and dx_db (n x n, row-major). iterativeSize and
/// sweepsWork: BoxedLcpOptions::iterativeClampingSize and sweepsFirstWork.
void solveBoxedLcpFromFactors(int n, int dim, const double* J, const double* K, int blocks, const int* blockStart,
                              const double* b, const double* lo, const double* hi, const int* findex,
                              const int* warm, int iterativeSize, double sweepsWork, double* x, double* w,
                              int* classes, int* status, double* dx_db);
/// Test-only: projected conjugate gradients alone (solveBoxedLcpProjectedCg, default options and budget) on
/// the LCP given by its factors as in solveBoxedLcpFromFactors, from the impulses x (overwritten by the
/// answer; w = A x + b). *valid: whether the answer passed the check. Returns the products with A spent.
int projectedCgFromFactors(int n, int dim, const double* J, const double* K, int blocks, const int* blockStart,
                           const double* b, const double* lo, const double* hi, const int* findex, double* x,
                           double* w, int* valid);


// ---- trajectory optimisation (api_trajopt.cpp; trajopt/riccati.hpp)
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
