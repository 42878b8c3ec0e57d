// Jacobians of points of a kinematic tree's links by chain walks: the articulated case of the contact
// layer's point maps (contact/point_jacobian.hpp dispatches on a side's kind). Each walks the joints from
// the link's joint to the root, reading the world-axes joint Jacobian columns data.J (from
// computeJointJacobians, at the world origin), and touches only those dofs.
#pragma once

#include "rigidiff/multibody/data.hpp"
#include "rigidiff/multibody/model.hpp"

namespace rigidiff {

/// Calls f(c) for every dof c that moves joint j's link (from j to the root).
template <typename F>
void forChainDofs(const Model& model, int j, const F& f) {
  for (int i = j; i > 0; i = model.parents[i])
    for (int c = model.joints[i].idx_v; c < model.joints[i].idx_v + model.joints[i].nv; ++c) f(c);
}

/// out[c - dof0] += sign d^T J_p[:, c] for each dof c moving joint j's link: the velocity along d of the
/// world point p fixed to the link, per dof (J_p = [I, -[p]x] S_c).
void addChainPointRow(const Model& model, const Data& data, int j, const Vec3& p, const Vec3& d, double sign,
                      int dof0, double* out);

/// out.col(c) += D S_c for each dof c moving joint j's link, with S_c its world-origin twist column and D a
/// k x 6 block (the derivative of a quantity with respect to the link's twist).
template <typename Block, typename Out>
void addChainProduct(const Model& model, const Data& data, int j, const Block& D, Out&& out) {
  forChainDofs(model, j, [&](int c) { out.col(c).noalias() += D * data.J.col(c); });
}

/// The motion terms of a link's velocity: d nu_j / dq_c = S_c x (nu_j - nu_parent(c)) for each dof c
/// moving joint j's link, times sign, added into X.col(c).
void addChainMotionTerms(const Model& model, const Data& data, int j, const Mat6X& nu, double sign, Mat6X& X);

}  // namespace rigidiff
