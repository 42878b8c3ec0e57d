// The C++ surface seen by Cython: plain pointers and sizes, no Eigen types. Every function checks
// its inputs (finite values, unit quaternions, indices) and throws: invalid_argument -> ValueError,
// out_of_range -> IndexError, runtime_error -> RuntimeError.
#pragma once

#include <string>

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
void setGravity(Model& model, const double* g);
void getGravity(const Model& model, double* g);

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

// ---- time stepping
void step(const Model& m, Data& d, const double* q, const double* v, const double* tau, double dt, const double* fext,
          double* q_out, double* v_out);
void rollout(const Model& m, const double* q0, const double* v0, const double* taus, int T, double dt, double* Q,
             double* V);
void stepBatch(const Model& m, const double* Q, const double* V, const double* TAU, int N, double dt, int threads,
               double* Qout, double* Vout);

}  // namespace bind
}  // namespace rigidiff
