#include "rigidiff/algorithm/external_wrench_derivatives.hpp"

#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"

namespace rigidiff {

namespace {
// (force, torque) of frame f's wrench moved to the world origin, and the frame's world position
Vec6 wrenchAtOrigin(const double* w, const Vec3& p) {
  Vec6 W;
  W.head<3>() = Vec3(w[0], w[1], w[2]);
  W.tail<3>() = Vec3(w[3], w[4], w[5]) + p.cross(W.head<3>());
  return W;
}

// The wrench of frame f: false when it is zero or on a body welded to the world.
struct FrameWrench {
  int joint;
  Vec3 p;      // world position of the frame origin
  Vec3 force;  // world axes
  Vec6 W;      // the wrench at the world origin
};

bool frameWrench(const Model& model, const Data& data, const double* frame_wrenches, std::size_t f, FrameWrench& out) {
  const double* w = frame_wrenches + 6 * f;
  out.joint = model.frames[f].joint;
  if (out.joint == 0 || Eigen::Map<const Vec6>(w).isZero(0.0)) return false;
  out.p = framePlacement(model, data, static_cast<int>(f)).p;
  out.force = Vec3(w[0], w[1], w[2]);
  out.W = wrenchAtOrigin(w, out.p);
  return true;
}
}  // namespace

void addExternalWrenchDerivatives(const Model& model, Data& data, const double* q, const double* frame_wrenches,
                                  MatX& D) {
  computeJointJacobians(model, data, q);
  const Mat6X& S = data.J;
  FrameWrench fw;
  for (std::size_t f = 0; f < model.frames.size(); ++f) {
    if (!frameWrench(model, data, frame_wrenches, f, fw)) continue;
    const int b = fw.joint;
    const Vec3& p = fw.p;
    const Vec6& W = fw.W;
    const Vec3& force = fw.force;
    // dofs k of the chain (joint jk); rows m of joints jm at or below jk on the chain
    for (int jk = b; jk > 0; jk = model.parents[jk]) {
      const JointModel& ck = model.joints[jk];
      for (int k = ck.idx_v; k < ck.idx_v + ck.nv; ++k) {
        const Vec6 sk = S.col(k);
        const Vec6 y = crossForce(sk, W);
        const Vec3 uk = sk.head<3>() + sk.tail<3>().cross(p);  // velocity of the frame origin along dof k
        const Vec3 fu = force.cross(uk);
        for (int jm = b; jm > 0; jm = model.parents[jm]) {
          const JointModel& cm = model.joints[jm];
          const bool below = model.supports(jk, jm);
          for (int m = cm.idx_v; m < cm.idx_v + cm.nv; ++m) {
            // d(J_b^T w)_m / dq_k = -a_m . (f x u_k) - [below] S_m . (s_k x* W); tau carries its negative
            double h = S.col(m).tail<3>().dot(fu);
            if (below) h += S.col(m).dot(y);
            D(m, k) += h;
          }
        }
      }
    }
  }
}

void addExternalWrenchVJP(const Model& model, Data& data, const double* q, const double* frame_wrenches,
                          const double* lambda, double* g) {
  computeJointJacobians(model, data, q);
  const Mat6X& S = data.J;
  Eigen::Map<const VecX> lam(lambda, model.nv);
  FrameWrench fw;
  for (std::size_t f = 0; f < model.frames.size(); ++f) {
    if (!frameWrench(model, data, frame_wrenches, f, fw)) continue;
    const int b = fw.joint;
    const Vec3& p = fw.p;
    const Vec6& W = fw.W;
    const Vec3& force = fw.force;
    // V = sum_m S_m lambda_m over the chain (a virtual velocity at the world origin); walking up,
    // below holds the part contributed by the joints at or below the current one
    Vec6 V = Vec6::Zero();
    for (int j = b; j > 0; j = model.parents[j]) {
      const JointModel& cj = model.joints[j];
      V.noalias() += S.middleCols(cj.idx_v, cj.nv) * lam.segment(cj.idx_v, cj.nv);
    }
    const Vec3 omega = V.tail<3>();
    Vec6 below = Vec6::Zero();
    for (int j = b; j > 0; j = model.parents[j]) {
      const JointModel& cj = model.joints[j];
      below.noalias() += S.middleCols(cj.idx_v, cj.nv) * lam.segment(cj.idx_v, cj.nv);
      for (int k = cj.idx_v; k < cj.idx_v + cj.nv; ++k) {
        const Vec6 sk = S.col(k);
        const Vec3 uk = sk.head<3>() + sk.tail<3>().cross(p);
        // d/dq_k of -w . shift(V, p): the chain part below rotates with s_k, the origin moves with u_k
        g[k] -= W.dot(crossMotion(sk, below)) + force.dot(omega.cross(uk));
      }
    }
  }
}

}  // namespace rigidiff
