#include "rigidiff/trajopt/ilqr_solver.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/trajopt/riccati.hpp"
#include "rigidiff/trajopt/trajectory_kernels.hpp"
#include "rigidiff/world/knot_team.hpp"
#include "rigidiff/world/world_step.hpp"

namespace rigidiff {

namespace ilqr_detail {

// the schedule of trajopt/ilqr.py
constexpr double kMuMin = 1e-8, kMuMax = 1e10, kMuFactor = 4.0, kArmijo = 1e-4;
constexpr int kMaxRaises = 8, kAlphas = 12;

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

bool allFinite(const std::vector<double>& x) {
  return std::all_of(x.begin(), x.end(), [](double a) { return std::isfinite(a); });
}

}  // namespace ilqr_detail

IlqrSolver::IlqrSolver(int T, int nq, int nv, const double* S, int nu, const double* lo, const double* hi)
    : costs(T, nq, nv), T_(T), nq_(nq), nv_(nv), nu_(nu), S_(S, S + static_cast<long>(nv) * nu),
      lo_(lo, lo + static_cast<long>(T) * nu), hi_(hi, hi + static_cast<long>(T) * nu), q0_(nq), v0_(nv) {
  const long knots = T + 1, nx = 2L * nv;
  bounded_ = std::any_of(lo_.begin(), lo_.end(), [](double a) { return std::isfinite(a); }) ||
             std::any_of(hi_.begin(), hi_.end(), [](double a) { return std::isfinite(a); });
  Q_.resize(knots * nq), V_.resize(knots * nv), U_.resize(static_cast<long>(T) * nu);
  Qt_ = Q_, Vt_ = V_, Ut_ = U_;
  tau_.resize(static_cast<long>(T) * nv);
  taut_ = tau_;
  jac_.resize(6L * T * nv * nv), A_.resize(T * nx * nx), B_.resize(T * nx * nu);
  lx_.resize(knots * nx), lxx_.resize(knots * nx * nx), lu_.resize(static_cast<long>(T) * nu);
  luu_.resize(static_cast<long>(T) * nu * nu), gq_.resize(knots * nv), gv_.resize(knots * nv);
  gtau_.resize(static_cast<long>(T) * nv), huu_.resize(static_cast<long>(T) * nv * nv);
  dlo_.resize(U_.size()), dhi_.resize(U_.size());
  k_.resize(U_.size()), k_start_.resize(U_.size()), K_.resize(static_cast<long>(T) * nu * nx);
}

void IlqrSolver::setThreads(int threads) {
  RD_CHECK_ARG(threads >= 1, "threads must be >= 1, got " << threads);
  threads_ = threads;
}

void IlqrSolver::torques(const std::vector<double>& U, std::vector<double>& tau) const {
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<RowMat>(tau.data(), T_, nv_).noalias() =
      Eigen::Map<const RowMat>(U.data(), T_, nu_) * Eigen::Map<const RowMat>(S_.data(), nv_, nu_).transpose();
}

bool IlqrSolver::start(const WorldModel& world, WorldData& wd, const double* q0, const double* v0,
                       const double* guess, double mu) {
  const Model& m = world.model;
  checkConfiguration(m, q0, 1e-6, "q0");
  checkFinite(v0, nv_, "v0");
  checkFinite(guess, static_cast<long>(T_) * nv_, "the initial guess");
  std::copy(q0, q0 + nq_, q0_.begin());
  std::copy(v0, v0 + nv_, v0_.begin());
  // the actuated part of the guess (S^T tau: S selects columns), clamped into the bounds
  for (long t = 0; t < T_; ++t)
    for (int j = 0; j < nu_; ++j) {
      double u = 0.0;
      for (int i = 0; i < nv_; ++i) u += S_[i * nu_ + j] * guess[t * nv_ + i];
      U_[t * nu_ + j] = std::min(std::max(u, lo_[t * nu_ + j]), hi_[t * nu_ + j]);
    }
  torques(U_, tau_);
  mu_ = std::max(mu, ilqr_detail::kMuMin);
  std::fill(k_start_.begin(), k_start_.end(), 0.0);
  has_gains_ = linearised_ = false;
  dynamics_seconds_ = 0.0;
  const ilqr_detail::Clock::time_point t0 = ilqr_detail::Clock::now();
  std::copy(q0, q0 + nq_, Q_.begin());
  std::copy(v0, v0 + nv_, V_.begin());
  try {  // the rollout and its step Jacobians in one pass: the first iteration linearises here
    knotJacobians(world, wd, threads_, Q_.data(), V_.data(), tau_.data(), T_, &Q_[nq_], &V_[nv_], jac_.data());
  } catch (const std::exception&) {
    return false;
  }
  dynamics_seconds_ += ilqr_detail::seconds(t0);
  if (!ilqr_detail::allFinite(Q_) || !ilqr_detail::allFinite(V_) || !ilqr_detail::allFinite(jac_)) return false;
  linearised_ = true;
  cost_ = costs.evaluate(m, wd.data, Q_.data(), V_.data(), tau_.data(), nullptr, nullptr, nullptr, nullptr, nullptr);
  return std::isfinite(cost_);
}

bool IlqrSolver::rollout(const WorldModel& world, WorldData& wd, double alpha) {
  const ilqr_detail::Clock::time_point t0 = ilqr_detail::Clock::now();
  try {
    closedLoopRollout(world, wd, q0_.data(), v0_.data(), Q_.data(), V_.data(), U_.data(), k_.data(), K_.data(), alpha,
                      S_.data(), nu_, lo_.data(), hi_.data(), T_, Qt_.data(), Vt_.data(), Ut_.data());
  } catch (const std::exception&) {
    return false;
  }
  dynamics_seconds_ += ilqr_detail::seconds(t0);
  if (!ilqr_detail::allFinite(Qt_) || !ilqr_detail::allFinite(Vt_)) return false;
  torques(Ut_, taut_);
  trial_cost_ = costs.evaluate(world.model, wd.data, Qt_.data(), Vt_.data(), taut_.data(), nullptr, nullptr, nullptr,
                               nullptr, nullptr);
  return std::isfinite(trial_cost_);
}

void IlqrSolver::linearise(const WorldModel& world, WorldData& wd) {
  if (linearised_) return;
  torques(U_, tau_);  // at the accepted trial's states
  const ilqr_detail::Clock::time_point t0 = ilqr_detail::Clock::now();
  trajectoryJacobians(world, wd, Q_.data(), V_.data(), tau_.data(), T_, jac_.data(), threads_);
  dynamics_seconds_ += ilqr_detail::seconds(t0);
  linearised_ = true;
}

void IlqrSolver::fillModel() {
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Blk = Eigen::Map<const Eigen::MatrixXd>;  // the step Jacobians' blocks are column-major
  const long nv = nv_, nx = 2 * nv, nu = nu_, block = nv * nv;
  Eigen::Map<const RowMat> S(S_.data(), nv, nu);
  RowMat Btau(nx, nv);
  for (long t = 0; t < T_; ++t) {
    const double* J = &jac_[t * 6 * block];
    Eigen::Map<RowMat> A(&A_[t * nx * nx], nx, nx);
    A.topLeftCorner(nv, nv) = Blk(J, nv, nv);
    A.topRightCorner(nv, nv) = Blk(J + block, nv, nv);
    A.bottomLeftCorner(nv, nv) = Blk(J + 3 * block, nv, nv);
    A.bottomRightCorner(nv, nv) = Blk(J + 4 * block, nv, nv);
    Btau.topRows(nv) = Blk(J + 2 * block, nv, nv);
    Btau.bottomRows(nv) = Blk(J + 5 * block, nv, nv);
    Eigen::Map<RowMat>(&B_[t * nx * nu], nx, nu).noalias() = Btau * S;
  }
}

IlqrStep IlqrSolver::iterate(const WorldModel& world, WorldData& wd, double tol) {
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  linearise(world, wd);
  fillModel();
  torques(U_, tau_);
  const long nv = nv_, nx = 2 * nv, nu = nu_;
  // the cost's model: lx = (gq, gv), lxx = hxx, lu = S^T gtau, luu = S^T huu S
  costs.evaluate(world.model, wd.data, Q_.data(), V_.data(), tau_.data(), gq_.data(), gv_.data(), gtau_.data(),
                 lxx_.data(), huu_.data());
  Eigen::Map<const RowMat> S(S_.data(), nv, nu);
  for (long t = 0; t <= T_; ++t) {
    std::copy(&gq_[t * nv], &gq_[(t + 1) * nv], &lx_[t * nx]);
    std::copy(&gv_[t * nv], &gv_[(t + 1) * nv], &lx_[t * nx + nv]);
  }
  for (long t = 0; t < T_; ++t) {
    Eigen::Map<Eigen::VectorXd>(&lu_[t * nu], nu).noalias() = S.transpose() * Eigen::Map<const Eigen::VectorXd>(&gtau_[t * nv], nv);
    Eigen::Map<RowMat>(&luu_[t * nu * nu], nu, nu).noalias() =
        S.transpose() * Eigen::Map<const RowMat>(&huu_[t * nv * nv], nv, nv) * S;
  }
  if (bounded_)
    for (size_t i = 0; i < U_.size(); ++i) dlo_[i] = lo_[i] - U_[i], dhi_[i] = hi_[i] - U_[i];
  RiccatiProblem p;
  p.T = T_, p.nx = static_cast<int>(nx), p.nu = nu_;
  p.A = A_.data(), p.B = B_.data(), p.lx = lx_.data(), p.lxx = lxx_.data(), p.lu = lu_.data(), p.luu = luu_.data();
  p.lo = bounded_ ? dlo_.data() : nullptr;
  p.hi = bounded_ ? dhi_.data() : nullptr;
  bool accepted = false;
  int raises = 0;  // regularisation increases in this iteration: bounded, so is one iteration's time
  double dV[2];
  while (!accepted && raises <= ilqr_detail::kMaxRaises) {
    std::copy(k_start_.begin(), k_start_.end(), k_.begin());
    if (!riccatiBackward(p, mu_, k_.data(), K_.data(), dV)) {
      mu_ *= ilqr_detail::kMuFactor;
      ++raises;
      if (mu_ > ilqr_detail::kMuMax) break;
      continue;
    }
    if (-(dV[0] + dV[1]) <= 1e-14 * std::max(std::abs(cost_), 1.0)) break;  // no decrease predicted
    double alpha = 1.0;
    for (int a = 0; a < ilqr_detail::kAlphas; ++a, alpha *= 0.5) {
      if (!rollout(world, wd, alpha)) continue;  // diverged: a shorter step
      const double expected = -(alpha * dV[0] + alpha * alpha * dV[1]);
      if (trial_cost_ < cost_ && cost_ - trial_cost_ >= ilqr_detail::kArmijo * std::max(expected, 0.0)) {
        accepted = true;
        break;
      }
    }
    if (accepted) break;
    mu_ *= ilqr_detail::kMuFactor;
    ++raises;
    if (mu_ > ilqr_detail::kMuMax) break;
  }
  if (!accepted) return mu_ <= ilqr_detail::kMuMax && raises <= ilqr_detail::kMaxRaises ? IlqrStep::NoDecrease : IlqrStep::Failed;
  const double decrease = cost_ - trial_cost_;
  K_kept_ = K_;
  has_gains_ = true;
  k_start_ = k_;
  Q_.swap(Qt_), V_.swap(Vt_), U_.swap(Ut_);
  cost_ = trial_cost_;
  linearised_ = false;
  mu_ = std::max(ilqr_detail::kMuMin, mu_ / ilqr_detail::kMuFactor);
  return decrease <= tol * std::max(std::abs(cost_), 1e-12) ? IlqrStep::Converged : IlqrStep::Accepted;
}

}  // namespace rigidiff
