// A 3-vector over any scalar (double or Jet), with the few operations the distance closed forms use.
// Eigen's own vectors would need NumTraits for Jet; these four operations do not.
#pragma once

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

}  // namespace distance
}  // namespace rigidiff
