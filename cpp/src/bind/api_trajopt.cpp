// Bindings of the trajectory-optimisation kernels (declared in rigidiff/bind/api.hpp).
#include <algorithm>
#include <cstring>
#include <vector>

#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/trajopt/riccati.hpp"

namespace rigidiff {
namespace bind {

void frameAlongTrajectory(const Model& m, Data& d, const double* Q, int N, int f, double* poses, double* J) {
  RD_CHECK_ARG(N >= 0, "N must be >= 0, got " << N);
  checkFrame(m, f);
  for (long i = 0; i < N; ++i) {
    const double* q = Q + i * m.nq;
    checkState(m, q, nullptr);
    if (J) {
      computeJointJacobians(m, d, q);  // forward kinematics included
      Mat6X& tmp = d.Ftmp;
      rigidiff::frameJacobian(m, d, f, ReferenceFrame::LocalWorldAligned, tmp.data());
      Eigen::Map<Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>>(J + i * 6 * m.nv, 6, m.nv) = tmp;
    } else {
      forwardKinematics(m, d, q);
    }
    const SE3 M = framePlacement(m, d, f);
    Eigen::Map<Eigen::Matrix<double, 4, 4, Eigen::RowMajor>> P(poses + 16 * i);
    P.setIdentity();
    P.topLeftCorner<3, 3>() = M.R;
    P.topRightCorner<3, 1>() = M.p;
  }
}

bool riccatiBackward(int T, int nx, int nu, const double* A, const double* B, const double* lx, const double* lxx,
                     const double* lu, const double* luu, const double* lo, const double* hi, double mu, double* k,
                     double* K, double* dV) {
  RD_CHECK_ARG(T >= 1 && nx >= 1 && nu >= 1, "riccatiBackward: sizes must be positive, got " << T << ", " << nx
                                                                                              << ", " << nu);
  RD_CHECK_ARG(std::isfinite(mu) && mu >= 0.0, "mu must be >= 0, got " << mu);
  checkFinite(lx, static_cast<long>(T + 1) * nx, "cost gradient");
  checkFinite(lxx, static_cast<long>(T + 1) * nx * nx, "cost Hessian");
  checkFinite(lu, static_cast<long>(T) * nu, "cost gradient");
  checkFinite(luu, static_cast<long>(T) * nu * nu, "cost Hessian");
  RiccatiProblem p;
  p.T = T;
  p.nx = nx;
  p.nu = nu;
  p.A = A;
  p.B = B;
  p.lx = lx;
  p.lxx = lxx;
  p.lu = lu;
  p.luu = luu;
  p.lo = lo;
  p.hi = hi;
  return rigidiff::riccatiBackward(p, mu, k, K, dV);
}

}  // namespace bind
}  // namespace rigidiff
