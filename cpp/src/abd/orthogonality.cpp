// Orthogonality energy of an affine body (abd/orthogonality.hpp).
#include "rigidiff/abd/orthogonality.hpp"

namespace rigidiff {

namespace {
Mat3 rowsOf(const double* q) {
  Mat3 A;
  A << q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10], q[11];
  return A;
}
}  // namespace

double orthogonalityEnergy(const double* q, double weight) {
  const Mat3 A = rowsOf(q);
  return weight * (A * A.transpose() - Mat3::Identity()).squaredNorm();
}

Vec12 orthogonalityGradient(const double* q, double weight) {
  const Mat3 A = rowsOf(q);
  const Mat3 G = 4.0 * weight * (A * A.transpose() - Mat3::Identity()) * A;  // row k: dE/da_k
  Vec12 g = Vec12::Zero();
  for (int k = 0; k < 3; ++k) g.segment<3>(3 + 3 * k) = G.row(k).transpose();
  return g;
}

Mat12 orthogonalityHessian(const double* q, double weight) {
  const Mat3 A = rowsOf(q);
  const Mat3 C = A * A.transpose() - Mat3::Identity();
  const Mat3 AtA = A.transpose() * A;
  Mat12 H = Mat12::Zero();
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < 3; ++k) {
      Mat3 block = A.row(k).transpose() * A.row(i) + C(i, k) * Mat3::Identity();
      if (i == k) block += AtA;
      H.block<3, 3>(3 + 3 * i, 3 + 3 * k) = 4.0 * weight * block;
    }
  }
  return H;
}

}  // namespace rigidiff
