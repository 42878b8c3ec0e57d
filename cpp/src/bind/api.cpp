#include "rigidiff/bind/api.hpp"

#include <cmath>

#include "rigidiff/algorithm/aba.hpp"
#include "rigidiff/algorithm/minverse.hpp"
#include "rigidiff/algorithm/aba_derivatives.hpp"
#include "rigidiff/algorithm/center_of_mass.hpp"
#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/crba.hpp"
#include "rigidiff/algorithm/energy.hpp"
#include "rigidiff/algorithm/external_wrench_derivatives.hpp"
#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/algorithm/rnea.hpp"
#include "rigidiff/algorithm/rnea_derivatives.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/step.hpp"
#include "rigidiff/world/step_derivatives.hpp"

namespace rigidiff {
namespace bind {

int addJoint(Model& model, int parent, int type, const double* placement, const double* axes, const double* inertia,
             const std::string& name) {
  RD_CHECK_ARG(type >= 1 && type <= 7, "joint " << name << ": unknown joint type code " << type);
  checkFinite(axes, 6, "axes");
  return model.addJoint(parent, static_cast<JointType>(type), readPlacement(placement), Vec3(axes[0], axes[1], axes[2]),
                        Vec3(axes[3], axes[4], axes[5]), readInertia(inertia), name);
}

void setJointParameters(Model& model, int j, const double* lower, const double* upper, const double* rest,
                        const double* damping, const double* stiffness, const double* armature, const double* friction,
                        const double* effort, const double* velocity) {
  if (j < 1 || j >= model.njoints) RD_THROW(std::out_of_range, "joint index " << j << " out of range");
  const JointModel& jm = model.joints[j];
  for (int k = 0; k < jm.nq; ++k) {
    model.lower_limit[jm.idx_q + k] = lower[k];
    model.upper_limit[jm.idx_q + k] = upper[k];
    model.rest_position[jm.idx_q + k] = rest[k];
  }
  checkFinite(rest, jm.nq, "rest_position");
  for (int k = 0; k < jm.nv; ++k) {
    const int i = jm.idx_v + k;
    RD_CHECK_ARG(damping[k] >= 0 && stiffness[k] >= 0 && armature[k] >= 0 && friction[k] >= 0 &&
                     std::isfinite(damping[k] + stiffness[k] + armature[k] + friction[k]),
                 "joint " << model.names[j] << ": damping, stiffness, armature and friction must be finite and >= 0");
    RD_CHECK_ARG(effort[k] >= 0 && velocity[k] >= 0, "joint " << model.names[j] << ": limits must be >= 0");
    model.damping[i] = damping[k];
    model.stiffness[i] = stiffness[k];
    model.armature[i] = armature[k];
    model.friction[i] = friction[k];
    model.effort_limit[i] = effort[k];
    model.velocity_limit[i] = velocity[k];
  }
}

int addFrame(Model& model, const std::string& name, int j, const double* placement) {
  return model.addFrame(name, j, readPlacement(placement));
}

void inverseDynamics(const Model& m, Data& d, const double* q, const double* v, const double* a, const double* fext,
                     double* tau) {
  checkState(m, q, v);
  checkFinite(a, m.nv, "a");
  const bool w = prepareWrenches(m, d, q, fext);
  Eigen::Map<VecX>(tau, m.nv) = rnea(m, d, q, v, a, w);
  checkResult(tau, m.nv, "inverse_dynamics");
}

void forwardDynamics(const Model& m, Data& d, const double* q, const double* v, const double* tau, const double* fext,
                     double* ddq) {
  checkState(m, q, v);
  checkFinite(tau, m.nv, "tau");
  const bool w = prepareWrenches(m, d, q, fext);
  Eigen::Map<VecX>(ddq, m.nv) = aba(m, d, q, v, tau, w);
  checkResult(ddq, m.nv, "forward_dynamics");
}

void massMatrix(const Model& m, Data& d, const double* q, double* M) {
  checkState(m, q, nullptr);
  const MatX& Mq = crba(m, d, q);
  // an overflow shows on the diagonal of a positive semi-definite matrix (|M_ij| <= sqrt(M_ii M_jj))
  if (!Mq.diagonal().allFinite()) checkResult(Mq.data(), static_cast<long>(m.nv) * m.nv, "mass_matrix");
  Eigen::Map<MatX>(M, m.nv, m.nv) = Mq;  // symmetric: row/column order is irrelevant
}

void massMatrixInverse(const Model& m, Data& d, const double* q, double* Minv) {
  checkState(m, q, nullptr);
  const MatX& Mi = computeMinverse(m, d, q);
  Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(Minv, m.nv, m.nv) = Mi;
  checkResult(Minv, static_cast<long>(m.nv) * m.nv, "mass_matrix_inverse");
}

void biasForces(const Model& m, Data& d, const double* q, const double* v, double* b) {
  checkState(m, q, v);
  Eigen::Map<VecX>(b, m.nv) = nonLinearEffects(m, d, q, v);
  checkResult(b, m.nv, "bias_forces");
}

void framePoses(const Model& m, Data& d, const double* q, double* poses) {
  checkState(m, q, nullptr);
  forwardKinematics(m, d, q);
  for (std::size_t f = 0; f < m.frames.size(); ++f) {
    const SE3 M = framePlacement(m, d, static_cast<int>(f));
    Eigen::Map<Eigen::Matrix<double, 4, 4, Eigen::RowMajor>> P(poses + 16 * f);
    P.setIdentity();
    P.topLeftCorner<3, 3>() = M.R;
    P.topRightCorner<3, 1>() = M.p;
  }
  checkResult(poses, 16 * static_cast<long>(m.frames.size()), "body_poses");
}

namespace {
// motion of joint frame -> frame f, in frame axes (local) or world axes at the frame origin
Vec6 motionAtFrame(const Model& m, const Data& d, int f, const Vec6& joint_motion, bool local) {
  const Frame& fr = m.frames[f];
  const Vec6 mf = fr.placement.actInv(joint_motion);
  if (local) return mf;
  const Mat3 R = d.oMi[fr.joint].R * fr.placement.R;
  Vec6 out;
  out.head<3>() = R * mf.head<3>();
  out.tail<3>() = R * mf.tail<3>();
  return out;
}
}  // namespace

void frameVelocities(const Model& m, Data& d, const double* q, const double* v, bool local, double* out) {
  checkState(m, q, v);
  forwardKinematics(m, d, q, v);
  for (std::size_t f = 0; f < m.frames.size(); ++f) {
    const int j = m.frames[f].joint;
    Eigen::Map<Vec6>(out + 6 * f) = j == 0 ? Vec6::Zero() : motionAtFrame(m, d, static_cast<int>(f), d.v[j], local);
  }
  checkResult(out, 6 * static_cast<long>(m.frames.size()), "body_velocities");
}

void frameAccelerations(const Model& m, Data& d, const double* q, const double* v, const double* a, bool local,
                        double* out) {
  checkState(m, q, v);
  checkFinite(a, m.nv, "a");
  forwardKinematics(m, d, q, v, a);
  for (std::size_t f = 0; f < m.frames.size(); ++f) {
    const int j = m.frames[f].joint;
    Eigen::Map<Vec6>(out + 6 * f) = j == 0 ? Vec6::Zero() : motionAtFrame(m, d, static_cast<int>(f), d.a[j], local);
  }
  checkResult(out, 6 * static_cast<long>(m.frames.size()), "body_accelerations");
}

void frameJacobian(const Model& m, Data& d, const double* q, int f, bool local, double* J) {
  checkState(m, q, nullptr);
  checkFrame(m, f);
  computeJointJacobians(m, d, q);
  // the core writes column-major 6 x nv; hand Python row-major
  Mat6X& tmp = d.Ftmp;
  rigidiff::frameJacobian(m, d, f, local ? ReferenceFrame::Local : ReferenceFrame::LocalWorldAligned, tmp.data());
  Eigen::Map<Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>>(J, 6, m.nv) = tmp;
  checkResult(J, 6L * m.nv, "body_jacobian");
}

void frameJacobianTimeVariation(const Model& m, Data& d, const double* q, const double* v, int f, bool local,
                                double* dJ) {
  checkState(m, q, v);
  checkFrame(m, f);
  computeJointJacobiansTimeVariation(m, d, q, v);
  Mat6X& tmp = d.Ftmp;
  rigidiff::frameJacobianTimeVariation(m, d, f, local ? ReferenceFrame::Local : ReferenceFrame::LocalWorldAligned,
                                       tmp.data());
  Eigen::Map<Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>>(dJ, 6, m.nv) = tmp;
  checkResult(dJ, 6L * m.nv, "body_jacobian_time_variation");
}

double centerOfMass(const Model& m, Data& d, const double* q, double* com, double* Jcom) {
  checkState(m, q, nullptr);
  if (Jcom) {
    jacobianCenterOfMass(m, d, q);
    Eigen::Map<Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::RowMajor>>(Jcom, 3, m.nv) = d.Jcom;
  } else {
    rigidiff::centerOfMass(m, d, q);
  }
  for (int k = 0; k < 3; ++k) com[k] = d.com_sub[0][k];
  checkResult(com, 3, "center_of_mass");
  if (Jcom) checkResult(Jcom, 3L * m.nv, "center_of_mass_jacobian");
  return d.mass_sub[0];
}

double kineticEnergy(const Model& m, Data& d, const double* q, const double* v) {
  checkState(m, q, v);
  const double e = rigidiff::kineticEnergy(m, d, q, v);
  checkResult(&e, 1, "kinetic_energy");
  return e;
}

double potentialEnergy(const Model& m, Data& d, const double* q) {
  checkState(m, q, nullptr);
  const double e = rigidiff::potentialEnergy(m, d, q);
  checkResult(&e, 1, "potential_energy");
  return e;
}

void integrate(const Model& m, const double* q, const double* dv, double* out) {
  checkState(m, q, nullptr);
  checkFinite(dv, m.nv, "dv");
  rigidiff::integrate(m, q, dv, out);
  checkResult(out, m.nq, "integrate");
}

void difference(const Model& m, const double* q0, const double* q1, double* out) {
  checkConfiguration(m, q0, 1e-6, "q0");
  checkConfiguration(m, q1, 1e-6, "q1");
  rigidiff::difference(m, q0, q1, out);
  checkResult(out, m.nv, "difference");
}

void neutral(const Model& m, double* q) {
  neutralConfiguration(m, q);
}

void normalize(const Model& m, double* q) {
  checkFinite(q, m.nq, "q");
  normalizeConfiguration(m, q);
}

void inverseDynamicsDerivatives(const Model& m, Data& d, const double* q, const double* v, const double* a,
                                const double* fext, double* dtau_dq, double* dtau_dv) {
  checkState(m, q, v);
  checkFinite(a, m.nv, "a");
  if (fext) checkFinite(fext, 6 * static_cast<long>(m.frames.size()), "f_ext");
  computeRNEADerivatives(m, d, q, v, a);
  if (fext) addExternalWrenchDerivatives(m, d, q, fext, d.dtau_dq);
  copyOut(d.dtau_dq, dtau_dq, "inverse_dynamics_derivatives");
  copyOut(d.dtau_dv, dtau_dv, "inverse_dynamics_derivatives");
}

void forwardDynamicsDerivatives(const Model& m, Data& d, const double* q, const double* v, const double* tau,
                                const double* fext, double* ddq_dq, double* ddq_dv, double* ddq_dtau) {
  checkState(m, q, v);
  checkFinite(tau, m.nv, "tau");
  if (fext) checkFinite(fext, 6 * static_cast<long>(m.frames.size()), "f_ext");
  computeABADerivatives(m, d, q, v, tau, fext);
  copyOut(d.ddq_dq, ddq_dq, "forward_dynamics_derivatives");
  copyOut(d.ddq_dv, ddq_dv, "forward_dynamics_derivatives");
  copyOut(d.Minv, ddq_dtau, "forward_dynamics_derivatives");
}

void integrateJacobians(const Model& m, const double* q, const double* dv, double* d_dq, double* d_ddv) {
  checkState(m, q, nullptr);
  checkFinite(dv, m.nv, "dv");
  MatX J(m.nv, m.nv);  // a query of the Python API, not an algorithm: a temporary is fine here
  dIntegrate(m, q, dv, 0, J.data());
  copyOut(J, d_dq, "integrate_jacobians");
  dIntegrate(m, q, dv, 1, J.data());
  copyOut(J, d_ddv, "integrate_jacobians");
}

void differenceJacobians(const Model& m, const double* q0, const double* q1, double* d_dq0, double* d_dq1) {
  checkConfiguration(m, q0, 1e-6, "q0");
  checkConfiguration(m, q1, 1e-6, "q1");
  MatX J(m.nv, m.nv);
  dDifference(m, q0, q1, 0, J.data());
  copyOut(J, d_dq0, "difference_jacobians");
  dDifference(m, q0, q1, 1, J.data());
  copyOut(J, d_dq1, "difference_jacobians");
}

}  // namespace bind
}  // namespace rigidiff
