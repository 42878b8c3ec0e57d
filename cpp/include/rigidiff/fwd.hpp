// Common scalar and Eigen aliases of the rigidiff core. Conventions: docs/conventions.md.
#pragma once

#include <Eigen/Core>
#include <Eigen/Dense>

namespace rigidiff {

using Vec3 = Eigen::Vector3d;
using Vec4 = Eigen::Vector4d;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat3 = Eigen::Matrix3d;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using VecX = Eigen::VectorXd;
using MatX = Eigen::MatrixXd;
using Mat3X = Eigen::Matrix<double, 3, Eigen::Dynamic>;
using Mat6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;
// a joint's motion subspace or a small per-joint block: at most 6 columns, never on the heap
using Mat6J = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6>;
using MatJJ = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;
using VecJ = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;

using Eigen::Ref;

/// Skew-symmetric matrix [v]x such that [v]x w = v x w.
inline Mat3 skew(const Vec3& v) {
  Mat3 s;
  s << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
  return s;
}

}  // namespace rigidiff
