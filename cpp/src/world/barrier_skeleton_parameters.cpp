// Derivatives of a barrier step with respect to the skeletons' parameters (world/barrier_skeleton_parameters.hpp).
#include "rigidiff/world/barrier_skeleton_parameters.hpp"

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/regressor.hpp"
#include "rigidiff/algorithm/rnea.hpp"
#include "rigidiff/world/floating_base_chart.hpp"
#include "rigidiff/world/free_joint_motion.hpp"

namespace rigidiff {

int skeletonParameterCount(const Model& model) { return model.njoints > 1 ? 10 * (model.njoints - 1) + 3 * model.nv : 0; }

namespace {

// Y (nv x 10 (njoints - 1)) with rnea's rigid-body terms = Y theta at the kinematics rnea left in data: body i's
// block is X_i^T A(v_i, a_i), X_i its body Jacobian in its own frame (6 x nv) and A the body regressor, since the
// joint torques are the bodies' regressor forces pulled back along their Jacobians. Built from rnea's own pass, so
// every joint rnea steps (universal ones too) is covered.
MatX rigidBodyRegressor(const Model& model, const Data& data) {
  const int nv = model.nv;
  MatX Y = MatX::Zero(nv, 10 * (model.njoints - 1));
  std::vector<Mat6X> X(model.njoints, Mat6X::Zero(6, nv));
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const Mat6X& parent = X[model.parents[i]];
    for (int c = 0; c < nv; ++c)
      if (parent.col(c).any()) X[i].col(c) = data.liMi[i].actInv(Vec6(parent.col(c)));
    X[i].middleCols(jm.idx_v, jm.nv) += data.S.middleCols(jm.idx_v, jm.nv);
    Y.middleCols<10>(10 * (i - 1)).noalias() = X[i].transpose() * bodyRegressor(data.v[i], data.a_gf[i]);
  }
  return Y;
}

}  // namespace

void skeletonParameterDerivatives(Model& model, Data& data, double h, const double* q, const double* v,
                                  const double* q_next, MatX& Ps, MatX& Pg) {
  const int nv = model.nv;
  Ps.setZero(nv, skeletonParameterCount(model));
  Pg.setZero(nv, 3);
  if (nv == 0) return;
  // the step's terms as its potential takes them: dq in the step's chart, the predicted move h v~ (v plus a free
  // joint's frame turn), the springs' stretch d_r + dq, the implicit gyroscopic impulse
  VecX dq(nv), v_pred = Eigen::Map<const VecX>(v, nv), stretch(nv);
  stepDisplacement(model, q, q_next, dq.data());
  addStepFrameTurn(model, v, h, v_pred.data());
  difference(model, model.rest_position.data(), q, stretch.data());
  stretch += dq;
  const VecX a = (dq - h * v_pred) / (h * h);
  // gravity: rnea(q, 0, 0) is linear in g
  const Vec3 g = model.gravity;
  const VecX zero = VecX::Zero(nv);
  for (int k = 0; k < 3; ++k) {
    model.gravity = Vec3::Unit(k);
    Pg.col(k) = h * h * rnea(model, data, q, zero.data(), zero.data(), false);
  }
  model.gravity = g;
  rnea(model, data, q, v, a.data(), false);
  const int ni = 10 * (model.njoints - 1);
  Ps.leftCols(ni) = h * h * rigidBodyRegressor(model, data);
  Ps.middleCols(ni, nv).diagonal() = h * dq;              // damping
  Ps.middleCols(ni + nv, nv).diagonal() = h * h * stretch;  // stiffness
  Ps.middleCols(ni + 2 * nv, nv).diagonal() = h * h * a;    // armature: M's diagonal, times a
  // the frame turn's damping force -h^2 (D + h K)(v~ - v) (floating_base_chart.hpp)
  Ps.middleCols(ni, nv).diagonal() -= h * h * (v_pred - Eigen::Map<const VecX>(v, nv));
  Ps.middleCols(ni + nv, nv).diagonal() -= h * h * h * (v_pred - Eigen::Map<const VecX>(v, nv));
  if (model.implicit_gyroscopic) {  // the implicit gyroscopic impulse's force -h P^T r_g(v, theta)
    RowMatX Pi = RowMatX::Zero(nv, ni);
    addGyroscopicImpulseInertiaColumns(model, v, h, MatX(-h * MatX::Identity(nv, nv)), Pi);
    Ps.leftCols(ni) += Pi;
  }
}

}  // namespace rigidiff
