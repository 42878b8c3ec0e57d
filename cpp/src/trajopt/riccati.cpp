#include "rigidiff/trajopt/riccati.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <vector>

#include "rigidiff/linalg/dense_product.hpp"

namespace rigidiff {

namespace {

using Mask = Eigen::Array<bool, Eigen::Dynamic, 1>;

constexpr double kArmijo = 1e-4;
constexpr int kBoxIterations = 30;

std::vector<int> indices(const Mask& m) {
  std::vector<int> out;
  for (int i = 0; i < m.size(); ++i)
    if (m(i)) out.push_back(i);
  return out;
}

RowMatrix block(const RowMatrix& H, const std::vector<int>& rows, const std::vector<int>& cols) {
  RowMatrix out(rows.size(), cols.size());
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < cols.size(); ++j) out(i, j) = H(rows[i], cols[j]);
  return out;
}

Mask freeSet(const Eigen::VectorXd& x, const Eigen::VectorXd& grad, const Eigen::VectorXd& lo,
             const Eigen::VectorXd& hi) {
  return !(((x.array() <= lo.array()) && (grad.array() > 0)) || ((x.array() >= hi.array()) && (grad.array() < 0)));
}

// K = -Quu_reg^-1 Qux on the controls the box QP left free (zero rows for those held at a bound); false
// if their block of Quu_reg is not positive definite
bool boundedGains(const RowMatrix& Quu_reg, const RowMatrix& Qux, const Mask& free, RowMatrix& Kt) {
  const long nx = Qux.cols();
  Kt.setZero();
  if (free.all()) {
    Kt = -Quu_reg.llt().solve(Qux);
  } else if (free.any()) {
    const std::vector<int> f = indices(free);
    std::vector<int> all(nx);
    for (int i = 0; i < nx; ++i) all[i] = i;
    Eigen::LLT<RowMatrix> sub(block(Quu_reg, f, f));
    if (sub.info() != Eigen::Success) return false;
    const RowMatrix Kf = -sub.solve(block(Qux, f, all));
    for (size_t i = 0; i < f.size(); ++i) Kt.row(f[i]) = Kf.row(i);
  }
  return true;
}

}  // namespace

bool boxQP(const RowMatrix& H, const Eigen::VectorXd& g, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
           const Eigen::VectorXd& x0, Eigen::VectorXd& x, Mask& free) {
  const int n = static_cast<int>(g.size());
  Eigen::LLT<RowMatrix> llt(H);
  if (llt.info() != Eigen::Success) return false;
  x = -llt.solve(g);
  if ((x.array() >= lo.array()).all() && (x.array() <= hi.array()).all()) {  // the unconstrained minimum
    free = Mask::Constant(n, true);
    return true;
  }
  auto value = [&](const Eigen::VectorXd& y) { return 0.5 * y.dot(H * y) + g.dot(y); };
  x = x0.cwiseMax(lo).cwiseMin(hi);
  for (int it = 0; it < kBoxIterations; ++it) {
    const Eigen::VectorXd grad = H * x + g;
    free = freeSet(x, grad, lo, hi);
    const std::vector<int> f = indices(free);
    if (f.empty()) break;
    Eigen::VectorXd gf(f.size());
    for (size_t i = 0; i < f.size(); ++i) gf(i) = grad(f[i]);
    Eigen::LLT<RowMatrix> sub(block(H, f, f));
    if (sub.info() != Eigen::Success) return false;
    const Eigen::VectorXd df = -sub.solve(gf);
    Eigen::VectorXd direction = Eigen::VectorXd::Zero(n);
    for (size_t i = 0; i < f.size(); ++i) direction(f[i]) = df(i);
    if (direction.cwiseAbs().maxCoeff() < 1e-13 * (1.0 + x.cwiseAbs().maxCoeff())) break;
    const double f0 = value(x);
    Eigen::VectorXd trial = x;
    for (double step = 1.0; step > 1e-10; step *= 0.5) {
      trial = (x + step * direction).cwiseMax(lo).cwiseMin(hi);
      if (value(trial) <= f0 + kArmijo * grad.dot(trial - x)) break;
    }
    if (trial == x) break;
    x = trial;
  }
  free = freeSet(x, H * x + g, lo, hi);
  return true;
}

namespace {

// The pass with Eigen's products, in the order of every earlier release (see riccatiBackward).
bool riccatiBackwardEigen(const RiccatiProblem& p, double mu, double* k, double* K, double* dV) {
  const int nx = p.nx, nu = p.nu;
  using MapM = Eigen::Map<const RowMatrix>;
  using MapV = Eigen::Map<const Eigen::VectorXd>;
  Eigen::VectorXd Vx = MapV(p.lx + static_cast<long>(p.T) * nx, nx);
  RowMatrix Vxx = MapM(p.lxx + static_cast<long>(p.T) * nx * nx, nx, nx);
  Eigen::VectorXd Qx(nx), Qu(nu), kt(nu), lo(nu), hi(nu);
  RowMatrix Qxx(nx, nx), Quu(nu, nu), Qux(nu, nx), Quu_reg(nu, nu), VA(nx, nx), Kt(nu, nx);
  Mask free(nu);
  dV[0] = dV[1] = 0.0;
  for (int t = p.T - 1; t >= 0; --t) {
    MapM A(p.A + static_cast<long>(t) * nx * nx, nx, nx);
    MapM B(p.B + static_cast<long>(t) * nx * nu, nx, nu);
    Qx.noalias() = MapV(p.lx + static_cast<long>(t) * nx, nx) + A.transpose() * Vx;
    Qu.noalias() = MapV(p.lu + static_cast<long>(t) * nu, nu) + B.transpose() * Vx;
    VA.noalias() = Vxx * A;
    Qxx.noalias() = MapM(p.lxx + static_cast<long>(t) * nx * nx, nx, nx) + A.transpose() * VA;
    Qux.noalias() = B.transpose() * VA;
    Quu.noalias() = MapM(p.luu + static_cast<long>(t) * nu * nu, nu, nu) + B.transpose() * Vxx * B;
    Quu_reg = Quu;
    Quu_reg.diagonal().array() += mu;
    Eigen::Map<Eigen::VectorXd> k_out(k + static_cast<long>(t) * nu, nu);
    if (p.lo) {
      lo = MapV(p.lo + static_cast<long>(t) * nu, nu);
      hi = MapV(p.hi + static_cast<long>(t) * nu, nu);
    } else {
      lo.setConstant(-INFINITY);
      hi.setConstant(INFINITY);
    }
    if (!boxQP(Quu_reg, Qu, lo, hi, k_out, kt, free)) return false;
    if (!boundedGains(Quu_reg, Qux, free, Kt)) return false;
    k_out = kt;
    Eigen::Map<RowMatrix>(K + static_cast<long>(t) * nu * nx, nu, nx) = Kt;
    dV[0] += kt.dot(Qu);
    dV[1] += 0.5 * kt.dot(Quu * kt);
    Vx = Qx + Kt.transpose() * (Quu * kt) + Kt.transpose() * Qu + Qux.transpose() * kt;
    Vxx = Qxx + Kt.transpose() * Quu * Kt + Kt.transpose() * Qux + Qux.transpose() * Kt;
    Vxx = 0.5 * (Vxx + Vxx.transpose()).eval();
  }
  return true;
}

// The pass for large models: one block F = [A B] so that Q = l + F^T V F comes from two products, and
// the products of nx^3 and nx^2 nu on linalg's dense kernel (AVX2 where the CPU has it), with no
// allocation in the loop.
bool riccatiBackwardDense(const RiccatiProblem& p, double mu, double* k, double* K, double* dV) {
  const int nx = p.nx, nu = p.nu, nz = nx + nu;
  using MapM = Eigen::Map<const RowMatrix>;
  using MapV = Eigen::Map<const Eigen::VectorXd>;
  Eigen::VectorXd Vx = MapV(p.lx + static_cast<long>(p.T) * nx, nx);
  MatX Vxx = MapM(p.lxx + static_cast<long>(p.T) * nx * nx, nx, nx);
  // every buffer made once: the loop allocates nothing on its common path. The step's model is taken
  // as one block F = [A B], so that Q = l + F^T V F comes from two products, and the products of nx^3
  // and nx^2 nu take linalg's dense kernel (AVX2 where the CPU has it)
  Eigen::VectorXd g(nz), kt(nu), lo(nu), hi(nu), Quk(nu);
  MatX F(nx, nz), VF(nx, nz), H(nz, nz), N(nx, nx);
  RowMatrix Quu(nu, nu), Qux(nu, nx), Quu_reg(nu, nu), rhs(nu, nx + 1), sol(nu, nx + 1), Kt(nu, nx), M(nu, nx);
  Eigen::LLT<RowMatrix> llt(nu);
  Mask free(nu);
  dV[0] = dV[1] = 0.0;
  for (int t = p.T - 1; t >= 0; --t) {
    F.leftCols(nx) = MapM(p.A + static_cast<long>(t) * nx * nx, nx, nx);
    F.rightCols(nu) = MapM(p.B + static_cast<long>(t) * nx * nu, nx, nu);
    g.head(nx) = MapV(p.lx + static_cast<long>(t) * nx, nx);
    g.tail(nu) = MapV(p.lu + static_cast<long>(t) * nu, nu);
    g.noalias() += F.transpose() * Vx;  // (Q_x, Q_u)
    denseProduct(Vxx, F, Ref<MatX>(VF));
    denseProductTransposedA(F, VF, H);  // [[Qxx, Qxu], [Qux, Quu]] - l
    H.topLeftCorner(nx, nx) += MapM(p.lxx + static_cast<long>(t) * nx * nx, nx, nx);
    H.bottomRightCorner(nu, nu) += MapM(p.luu + static_cast<long>(t) * nu * nu, nu, nu);
    const auto Qx = g.head(nx);
    const auto Qu = g.tail(nu);
    Quu = H.bottomRightCorner(nu, nu);
    Qux = H.bottomLeftCorner(nu, nx);
    Quu_reg = Quu;
    Quu_reg.diagonal().array() += mu;
    Eigen::Map<Eigen::VectorXd> k_out(k + static_cast<long>(t) * nu, nu);
    llt.compute(Quu_reg);
    if (llt.info() != Eigen::Success) return false;
    rhs.col(0) = Qu;
    rhs.rightCols(nx) = Qux;
    sol.noalias() = llt.solve(rhs);  // the unconstrained k and K in one solve
    kt = -sol.col(0);
    bool inside = true;  // the unconstrained minimum within the bounds: every control free
    if (p.lo) {
      lo = MapV(p.lo + static_cast<long>(t) * nu, nu);
      hi = MapV(p.hi + static_cast<long>(t) * nu, nu);
      inside = (kt.array() >= lo.array()).all() && (kt.array() <= hi.array()).all();
    }
    if (inside) {
      Kt = -sol.rightCols(nx);
    } else {
      if (!boxQP(Quu_reg, Qu, lo, hi, k_out, kt, free)) return false;
      if (!boundedGains(Quu_reg, Qux, free, Kt)) return false;
    }
    k_out = kt;
    Eigen::Map<RowMatrix>(K + static_cast<long>(t) * nu * nx, nu, nx) = Kt;
    Quk.noalias() = Quu * kt;
    dV[0] += kt.dot(Qu);
    dV[1] += 0.5 * kt.dot(Quk);
    // V_x = Q_x + K^T Q_uu k + K^T Q_u + Q_ux^T k
    Vx = Qx;
    Vx.noalias() += Kt.transpose() * (Quk + Qu);
    Vx.noalias() += Qux.transpose() * kt;
    // V_xx = Q_xx + K^T Q_uu K + K^T Q_ux + Q_ux^T K = Q_xx + N + N^T with N = K^T (Q_uu K / 2 + Q_ux)
    M = Qux;
    M.noalias() += 0.5 * Quu * Kt;
    denseProductTransposedA(Kt, M, N);
    Vxx = 0.5 * (H.topLeftCorner(nx, nx) + H.topLeftCorner(nx, nx).transpose());
    Vxx += N + N.transpose();
  }
  return true;
}

}  // namespace

bool riccatiBackward(const RiccatiProblem& p, double mu, double* k, double* K, double* dV) {
  // Below kDenseStates the pass keeps Eigen's products in their earlier order: its round-off is the one
  // iLQR always had, which a solve through contact can amplify into another local optimum
  // (examples/catapult.py). Above, the dense kernel's pass is several times faster (talos, nx = 76).
  constexpr int kDenseStates = 64;
  return p.nx >= kDenseStates ? riccatiBackwardDense(p, mu, k, K, dV) : riccatiBackwardEigen(p, mu, k, K, dV);
}

}  // namespace rigidiff
