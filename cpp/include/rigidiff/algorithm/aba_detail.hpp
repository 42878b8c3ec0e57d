// Helpers shared by the ABA-family algorithms (not part of the public C++ API).
#pragma once

#include "rigidiff/macros.hpp"
#include "rigidiff/multibody/data.hpp"

namespace rigidiff {
namespace detail {

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
  Eigen::LLT<MatJJ> llt(D);
  if (llt.info() != Eigen::Success) return false;
  data.Dinv[i].topLeftCorner(n, n) = llt.solve(MatJJ::Identity(n, n));
  return true;
}

[[noreturn]] inline void throwSingular(const Model& model, int i) {
  RD_THROW(std::runtime_error, "articulated inertia of joint '"
                                   << model.names[i]
                                   << "' is singular: the bodies it moves have no mass or inertia along its axes");
}

}  // namespace detail
}  // namespace rigidiff
