// The PSD projection of translation-invariant point Hessians in the reduced space
// (world/translation_invariant_psd.hpp) against the direct 12 x 12 eigen-decomposition with clamped
// eigenvalues: barrier-like pair Hessians b'' g g^T + b' H_d of every distance form (b' < 0 < b'', so most
// are indefinite), with their left-out points, and random indefinite S^T K S. Prints the worst relative
// error (over the largest entry of H) and "ok" when within the tolerance given as the first
// argument. Also checks the small symmetric eigen-solver it uses (world/small_symmetric_eigen.hpp) on its own.
// Built and run by test_translation_invariant_psd.py.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "../../cpp/src/collision/distance/forms.hpp"
#include "../../cpp/src/world/translation_invariant_psd.hpp"

using namespace rigidiff;
using distance::Form;
using distance::FormCall;

namespace {

Mat12 directProjection(const Mat12& H) {
  const Eigen::SelfAdjointEigenSolver<Mat12> eig(H);
  return eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).asDiagonal() * eig.eigenvectors().transpose();
}

double relativeError(const Mat12& H) {
  const Mat12 ref = directProjection(H), ours = projectTranslationInvariantToPsd(H);
  // relative to H: both decompositions are backward stable, to round-off of H's size
  const double scale = H.cwiseAbs().maxCoeff();
  return scale > 0.0 ? (ours - ref).cwiseAbs().maxCoeff() / scale : ours.cwiseAbs().maxCoeff();
}

// the small solver itself: converged, A = V diag(lambda) V^T and V orthonormal, to round-off
template <int m>
double eigenError(int count) {
  double err = 0.0;
  for (int i = 0; i < count; ++i) {
    Eigen::Matrix<double, m, m> A = Eigen::Matrix<double, m, m>::Random();
    A = (A + A.transpose()).eval();
    if (i % 3 == 1) A *= 1e-150;  // scaled far from one either way
    if (i % 3 == 2) A *= 1e150;
    Eigen::Matrix<double, m, 1> lambda;
    Eigen::Matrix<double, m, m> V;
    if (!symmetricEigen<m>(A, lambda, V)) return INFINITY;
    const double scale = A.cwiseAbs().maxCoeff();
    err = std::max({err, (V * lambda.asDiagonal() * V.transpose() - A).cwiseAbs().maxCoeff() / scale,
                    (V.transpose() * V - Eigen::Matrix<double, m, m>::Identity()).cwiseAbs().maxCoeff()});
  }
  return err;
}

Vec3 normal(std::mt19937_64& rng) {
  std::normal_distribution<double> n;
  return Vec3(n(rng), n(rng), n(rng));
}

}  // namespace

int main(int argc, char** argv) {
  const double tol = argc > 1 ? std::atof(argv[1]) : 1e-12;
  const int n = argc > 2 ? std::atoi(argv[2]) : 20000;
  const FormCall calls[] = {
      {Form::PointPoint, {{{0, 1}}}},                      // two live points
      {Form::PointLine, {{{2, 1}, {0, 1}}}},               // three
      {Form::Volume, {{{2, 1}, {3, 1}, {0, 1}}}},          // four (point-plane)
      {Form::Volume, {{{1, 0}, {3, 2}, {2, 0}}}},          // four (line-line)
      {Form::Threshold, {{{1, 0}, {3, 2}}}, 1.0},          // four
  };
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double worst = 0.0;
  int indefinite = 0, total = 0;
  for (const FormCall& c : calls) {
    double err = 0.0;
    for (int i = 0; i < n; ++i) {
      const Vec3 x[4] = {normal(rng), normal(rng), normal(rng), normal(rng)};
      const std::array<const Vec3*, 4> px = {&x[0], &x[1], &x[2], &x[3]};
      Vec12 g;
      Mat12 h;
      distance::formDerivatives<4, 2>(c, px, &g, &h);
      // a barrier's b' < 0 < b'' over a range of ratios
      const double b1 = -std::pow(10.0, 3.0 * u(rng) - 1.5), b2 = std::pow(10.0, 3.0 * u(rng) - 1.5);
      const Mat12 H = b2 * g * g.transpose() + b1 * h;
      indefinite += Eigen::SelfAdjointEigenSolver<Mat12>(H).eigenvalues()[0] < -1e-12 * H.cwiseAbs().maxCoeff();
      ++total;
      err = std::max(err, relativeError(H));
    }
    std::printf("form %d: worst %.2e\n", static_cast<int>(c.form), err);
    worst = std::max(worst, err);
  }
  // random symmetric K over three differences of the four points: S^T K S
  double err = 0.0;
  for (int i = 0; i < n; ++i) {
    Eigen::Matrix<double, 9, 9> K = Eigen::Matrix<double, 9, 9>::Random();
    K = (K + K.transpose()).eval();
    Eigen::Matrix<double, 9, 12> S = Eigen::Matrix<double, 9, 12>::Zero();
    for (int j = 0; j < 3; ++j) {
      S.block<3, 3>(3 * j, 3 * (j + 1)) = Mat3::Identity();
      S.block<3, 3>(3 * j, 0) = -Mat3::Identity();
    }
    err = std::max(err, relativeError(S.transpose() * K * S));
  }
  std::printf("random S^T K S: worst %.2e\n", err);
  worst = std::max(worst, err);
  // structured K: diagonal with repeated and zero entries, rank one of either sign, a multiple of I, and
  // blocks that are already tridiagonal or diagonal (the solver's early exits)
  err = 0.0;
  for (int i = 0; i < n; ++i) {
    Eigen::Matrix<double, 9, 9> K = Eigen::Matrix<double, 9, 9>::Zero();
    const Eigen::Matrix<double, 9, 1> r = Eigen::Matrix<double, 9, 1>::Random();
    switch (i % 6) {
      case 0: K.diagonal() = r.array().round(); break;  // -1, 0, 1 entries, repeated
      case 1: K = r * r.transpose(); break;
      case 2: K = -r * r.transpose(); break;
      case 3: K = -2.0 * Eigen::Matrix<double, 9, 9>::Identity(); break;
      case 4:
        K.diagonal() = r;
        K.diagonal(1) = r.head<8>().reverse();
        K.diagonal(-1) = K.diagonal(1);
        break;
      default: K(2, 2) = -1.0, K(7, 7) = -1.0, K(2, 7) = K(7, 2) = 1e-200; break;
    }
    Eigen::Matrix<double, 9, 12> S = Eigen::Matrix<double, 9, 12>::Zero();
    for (int j = 0; j < 3; ++j) {
      S.block<3, 3>(3 * j, 3 * (j + 1)) = Mat3::Identity();
      S.block<3, 3>(3 * j, 0) = -Mat3::Identity();
    }
    err = std::max(err, relativeError(S.transpose() * K * S));
    // the same on the three and two live points of a point-line and a point-point pair
    Mat12 H3 = Mat12::Zero(), H2 = Mat12::Zero();
    H3.topLeftCorner<9, 9>() = S.topLeftCorner<6, 9>().transpose() * K.topLeftCorner<6, 6>() * S.topLeftCorner<6, 9>();
    H2.topLeftCorner<6, 6>() = S.topLeftCorner<3, 6>().transpose() * K.topLeftCorner<3, 3>() * S.topLeftCorner<3, 6>();
    err = std::max({err, relativeError(H3), relativeError(H2)});
  }
  std::printf("structured S^T K S: worst %.2e\n", err);
  worst = std::max(worst, err);
  err = std::max({eigenError<3>(n), eigenError<6>(n), eigenError<9>(n)});
  std::printf("small symmetric eigen-decompositions: worst %.2e\n", err);
  worst = std::max(worst, err);
  std::printf("%d of %d barrier Hessians indefinite; worst %.3e (tolerance %.1e)\n", indefinite, total, worst, tol);
  if (!(worst <= tol) || indefinite < total / 4) return 1;
  std::printf("ok\n");
  return 0;
}
