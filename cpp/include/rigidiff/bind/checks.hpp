// Input checks and output copies shared by the binding sources (not part of the C++ API).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/multibody/data.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"
#include "rigidiff/world/step_vjp.hpp"
#include "rigidiff/world/step_derivatives.hpp"

namespace rigidiff {
namespace bind {

inline SE3 readPlacement(const double* x) {
  checkFinite(x, 12, "placement");
  Mat3 R;
  R << x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8];
  RD_CHECK_ARG((R.transpose() * R - Mat3::Identity()).norm() < 1e-6 && R.determinant() > 0.0,
               "placement rotation is not a proper rotation matrix");
  return SE3(R, Vec3(x[9], x[10], x[11]));
}

inline Inertia readInertia(const double* x) {
  checkFinite(x, 10, "inertia");
  RD_CHECK_ARG(x[0] >= 0.0, "mass must be >= 0, got " << x[0]);
  Mat3 I;
  I << x[4], x[5], x[6], x[5], x[7], x[8], x[6], x[8], x[9];
  return Inertia(x[0], Vec3(x[1], x[2], x[3]), I);
}

inline void checkState(const Model& m, const double* q, const double* v, const char* qname = "q",
                       const char* vname = "v") {
  checkConfiguration(m, q, 1e-6, qname);
  if (v) checkFinite(v, m.nv, vname);
}

/// Rows of states Q (rows x nq) and V (rows x nv), and of torques TAU (rows x nv) unless null, named "Q[i]", ...
inline void checkStateRows(const Model& m, const double* Q, const double* V, int rows, const double* TAU = nullptr) {
  for (int s = 0; s < rows; ++s) {
    const std::string row = "[" + std::to_string(s) + "]";
    checkState(m, Q + static_cast<long>(s) * m.nq, V + static_cast<long>(s) * m.nv, ("Q" + row).c_str(),
               ("V" + row).c_str());
    if (TAU) checkFinite(TAU + static_cast<long>(s) * m.nv, m.nv, ("TAU" + row).c_str());
  }
}

/// The inputs of a reverse pass over a recorded rollout of T steps: Q, V (T + 1 rows), taus (T rows) and
/// the cotangents GQ, GV (T + 1 rows of nv).
inline void checkRecordedRollout(const Model& m, const double* Q, const double* V, const double* taus, int T,
                                 const double* GQ, const double* GV) {
  RD_CHECK_ARG(T >= 0, "the rollout has a negative number of steps");
  checkStateRows(m, Q, V, T + 1);
  checkFinite(taus, static_cast<long>(T) * m.nv, "taus");
  checkFinite(GQ, static_cast<long>(T + 1) * m.nv, "dL_dQ");
  checkFinite(GV, static_cast<long>(T + 1) * m.nv, "dL_dV");
}

inline void checkModelGroups(int groups) {
  RD_CHECK_ARG(groups >= 0 && groups < 32, "unknown parameter groups " << groups);
}

// points the parameter cotangents of `groups` into consecutive slices of g (zeroed)
inline StepCotangents parameterSlices(const Model& m, int groups, double* g) {
  std::fill(g, g + rigidiff::stepParameterCount(m, groups), 0.0);
  return parameterCotangentSlices(m, groups, g);
}

// the zeroed outputs of a step's or a rollout's reverse pass: state cotangents (q then v, 2 nv), the
// torques' (nv, or null when the caller fills them per step) and the parameters of `groups`
inline StepCotangents cotangentOutputs(const Model& m, int groups, double* g_state, double* g_tau, double* g_params) {
  StepCotangents sc = parameterSlices(m, groups, g_params);
  std::fill(g_state, g_state + 2 * m.nv, 0.0);
  sc.q = g_state;
  sc.v = g_state + m.nv;
  if (g_tau) {
    std::fill(g_tau, g_tau + m.nv, 0.0);
    sc.tau = g_tau;
  }
  return sc;
}

// Finite inputs can still overflow (velocities of 1e300): report it rather than return inf or NaN.
inline void checkResult(const double* x, long n, const char* what) {
  // the common case: x * 0 sums to 0 unless some x is inf or NaN. A vectorised sum; allFinite() tests the
  // entries one by one (5 us on talos' step Jacobians, 6 x 38 x 38 entries)
  if (std::isfinite((Eigen::Map<const VecX>(x, n).array() * 0.0).sum())) return;
  for (long k = 0; k < n; ++k)
    if (!std::isfinite(x[k]))
      RD_THROW(std::runtime_error,
               what << " produced a non-finite value (" << x[k] << ") : the inputs are too large for double precision");
}

inline void checkFrame(const Model& m, int f) {
  if (f < 0 || f >= static_cast<int>(m.frames.size()))
    RD_THROW(std::out_of_range, "frame index " << f << " out of range [0, " << m.frames.size() << ")");
}

// prepares data.fext from frame wrenches (nframes x 6) or reports that there are none
inline bool prepareWrenches(const Model& m, Data& d, const double* q, const double* fext) {
  if (!fext) return false;
  checkFinite(fext, 6 * static_cast<long>(m.frames.size()), "f_ext");
  forwardKinematics(m, d, q);
  externalWrenchesFromFrames(m, d, fext);
  return true;
}

using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

inline void copyOut(const MatX& M, double* out, const char* what) {
  Eigen::Map<RowMat>(out, M.rows(), M.cols()) = M;
  checkResult(out, static_cast<long>(M.size()), what);
}

/// Runs compute (which fills d.dq_dq ... d.dv_dtau) with the six step Jacobians written straight into jac
/// (6 nv^2 doubles, each block column-major: Python hands out their transposed views), then checks them.
template <typename Compute>
void intoStepJacobians(const Model& m, Data& d, double* jac, Compute&& compute) {
  d.setStepJacobianStorage(jac);
  try {
    compute();
  } catch (...) {
    d.setStepJacobianStorage(nullptr);
    throw;
  }
  d.setStepJacobianStorage(nullptr);
  checkResult(jac, 6L * m.nv * m.nv, "step_jacobians");
}

/// stepDerivatives into jac, as above.
inline void stepDerivativesInto(const Model& m, Data& d, const double* q, const double* v, const double* tau, double dt,
                                double* q_out, double* v_out, const double* fext, double* jac) {
  intoStepJacobians(m, d, jac, [&] { stepDerivatives(m, d, q, v, tau, dt, q_out, v_out, fext); });
}

/// The inputs of one step: the state, finite torques and frame wrenches (nframes x 6, or null).
inline void checkStepInputs(const Model& m, const double* q, const double* v, const double* tau, const double* fext) {
  checkState(m, q, v);
  checkFinite(tau, m.nv, "tau");
  if (fext) checkFinite(fext, 6 * static_cast<long>(m.frames.size()), "f_ext");
}

/// A step's reverse pass as the bindings run it: checks the inputs, zeroes the outputs g_state (2 nv),
/// g_tau (nv) and g_params (of `groups`), runs vjp(cotangents) and checks what it wrote.
template <typename Vjp>
void stepVJPInto(const Model& m, const double* q, const double* v, const double* tau, const double* fext,
                 const double* gq, const double* gv, int groups, double* g_state, double* g_tau, double* g_params,
                 Vjp&& vjp) {
  checkModelGroups(groups);
  checkStepInputs(m, q, v, tau, fext);
  checkFinite(gq, m.nv, "dL_dq_next");
  checkFinite(gv, m.nv, "dL_dv_next");
  vjp(cotangentOutputs(m, groups, g_state, g_tau, g_params));
  checkResult(g_state, 2 * m.nv, "step_vjp");
  checkResult(g_tau, m.nv, "step_vjp");
  checkResult(g_params, rigidiff::stepParameterCount(m, groups), "step_vjp");
}

/// A recorded rollout's reverse pass, likewise: g_taus (T x nv), g_state (2 nv), g_params; backward(cotangents).
template <typename Backward>
void rolloutBackwardInto(const Model& m, const double* Q, const double* V, const double* taus, int T,
                         const double* GQ, const double* GV, int groups, double* g_taus, double* g_state,
                         double* g_params, Backward&& backward) {
  checkModelGroups(groups);
  checkRecordedRollout(m, Q, V, taus, T, GQ, GV);
  backward(cotangentOutputs(m, groups, g_state, nullptr, g_params));
  checkResult(g_state, 2 * m.nv, "rollout backward");
  checkResult(g_taus, static_cast<long>(T) * m.nv, "rollout backward");
  checkResult(g_params, rigidiff::stepParameterCount(m, groups), "rollout backward");
}

}  // namespace bind
}  // namespace rigidiff
