#include "rigidiff/algorithm/regressor.hpp"

#include "rigidiff/algorithm/rnea.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

Vec10 inertiaParameters(const Inertia& I) {
  Vec10 th;
  const Vec3& c = I.com;
  Mat3 Io = I.Ic - I.mass * c * c.transpose();
  Io.diagonal().array() += I.mass * c.squaredNorm();
  th << I.mass, I.mass * c, Io(0, 0), Io(0, 1), Io(0, 2), Io(1, 1), Io(1, 2), Io(2, 2);
  return th;
}

namespace {
// L(x) iota = Io x for the 6 entries iota = (xx, xy, xz, yy, yz, zz) of a symmetric Io
Eigen::Matrix<double, 3, 6> inertiaProductMatrix(const Vec3& x) {
  Eigen::Matrix<double, 3, 6> L;
  L << x[0], x[1], x[2], 0.0, 0.0, 0.0,  //
      0.0, x[0], 0.0, x[1], x[2], 0.0,   //
      0.0, 0.0, x[0], 0.0, x[1], x[2];
  return L;
}
}  // namespace

Mat6x10 bodyRegressor(const Vec6& v, const Vec6& a) {
  // with a~ = a_lin + w x v_lin (the classical acceleration of the origin):
  //   force  = m a~ + ([a_ang]x + [w]x [w]x) h
  //   torque = -[a~]x h + (L(a_ang) + [w]x L(w)) iota
  const Vec3 vl = v.head<3>(), w = v.tail<3>(), al = a.head<3>(), aw = a.tail<3>();
  const Vec3 acc = al + w.cross(vl);
  const Mat3 W = skew(w);
  Mat6x10 A = Mat6x10::Zero();
  A.block<3, 1>(0, 0) = acc;
  A.block<3, 3>(0, 1) = skew(aw) + W * W;
  A.block<3, 3>(3, 1) = -skew(acc);
  A.block<3, 6>(3, 4) = inertiaProductMatrix(aw) + W * inertiaProductMatrix(w);
  return A;
}

const MatX& inverseDynamicsRegressor(const Model& model, Data& data, const double* q, const double* v,
                                     const double* a) {
  for (int i = 1; i < model.njoints; ++i)
    RD_CHECK_ARG(!model.joints[i].variableSubspace(),
                 "the inverse-dynamics regressor does not support universal joints (joint " << model.names[i] << ")");
  rnea(model, data, q, v, a, false);  // v and a_gf (gravity included) of every joint, in joint frames
  data.Yreg.setZero();
  Mat6x10 F;
  for (int i = 1; i < model.njoints; ++i) {
    F = bodyRegressor(data.v[i], data.a_gf[i]);
    const int col = 10 * (i - 1);
    // the body's force reaches every joint that supports it: tau_j = S_j^T jX*i F
    for (int j = i; j > 0; j = model.parents[j]) {
      const JointModel& jm = model.joints[j];
      data.Yreg.block(jm.idx_v, col, jm.nv, 10).noalias() = data.S.middleCols(jm.idx_v, jm.nv).transpose() * F;
      if (model.parents[j] > 0)
        for (int k = 0; k < 10; ++k) F.col(k) = data.liMi[j].actForce(Vec6(F.col(k)));
    }
  }
  return data.Yreg;
}

}  // namespace rigidiff
