// The local projections of Projective Dynamics (pd_projection.hpp) and their derivatives.
#include "rigidiff/deformable/pd_projection.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rigidiff {
namespace deformable {

namespace {

// Rotates rows/columns p and q of the symmetric A (and V's columns) so that A(p, q) = 0: one Jacobi rotation.
void jacobiRotate(Mat3& A, Mat3& V, int p, int q) {
  const double apq = A(p, q);
  if (apq == 0.0) return;
  const double theta = (A(q, q) - A(p, p)) / (2.0 * apq);
  const double t = (theta >= 0.0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
  const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
  for (int k = 0; k < 3; ++k) {  // A <- A J
    const double akp = A(k, p), akq = A(k, q);
    A(k, p) = c * akp - s * akq;
    A(k, q) = s * akp + c * akq;
  }
  for (int k = 0; k < 3; ++k) {  // A <- J^T A
    const double apk = A(p, k), aqk = A(q, k);
    A(p, k) = c * apk - s * aqk;
    A(q, k) = s * apk + c * aqk;
  }
  A(p, q) = A(q, p) = 0.0;
  for (int k = 0; k < 3; ++k) {
    const double vkp = V(k, p), vkq = V(k, q);
    V(k, p) = c * vkp - s * vkq;
    V(k, q) = s * vkp + c * vkq;
  }
}

// Rotates rows i and j of R (and U's columns) so that R(j, col) = 0 and R(i, col) = hypot >= 0.
void givens(Mat3& R, Mat3& U, int i, int j, int col) {
  const double a = R(i, col), b = R(j, col);
  const double r = std::sqrt(a * a + b * b);  // entries of F V: far from overflow
  if (r == 0.0) return;
  const double c = a / r, s = b / r;
  for (int k = 0; k < 3; ++k) {
    const double rik = R(i, k), rjk = R(j, k);
    R(i, k) = c * rik + s * rjk;
    R(j, k) = -s * rik + c * rjk;
    const double uki = U(k, i), ukj = U(k, j);
    U(k, i) = c * uki + s * ukj;
    U(k, j) = -s * uki + c * ukj;
  }
}

}  // namespace

Svd3 svd3(const Mat3& F) {
  // V: eigenvectors of F^T F by cyclic Jacobi rotations (a product of rotations, so det V = 1), sorted by
  // decreasing eigenvalue; then F V = U R by Givens rotations (det U = 1), R upper triangular and, F V's
  // columns being orthogonal, diagonal up to round-off: its diagonal holds the singular values, the last one
  // carrying the sign of det F. Accurate for small singular values too, since they come from the QR step.
  Mat3 A = F.transpose() * F, V = Mat3::Identity();
  for (int sweep = 0; sweep < 12; ++sweep) {
    const double off = A(0, 1) * A(0, 1) + A(0, 2) * A(0, 2) + A(1, 2) * A(1, 2);
    const double diag = A(0, 0) * A(0, 0) + A(1, 1) * A(1, 1) + A(2, 2) * A(2, 2);
    if (!(off > 1e-30 * diag)) break;
    jacobiRotate(A, V, 0, 1);
    jacobiRotate(A, V, 0, 2);
    jacobiRotate(A, V, 1, 2);
  }
  // sort by decreasing eigenvalue; a swap of two columns negates one of them, keeping det V = 1
  auto swap = [&](int i, int j) {
    std::swap(A(i, i), A(j, j));
    V.col(i).swap(V.col(j));
    V.col(j) *= -1.0;
  };
  if (A(0, 0) < A(1, 1)) swap(0, 1);
  if (A(0, 0) < A(2, 2)) swap(0, 2);
  if (A(1, 1) < A(2, 2)) swap(1, 2);
  Mat3 R = F * V, U = Mat3::Identity();
  givens(R, U, 0, 1, 0);
  givens(R, U, 0, 2, 0);
  givens(R, U, 1, 2, 1);
  return Svd3{U, V, R.diagonal()};
}

namespace {

// c(s) = s0 s1 s2 - 1: its gradient and Hessian
Vec3 productGradient(const Vec3& s) { return Vec3(s[1] * s[2], s[0] * s[2], s[0] * s[1]); }

Mat3 productHessian(const Vec3& s) {
  Mat3 H;
  H << 0.0, s[2], s[1], s[2], 0.0, s[0], s[1], s[0], 0.0;
  return H;
}

// The nearest point of the positive sheet of prod s = 1, where the KKT iteration's answer is not it. At a KKT
// point s_i (s_i - sigma_i) = lambda for every i: s_i = (sigma_i +- sqrt(sigma_i^2 + 4 lambda)) / 2. The nearest
// point takes the + root in every coordinate but perhaps the one of the least sigma, which shrinks (a large
// stretch); along either pattern the product is monotone enough in lambda for a bisection on a bracket.
struct VolumeBranches {
  Vec3 sigma;
  int least = 0;
  Vec3 at(double lambda, bool shrink_least) const {
    Vec3 s;
    for (int i = 0; i < 3; ++i) {
      const double r = std::sqrt(std::max(sigma[i] * sigma[i] + 4.0 * lambda, 0.0));
      // the - root as -lambda / (+ root): no cancellation where it is small
      s[i] = i == least && shrink_least ? (sigma[i] + r > 0.0 ? -2.0 * lambda / (sigma[i] + r) : 0.0)
                                        : 0.5 * (sigma[i] + r);
    }
    return s;
  }
};

Vec3 nearestOnPositiveSheet(const Vec3& sigma) {
  VolumeBranches b{sigma};
  sigma.minCoeff(&b.least);
  const bool positive = sigma.minCoeff() > 0.0;
  // lambda >= low keeps every root real; with a sigma <= 0 its coordinate is positive only for lambda > 0
  const double low = positive ? -0.25 * sigma[b.least] * sigma[b.least] : 0.0;
  const bool shrink = positive && b.at(low, false).prod() > 1.0;
  double lo = low, hi = 0.0;  // shrinking: the product falls from above 1 at low to 0 at lambda = 0
  if (!shrink) {              // the + roots: the product rises with lambda from at most 1 at low
    hi = std::max(1.0, 2.0 * std::abs(low));
    while (b.at(hi, false).prod() < 1.0 && hi < 1e300) hi *= 2.0;
  }
  for (int it = 0; it < 2000 && lo < hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    const bool above = b.at(mid, shrink).prod() > 1.0;
    (above != shrink ? hi : lo) = mid;
  }
  return b.at(0.5 * (lo + hi), shrink);
}

// Whether a KKT point s of the sheet is the one nearestOnPositiveSheet finds: positive, and on the + root in
// every coordinate but perhaps the least sigma's (the iteration can settle where another coordinate shrinks).
bool onNearestBranches(const Vec3& s, const Vec3& sigma, double scale) {
  if (!(s.minCoeff() > 0.0)) return false;
  int least = 0;
  sigma.minCoeff(&least);
  for (int i = 0; i < 3; ++i)
    if (i != least && s[i] < 0.5 * sigma[i] - 1e-12 * scale) return false;
  return true;
}

}  // namespace

Vec3 volumeProjection(const Vec3& sigma, Mat3* jacobian, const VolumeKkt* from, VolumeKkt* kkt) {
  // the KKT point of min |s - sigma|^2 / 2 subject to prod s = 1: s - sigma = lambda grad c(s), by Newton
  // (from a converged point, the first iteration's test stops it there, with the same K for the Jacobian)
  const double p = sigma.prod();
  Vec3 s = std::abs(p) > 1e-12 ? Vec3(sigma.cwiseAbs() / std::cbrt(std::abs(p))) : Vec3::Ones();
  Vec3 c1 = productGradient(s);
  double lambda = 0.0;
  if (from)
    s = from->s, lambda = from->lambda;
  else
    lambda = (s - sigma).dot(c1) / c1.squaredNorm();
  Eigen::Matrix4d K;
  const double scale = 1.0 + sigma.cwiseAbs().maxCoeff();
  const auto kktNewton = [&](int iterations) {
    for (int it = 0; it < iterations; ++it) {
      c1 = productGradient(s);
      Eigen::Vector4d r;
      r.head<3>() = s - sigma - lambda * c1;
      r[3] = s.prod() - 1.0;
      K.setZero();
      K.topLeftCorner<3, 3>() = Mat3::Identity() - lambda * productHessian(s);
      K.block<3, 1>(0, 3) = -c1;
      K.block<1, 3>(3, 0) = c1.transpose();
      if (r.norm() <= 1e-14 * scale) return true;
      const Eigen::Vector4d step = K.partialPivLu().solve(-r);
      s += step.head<3>();
      lambda += step[3];
    }
    return false;
  };
  bool converged = kktNewton(60);
  if ((!converged || !onNearestBranches(s, sigma, scale)) && sigma.allFinite()) {
    // from a start far from the solution (a large stretch) the iteration may wander or settle at another KKT
    // point: find the nearest one on its branches, then finish there (and form K) as above
    s = nearestOnPositiveSheet(sigma);
    c1 = productGradient(s);
    lambda = (s - sigma).dot(c1) / c1.squaredNorm();
    converged = kktNewton(20);
  }
  if (!converged || !s.allFinite())
    throw std::runtime_error("the volume projection did not converge for the singular values (" +
                             std::to_string(sigma[0]) + ", " + std::to_string(sigma[1]) + ", " +
                             std::to_string(sigma[2]) + "): an element is degenerate");
  if (kkt) *kkt = {s, lambda};
  if (jacobian) {
    // differentiate the KKT system: K [ds; dlambda] = [dsigma; 0]
    const Eigen::Matrix4d inv = K.fullPivLu().inverse();
    *jacobian = inv.topLeftCorner<3, 3>();
  }
  return s;
}

FrameDerivative::FrameDerivative(const Vec3& sg, const Vec3& s, const Mat3& ds) : jacobian(ds) {
  int p = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j, ++p) {
      const double diff = sg[i] - sg[j];
      // (s_i - s_j) / (sigma_i - sigma_j), by its limit where the singular values meet
      sym[p] = std::abs(diff) > 1e-10 * (1.0 + std::abs(sg[i]))
                   ? (s[i] - s[j]) / diff
                   : 0.5 * (ds(i, i) - ds(i, j) - ds(j, i) + ds(j, j));
      double sum = sg[i] + sg[j];
      if (std::abs(sum) < 1e-12) sum = sum < 0.0 ? -1e-12 : 1e-12;  // an element folded flat
      antisym[p] = (s[i] + s[j]) / sum;
    }
}

Mat3 isotropicFrameDerivative(const Vec3& sg, const Vec3& s, const Mat3& jacobian, const Mat3& M) {
  return FrameDerivative(sg, s, jacobian)(M);
}

Mat3 isotropicDerivative(const Svd3& svd, const Vec3& s, const Mat3& jacobian, const Mat3& dF) {
  return svd.U * isotropicFrameDerivative(svd.sigma, s, jacobian, svd.U.transpose() * dF * svd.V) * svd.V.transpose();
}

}  // namespace deformable
}  // namespace rigidiff
