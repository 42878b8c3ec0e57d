// The local projections of Projective Dynamics and their directional derivatives: the corotated (ARAP)
// projection onto SO(3) and the volume projection onto {D : det D = 1}, both isotropic functions
// P(F) = U diag(s(sigma)) V^T of the rotation-variant SVD F = U diag(sigma) V^T (det U = det V = 1, the
// smallest singular value carries the sign of det F).
#pragma once

#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace deformable {

struct Svd3 {
  Mat3 U, V;
  Vec3 sigma;
};

/// Rotation-variant SVD of F.
Svd3 svd3(const Mat3& F);

/// The KKT point (s, lambda) of a volume projection: s - sigma = lambda grad(prod s), prod s = 1.
struct VolumeKkt {
  Vec3 s;
  double lambda;
};

/// The singular values s of the volume projection of sigma (the point of {prod s = 1} nearest to sigma) and
/// ds/dsigma (3 x 3). runtime_error if the projection's Newton iteration does not converge (a degenerate F).
/// `from`: this sigma's converged KKT point from an earlier call (the result is then the same, bit for bit,
/// without the iteration); `kkt`: where the converged point is written.
Vec3 volumeProjection(const Vec3& sigma, Mat3* jacobian, const VolumeKkt* from = nullptr, VolumeKkt* kkt = nullptr);

/// dP of the isotropic function P = U diag(s) V^T for a change dF of F, with ds/dsigma = jacobian.
Mat3 isotropicDerivative(const Svd3& svd, const Vec3& s, const Mat3& jacobian, const Mat3& dF);

/// The same in the SVD's frame: U^T dP V for M = U^T dF V (sigma: the singular values).
Mat3 isotropicFrameDerivative(const Vec3& sigma, const Vec3& s, const Mat3& jacobian, const Mat3& M);

/// isotropicFrameDerivative as a linear map of M, its coefficients (and their divisions) computed once for
/// many M: the diagonal through ds/dsigma, each off-diagonal pair (i, j) (in the order (0, 1), (0, 2),
/// (1, 2)) through `sym` on M's symmetric part and `antisym` on its antisymmetric part.
struct FrameDerivative {
  Mat3 jacobian = Mat3::Zero();
  Vec3 sym = Vec3::Zero(), antisym = Vec3::Zero();

  FrameDerivative() = default;
  FrameDerivative(const Vec3& sigma, const Vec3& s, const Mat3& jacobian);
  Mat3 operator()(const Mat3& M) const;  // (inline: applied nine times per sample by the Hessian build)
};

inline Mat3 FrameDerivative::operator()(const Mat3& M) const {
  Mat3 out;
  out.diagonal() = jacobian * M.diagonal();
  int p = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j, ++p) {
      const double a = 0.5 * (M(i, j) + M(j, i)), b = 0.5 * (M(i, j) - M(j, i));
      out(i, j) = a * sym[p] + b * antisym[p];
      out(j, i) = a * sym[p] - b * antisym[p];
    }
  return out;
}

}  // namespace deformable
}  // namespace rigidiff
