// Free, ball and planar joints (floating and planar bases) in a projective world's coupled step (pd_skeleton.hpp):
// the joints' unknown is their displacement ds in the time step's chart at s0, as in the barrier world's step
// (world/floating_base_chart.hpp; a planar joint on R^2 x SO(2)). Vector-space joints keep s itself as their
// unknown.
#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/deformable/pd_skeleton.hpp"
#include "rigidiff/world/floating_base_chart.hpp"
#include "rigidiff/world/free_joint_motion.hpp"

namespace rigidiff {
namespace deformable {

VecX pdSkeletonConfiguration(const PdSkeletons& sk, const VecX& s0, const VecX& t) {
  if (!sk.rotations) return t;
  VecX s(sk.model.nq);
  moveState(sk.model, 0, s0.data(), t.data(), 1.0, s.data());
  return s;
}

VecX pdSkeletonDisplacement(const PdSkeletons& sk, const VecX& s0, const VecX& t) {
  return sk.rotations ? t : VecX(t - s0);
}

void pdSkeletonStart(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad) {
  const Model& m = sk.model;
  ad.u_step = ad.u0;
  if (!sk.rotations) {
    ad.spring0 = ad.s0 - m.rest_position;
    return;
  }
  checkConfiguration(m, ad.s0.data(), 1e-6, "q (skeleton)");
  ad.spring0.resize(m.nv);
  difference(m, m.rest_position.data(), ad.s0.data(), ad.spring0.data());
  // b(s0, u0) holds the -w x u of a child-frame velocity fixed in space: with the frame turn added, ds / h without
  // forces is the lcp step's velocity (free_joint_motion.hpp)
  addFrameTurnVelocity(m, ad.u0.data(), model.dt, ad.u_step.data());
  addPlanarFrameTurn(m, ad.u0.data(), model.dt, ad.u_step.data());
  checkTurnsBelowPi(m, model.dt, ad.u_step);
}

}  // namespace deformable
}  // namespace rigidiff
