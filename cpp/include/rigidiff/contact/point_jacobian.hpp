// The point maps of the contact layer: for a contact side's body (BodyRef), the velocity of a world point
// on it, its Jacobian row along a direction, the derivatives of quantities that move with it, through one
// switch on the kind (no virtual calls in the loops). The articulated case is the chain walk of
// algorithm/point_jacobian.hpp; a particle's point map is the identity on its 3 dofs (in world axes, which
// never turn), so its rows are read off directly and the terms of a turning chain vanish for it.
#pragma once

#include "rigidiff/algorithm/point_jacobian.hpp"
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

/// out.col(c) += D S_c over the dofs c moving body b, for a k x 6 block D (the derivative of a quantity with
/// respect to the body's world-origin twist); a particle's S_c is the translation along world axis c.
template <typename Block, typename Out>
void addBodyProduct(const Model& model, const Data& data, const BodyRef& b, const Block& D, Out&& out) {
  switch (b.kind) {
    case BodyKind::Static: return;
    case BodyKind::Particle:
      for (int k = 0; k < 3; ++k) out.col(model.joints[b.index].idx_v + k).noalias() += D.col(k);
      return;
    case BodyKind::Articulated: addChainProduct(model, data, b.index, D, out); return;
  }
}

/// The motion terms d nu_b / dq_c = S_c x (nu_b - nu_parent(c)) of body b's velocity, times sign, into X:
/// zero for a particle (its axes never turn) and a static body.
inline void addBodyMotionTerms(const Model& model, const Data& data, const BodyRef& b, const Mat6X& nu, double sign,
                               Mat6X& X) {
  if (b.kind == BodyKind::Articulated) addChainMotionTerms(model, data, b.index, nu, sign, X);
}

}  // namespace rigidiff
