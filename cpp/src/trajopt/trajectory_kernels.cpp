#include "rigidiff/trajopt/trajectory_kernels.hpp"

#include <algorithm>
#include <vector>

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/world/knot_team.hpp"
#include "rigidiff/world/world_step.hpp"

namespace rigidiff {

void trajectoryJacobians(const WorldModel& w, WorldData& wd, const double* Q, const double* V, const double* TAU,
                         int T, double* jac, int threads) {
  // each row continues the warm start of the row before only if it starts at that row's end state
  knotJacobians(w, wd, threads, Q, V, TAU, T, nullptr, nullptr, jac);
}

void closedLoopRollout(const WorldModel& w, WorldData& wd, const double* q0, const double* v0, const double* Qr,
                       const double* Vr, const double* Ur, const double* k, const double* K, double alpha,
                       const double* S, int nu, const double* lo, const double* hi, int T, double* Q, double* V,
                       double* U) {
  using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Model& m = w.model;
  const long nq = m.nq, nv = m.nv, nx = 2 * nv;
  std::copy(q0, q0 + nq, Q);
  std::copy(v0, v0 + nv, V);
  VecX dx(nx), u(nu), tau(nv);
  Eigen::Map<const RowMatrix> Smat(S, nv, nu);
  for (long t = 0; t < T; ++t) {
    const double *q = Q + t * nq, *v = V + t * nv;
    difference(m, Qr + t * nq, q, dx.data());
    for (long i = 0; i < nv; ++i) dx(nv + i) = v[i] - Vr[t * nv + i];
    u = Eigen::Map<const VecX>(Ur + t * nu, nu) + alpha * Eigen::Map<const VecX>(k + t * nu, nu) +
        Eigen::Map<const RowMatrix>(K + t * nu * nx, nu, nx) * dx;
    u = u.cwiseMax(Eigen::Map<const VecX>(lo + t * nu, nu)).cwiseMin(Eigen::Map<const VecX>(hi + t * nu, nu));
    Eigen::Map<VecX>(U + t * nu, nu) = u;
    tau.noalias() = Smat * u;
    worldStep(w, wd, q, v, tau.data(), nullptr, Q + (t + 1) * nq, V + (t + 1) * nv);
  }
}

}  // namespace rigidiff
