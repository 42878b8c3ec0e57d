// A 3-vector over any scalar (double or Jet), with the few operations the distance closed forms use.
// Eigen's own vectors would need NumTraits for Jet; these four operations do not.
#pragma once

#include <array>

#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace distance {

template <class T>
struct Point3 {
  T x, y, z;
};

template <class T>
Point3<T> operator-(const Point3<T>& a, const Point3<T>& b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}

template <class T>
T dot(const Point3<T>& a, const Point3<T>& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}

template <class T>
T squaredNorm(const Point3<T>& a) {
  return dot(a, a);
}

template <class T>
Point3<T> cross(const Point3<T>& a, const Point3<T>& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

/// K points as plain doubles.
template <int K>
std::array<Point3<double>, K> plainPoints(const std::array<const Vec3*, K>& x) {
  std::array<Point3<double>, K> r;
  for (int k = 0; k < K; ++k) r[k] = {(*x[k])[0], (*x[k])[1], (*x[k])[2]};
  return r;
}

/// K points whose 3K coordinates are the variables of a Jet, stacked point after point.
template <class J, int K>
std::array<Point3<J>, K> seededPoints(const std::array<const Vec3*, K>& x) {
  std::array<Point3<J>, K> r;
  for (int k = 0; k < K; ++k)
    r[k] = {J::variable((*x[k])[0], 3 * k), J::variable((*x[k])[1], 3 * k + 1), J::variable((*x[k])[2], 3 * k + 2)};
  return r;
}

}  // namespace distance
}  // namespace rigidiff
