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

}  // namespace bind
}  // namespace rigidiff
