#include "rigidiff/algorithm/point_jacobian.hpp"

#include "rigidiff/spatial/se3.hpp"

namespace rigidiff {

void addChainPointRow(const Model& model, const Data& data, int j, const Vec3& p, const Vec3& d, double sign,
                      int dof0, double* out) {
  const Vec3 pxd = p.cross(d);
  forChainDofs(model, j, [&](int c) {
    out[c - dof0] += sign * (d.dot(data.J.col(c).head<3>()) + pxd.dot(data.J.col(c).tail<3>()));
  });
}

void addChainMotionTerms(const Model& model, const Data& data, int j, const Mat6X& nu, double sign, Mat6X& X) {
  for (int i = j; i > 0; i = model.parents[i]) {
    const JointModel& jm = model.joints[i];
    const Vec6 delta = nu.col(j) - nu.col(model.parents[i]);
    for (int c = jm.idx_v; c < jm.idx_v + jm.nv; ++c) X.col(c) += sign * crossMotion(data.J.col(c), delta);
  }
}

}  // namespace rigidiff
