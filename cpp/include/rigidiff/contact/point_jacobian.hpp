// The point maps of the contact layer: for a contact side's body (BodyRef), the velocity of a world point
// on it, its Jacobian row along a direction, the derivatives of quantities that move with it, through one
// switch on the kind (no virtual calls in the loops). The articulated case is the chain walk of
// algorithm/point_jacobian.hpp; a particle's point map is the identity on its 3 dofs (in world axes, which
// never turn), so its rows are read off directly and the terms of a turning chain vanish for it.
#pragma once

#include "rigidiff/algorithm/point_jacobian.hpp"
#include "rigidiff/collision/feature_stencil.hpp"
#include "rigidiff/contact/body_ref.hpp"

namespace rigidiff {

/// Velocity of the world point p fixed to body b, from the joints' world-origin spatial velocities nu
/// (6 x njoints, jointVelocities).
inline Vec3 pointVelocity(const BodyRef& b, const Mat6X& nu, const Vec3& p) {
  switch (b.kind) {
    case BodyKind::Static: return Vec3::Zero();
    case BodyKind::Particle: return nu.col(b.index).head<3>();
    case BodyKind::Articulated: break;
  }
  return nu.col(b.index).head<3>() + nu.col(b.index).tail<3>().cross(p);
}

/// Calls f(c) for every dof c that moves body b.
template <typename F>
void forBodyDofs(const Model& model, const BodyRef& b, const F& f) {
  switch (b.kind) {
    case BodyKind::Static: return;
    case BodyKind::Particle:
      for (int k = 0; k < 3; ++k) f(model.joints[b.index].idx_v + k);
      return;
    case BodyKind::Articulated: forChainDofs(model, b.index, f); return;
  }
}

/// out[c - dof0] += sign d^T J_p[:, c] over the dofs c moving body b: the velocity along d of the world point
/// p fixed to it, per dof.
inline void addPointRow(const Model& model, const Data& data, const BodyRef& b, const Vec3& p, const Vec3& d,
                        double sign, int dof0, double* out) {
  switch (b.kind) {
    case BodyKind::Static: return;
    case BodyKind::Particle:
      for (int k = 0; k < 3; ++k) out[model.joints[b.index].idx_v + k - dof0] += sign * d[k];
      return;
    case BodyKind::Articulated: addChainPointRow(model, data, b.index, p, d, sign, dof0, out); return;
  }
}

/// out.col(c) += sum_k D_k dx_k/dq_c over the dofs c moving body b, for the derivative D (k rows, 3 columns
/// per point from column col0) of a quantity with respect to the world points x_k of stencil s, fixed on
/// body b: the chain through b's point map. A link moves a point with its twist (dx/dxi = [I, -[x]x], so
/// the points' terms gather into one k x 6 block for the chain walk); a particle translates all of them.
template <typename Block, typename Out>
void addStencilProduct(const Model& model, const Data& data, const BodyRef& b, const FeatureStencil& s,
                       const Block& D, int col0, Out&& out) {
  constexpr int Rows = Block::RowsAtCompileTime;
  switch (b.kind) {
    case BodyKind::Static: return;
    case BodyKind::Particle: {
      Eigen::Matrix<double, Rows, 3> T = D.template middleCols<3>(col0);
      for (int k = 1; k < s.count; ++k) T += D.template middleCols<3>(col0 + 3 * k);
      for (int k = 0; k < 3; ++k) out.col(model.joints[b.index].idx_v + k).noalias() += T.col(k);
      return;
    }
    case BodyKind::Articulated: {
      Eigen::Matrix<double, Rows, 6> T = Eigen::Matrix<double, Rows, 6>::Zero();
      for (int k = 0; k < s.count; ++k) {
        const auto Dk = D.template middleCols<3>(col0 + 3 * k);
        T.template leftCols<3>() += Dk;
        T.template rightCols<3>().noalias() -= Dk * skew(s.points[k]);
      }
      addChainProduct(model, data, b.index, T, out);
      return;
    }
  }
}

/// The motion terms d nu_b / dq_c = S_c x (nu_b - nu_parent(c)) of body b's velocity, times sign, into X:
/// zero for a particle (its axes never turn) and a static body.
inline void addBodyMotionTerms(const Model& model, const Data& data, const BodyRef& b, const Mat6X& nu, double sign,
                               Mat6X& X) {
  if (b.kind == BodyKind::Articulated) addChainMotionTerms(model, data, b.index, nu, sign, X);
}

}  // namespace rigidiff
