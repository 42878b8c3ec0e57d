// Lagged smoothed friction of a barrier world (world/barrier_friction.hpp).
#include "rigidiff/world/barrier_friction.hpp"

#include "rigidiff/world/barrier_contacts.hpp"
#include "rigidiff/world/friction_frame.hpp"

namespace rigidiff {

void buildFrictionPairs(const BarrierWorldModel& model, BarrierWorldData& data, double kappa) {
  data.friction.clear();
  const double mu = model.options.friction;
  if (mu <= 0.0) return;
  const auto point = [&](int body, int vertex) -> const Vec3& { return data.x[body][vertex]; };
  for (const BarrierPair& p : data.pairs) {
    FrictionPair f;
    friction_frame::Frame<double> frame;
    if (!friction_frame::pairFrame<double>(model, p, kappa, point, frame, f.body, f.xbar)) continue;
    f.npts = frame.npts;
    for (int k = 0; k < 4; ++k) f.weight[k] = frame.weight[k];
    f.basis = frame.basis;
    f.normal_force = mu * frame.lambda;
    data.friction.push_back(f);
  }
}

namespace {

// out += the friction potential of pair f at q and its derivatives in the coordinates of its one or two bodies
void frictionTerms(const BarrierWorldModel& model, const FrictionPair& f, const double* q, const double* q_n,
                   bool need_gradient, bool need_hessian, BodyPairSum& out) {
  const double eps = model.options.friction_velocity * model.dt;
  const int bodies[2] = {f.body[0], f.npts == 4 ? f.body[3] : -1};
  int slot[4];
  for (int k = 0; k < f.npts; ++k) slot[k] = f.body[k] == bodies[0] ? 0 : 1;
  Eigen::Matrix<double, 24, 1> dq = Eigen::Matrix<double, 24, 1>::Zero();
  for (int s = 0; s < 2; ++s)
    if (bodies[s] >= 0)
      for (int r = 0; r < 12; ++r) dq[12 * s + r] = q[12 * bodies[s] + r] - q_n[12 * bodies[s] + r];
  // slip u = T^T sum_k c_k J_k (q - q_n); G (2 x 24) maps the one or two bodies' coordinates to it
  const Eigen::Matrix<double, 2, 24> G = friction_frame::slipMap<double>(f.npts, f.weight, f.basis, f.xbar, slot);
  const Eigen::Vector2d u = G * dq;
  const double y = u.norm();
  const double f1_over_y = friction_frame::mollifierRatio(y, eps);
  const double f0 = y < eps ? -y * y * y / (3.0 * eps * eps) + y * y / eps + eps / 3.0 : y;
  const double f1_prime = y < eps ? 2.0 / eps - 2.0 * y / (eps * eps) : 0.0;
  out.value += f.normal_force * f0;
  if (need_gradient) out.gradient.noalias() += f.normal_force * f1_over_y * G.transpose() * u;
  if (need_hessian) {
    // d2f0/du2 = f1/y (I - uu^T/y^2) + f1' uu^T/y^2: eigenvalues f1/y and f1' >= 0, already PSD
    Eigen::Matrix2d inner = f1_over_y * Eigen::Matrix2d::Identity();
    if (y > 0.0) {
      const Eigen::Vector2d uh = u / y;
      inner += (f1_prime - f1_over_y) * uh * uh.transpose();
    }
    out.hessian.noalias() += f.normal_force * G.transpose() * inner * G;
  }
}

}  // namespace

double frictionPotential(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* q_n,
                         double* grad, BlockHessian* hessian) {
  data.sums.compute(
      data.friction.size(), grad != nullptr, hessian != nullptr,
      [&](size_t i, int* bodies) {
        const FrictionPair& f = data.friction[i];
        bodies[0] = f.body[0];
        bodies[1] = f.npts == 4 ? f.body[3] : -1;
      },
      [&](size_t i, BodyPairSum& sum) {
        frictionTerms(model, data.friction[i], q, q_n, grad != nullptr, hessian != nullptr, sum);
      });
  return addPairSums(model, data.sums, grad, hessian);
}

}  // namespace rigidiff
