// Helpers shared by the ABA-family algorithms (not part of the public C++ API).
#pragma once

#include <cmath>

#include "rigidiff/macros.hpp"
#include "rigidiff/multibody/data.hpp"

namespace rigidiff {
namespace detail {

// D^-1 of a small SPD matrix (n <= 6) by an explicit Cholesky factorisation D = L L^T and
// D^-1 = L^-T L^-1: plain loops, no blocked solver. Returns false unless D is positive definite.
inline bool invertSmallSpd(const MatJJ& D, Mat6& Dinv) {
  const int n = static_cast<int>(D.rows());
  double L[6][6] = {}, Li[6][6] = {};
  for (int j = 0; j < n; ++j) {
    double d = D(j, j);
    for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
    if (!(d > 0.0)) return false;
    L[j][j] = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      double s = D(i, j);
      for (int k = 0; k < j; ++k) s -= L[i][k] * L[j][k];
      L[i][j] = s / L[j][j];
    }
  }
  for (int j = 0; j < n; ++j) {  // Li = L^-1, lower triangular
    Li[j][j] = 1.0 / L[j][j];
    for (int i = j + 1; i < n; ++i) {
      double s = 0.0;
      for (int k = j; k < i; ++k) s -= L[i][k] * Li[k][j];
      Li[i][j] = s / L[i][i];
    }
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = 0.0;
      for (int k = i; k < n; ++k) s += Li[k][i] * Li[k][j];
      Dinv(i, j) = Dinv(j, i) = s;
    }
  return true;
}

/// Inverts D = S^T Yaba S + diag(armature + extra) of joint i into data.Dinv[i], with U = Yaba S
/// written into data.U. S is the (6, nv) subspace matrix the pass works with (local or world).
/// Returns false when D is not positive definite.
inline bool invertJointInertia(const Model& model, Data& data, const Mat6X& Sall, int i, const double* extra_diag) {
  const JointModel& jm = model.joints[i];
  const int n = jm.nv;
  const auto S = Sall.middleCols(jm.idx_v, n);
  auto U = data.U.middleCols(jm.idx_v, n);
  U.noalias() = data.Yaba[i] * S;
  MatJJ D(n, n);
  D.noalias() = S.transpose() * U;
  D.diagonal() += model.armature.segment(jm.idx_v, n);
  if (extra_diag) D.diagonal() += Eigen::Map<const VecX>(extra_diag + jm.idx_v, n);
  return invertSmallSpd(D, data.Dinv[i]);
}

/// `D`: the joint's articulated inertia along its axis when known; a value that is not finite means overflow
[[noreturn]] inline void throwSingular(const Model& model, int i, double D = 0.0) {
  if (!std::isfinite(D))
    RD_THROW(std::runtime_error, "articulated inertia of joint '"
                                     << model.names[i] << "' is not finite (" << D
                                     << "): the state holds values too large for double precision");
  RD_THROW(std::runtime_error, "articulated inertia of joint '"
                                   << model.names[i]
                                   << "' is singular: the bodies it moves have no mass or inertia along its axes");
}

}  // namespace detail
}  // namespace rigidiff
