// The local projections of Projective Dynamics (pd_projection.hpp) and their derivatives.
#include "rigidiff/deformable/pd_projection.hpp"

#include <Eigen/SVD>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rigidiff {
namespace deformable {

Svd3 svd3(const Mat3& F) {
  Eigen::JacobiSVD<Mat3> svd(F, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Svd3 out{svd.matrixU(), svd.matrixV(), svd.singularValues()};
  // keep U and V rotations: a reflection moves into the sign of the smallest singular value
  if (out.U.determinant() < 0.0) {
    out.U.col(2) *= -1.0;
    out.sigma[2] *= -1.0;
  }
  if (out.V.determinant() < 0.0) {
    out.V.col(2) *= -1.0;
    out.sigma[2] *= -1.0;
  }
  return out;
}

namespace {

// c(s) = s0 s1 s2 - 1: its gradient and Hessian
Vec3 productGradient(const Vec3& s) { return Vec3(s[1] * s[2], s[0] * s[2], s[0] * s[1]); }

Mat3 productHessian(const Vec3& s) {
  Mat3 H;
  H << 0.0, s[2], s[1], s[2], 0.0, s[0], s[1], s[0], 0.0;
  return H;
}

}  // namespace

Vec3 volumeProjection(const Vec3& sigma, Mat3* jacobian) {
  // the KKT point of min |s - sigma|^2 / 2 subject to prod s = 1: s - sigma = lambda grad c(s), by Newton
  const double p = sigma.prod();
  Vec3 s = std::abs(p) > 1e-12 ? Vec3(sigma.cwiseAbs() / std::cbrt(std::abs(p))) : Vec3::Ones();
  Vec3 c1 = productGradient(s);
  double lambda = (s - sigma).dot(c1) / c1.squaredNorm();
  Eigen::Matrix4d K;
  const double scale = 1.0 + sigma.cwiseAbs().maxCoeff();
  bool converged = false;
  for (int it = 0; it < 60; ++it) {
    c1 = productGradient(s);
    Eigen::Vector4d r;
    r.head<3>() = s - sigma - lambda * c1;
    r[3] = s.prod() - 1.0;
    K.setZero();
    K.topLeftCorner<3, 3>() = Mat3::Identity() - lambda * productHessian(s);
    K.block<3, 1>(0, 3) = -c1;
    K.block<1, 3>(3, 0) = c1.transpose();
    if (r.norm() <= 1e-14 * scale) {
      converged = true;
      break;
    }
    const Eigen::Vector4d step = K.fullPivLu().solve(-r);
    s += step.head<3>();
    lambda += step[3];
  }
  if (!converged || !s.allFinite())
    throw std::runtime_error("the volume projection did not converge for the singular values (" +
                             std::to_string(sigma[0]) + ", " + std::to_string(sigma[1]) + ", " +
                             std::to_string(sigma[2]) + "): an element is degenerate");
  if (jacobian) {
    // differentiate the KKT system: K [ds; dlambda] = [dsigma; 0]
    const Eigen::Matrix4d inv = K.fullPivLu().inverse();
    *jacobian = inv.topLeftCorner<3, 3>();
  }
  return s;
}

Mat3 isotropicDerivative(const Svd3& svd, const Vec3& s, const Mat3& jacobian, const Mat3& dF) {
  const Mat3 M = svd.U.transpose() * dF * svd.V;
  const Vec3& sg = svd.sigma;
  Mat3 out = Mat3::Zero();
  out.diagonal() = jacobian * M.diagonal();
  for (int i = 0; i < 3; ++i) {
    for (int j = i + 1; j < 3; ++j) {
      const double a = 0.5 * (M(i, j) + M(j, i)), b = 0.5 * (M(i, j) - M(j, i));
      const double diff = sg[i] - sg[j];
      // (s_i - s_j) / (sigma_i - sigma_j), by its limit where the singular values meet
      const double c1 = std::abs(diff) > 1e-10 * (1.0 + std::abs(sg[i]))
                            ? (s[i] - s[j]) / diff
                            : 0.5 * (jacobian(i, i) - jacobian(i, j) - jacobian(j, i) + jacobian(j, j));
      double sum = sg[i] + sg[j];
      if (std::abs(sum) < 1e-12) sum = sum < 0.0 ? -1e-12 : 1e-12;  // an element folded flat
      const double c2 = (s[i] + s[j]) / sum;
      out(i, j) = a * c1 + b * c2;
      out(j, i) = a * c1 - b * c2;
    }
  }
  return svd.U * out * svd.V.transpose();
}

}  // namespace deformable
}  // namespace rigidiff
