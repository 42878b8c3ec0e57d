// Bindings of the trajectory-optimisation kernels (declared in rigidiff/bind/api.hpp).
#include <algorithm>
#include <cstring>
#include <vector>

#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/api_implicit.hpp"
#include "rigidiff/bind/api_rk4.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/trajopt/riccati.hpp"

namespace rigidiff {
namespace bind {

void trajectoryJacobians(const Model& m, Data& d, const CollisionModel* cm, ContactStepData* cd,
                         const ContactOptions* o, const double* Q, const double* V,
                         const double* TAU, int T, double dt, double* jac, Rk4Workspace* rk4,
                         ImplicitWorkspace* implicit) {
  RD_CHECK_ARG(T >= 0, "T must be >= 0, got " << T);
  const long nq = m.nq, nv = m.nv, block = 6 * nv * nv;
  std::vector<double> qn(nq), vn(nv);
  for (int t = 0; t < T; ++t) {
    const double *q = Q + t * nq, *v = V + t * nv, *tau = TAU + t * nv;
    const bool continues = t > 0 && std::memcmp(q, qn.data(), nq * sizeof(double)) == 0 &&
                           std::memcmp(v, vn.data(), nv * sizeof(double)) == 0;
    if (cm && t > 0 && !continues) clearWarmStart(*cd);  // the warm start is a function of the state
    if (implicit)
      bind::implicitStepJacobians(m, d, *implicit, q, v, tau, dt, nullptr, qn.data(), vn.data(), jac + t * block);
    else if (rk4)
      bind::rk4StepJacobians(m, d, *rk4, q, v, tau, dt, nullptr, qn.data(), vn.data(), jac + t * block);
    else if (cm)
      constrainedStepJacobians(m, d, *cm, *cd, *o, q, v, tau, dt, nullptr, 0, qn.data(), vn.data(), jac + t * block,
                               nullptr);
    else
      stepJacobians(m, d, q, v, tau, dt, nullptr, qn.data(), vn.data(), jac + t * block);
  }
}

void closedLoopRollout(const Model& m, Data& d, const CollisionModel* cm, ContactStepData* cd,
                       const ContactOptions* o, const double* q0, const double* v0,
                       const double* Qr, const double* Vr, const double* Ur, const double* k, const double* K,
                       double alpha, const double* S, int nu, const double* lo, const double* hi, int T, double dt,
                       double* Q, double* V, double* U, Rk4Workspace* rk4, ImplicitWorkspace* implicit) {
  RD_CHECK_ARG(T >= 0 && nu >= 1, "closedLoopRollout: T >= 0 and nu >= 1 needed, got " << T << ", " << nu);
  const long nq = m.nq, nv = m.nv, nx = 2 * nv;
  std::copy(q0, q0 + nq, Q);
  std::copy(v0, v0 + nv, V);
  Eigen::VectorXd dx(nx), u(nu), tau(nv);
  Eigen::Map<const RowMatrix> Smat(S, nv, nu);
  for (long t = 0; t < T; ++t) {
    const double *q = Q + t * nq, *v = V + t * nv;
    bind::difference(m, Qr + t * nq, q, dx.data());  // checks both configurations
    for (long i = 0; i < nv; ++i) dx(nv + i) = v[i] - Vr[t * nv + i];
    u = Eigen::Map<const Eigen::VectorXd>(Ur + t * nu, nu) + alpha * Eigen::Map<const Eigen::VectorXd>(k + t * nu, nu) +
        Eigen::Map<const RowMatrix>(K + t * nu * nx, nu, nx) * dx;
    u = u.cwiseMax(Eigen::Map<const Eigen::VectorXd>(lo + t * nu, nu))
            .cwiseMin(Eigen::Map<const Eigen::VectorXd>(hi + t * nu, nu));
    Eigen::Map<Eigen::VectorXd>(U + t * nu, nu) = u;
    tau.noalias() = Smat * u;
    if (implicit)
      bind::implicitStep(m, d, *implicit, q, v, tau.data(), dt, nullptr, Q + (t + 1) * nq, V + (t + 1) * nv);
    else if (rk4)
      bind::rk4Step(m, d, *rk4, q, v, tau.data(), dt, nullptr, Q + (t + 1) * nq, V + (t + 1) * nv);
    else if (cm)
      constrainedStep(m, d, *cm, *cd, *o, q, v, tau.data(), dt, nullptr, Q + (t + 1) * nq, V + (t + 1) * nv);
    else
      step(m, d, q, v, tau.data(), dt, nullptr, Q + (t + 1) * nq, V + (t + 1) * nv);
  }
}

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
