#include "rigidiff/world/friction_basis.hpp"

#include <cmath>

namespace rigidiff {

int frictionSeedAxis(const Vec3& n, const Mat3& Rb) {
  const Vec3 nl = Rb.transpose() * n;
  int axis = 0;
  while (axis < 2 && std::abs(nl[axis]) >= 0.6) ++axis;
  return axis;
}

void frictionBasis(const Vec3& n, const Mat3& Rb, int directions, Vec3* t) {
  const Vec3 a = Rb.col(frictionSeedAxis(n, Rb));
  t[0] = (a - n.dot(a) * n).normalized();
  t[1] = n.cross(t[0]);
  if (directions == 4) {
    t[2] = (t[0] + t[1]) / std::sqrt(2.0);
    t[3] = (t[1] - t[0]) / std::sqrt(2.0);
  }
}

void frictionBasisDerivative(const Vec3& n, const Mat3& Rb, int directions, const Vec3& dn, const Vec3& wb,
                             Vec3* dt) {
  const Vec3 a = Rb.col(frictionSeedAxis(n, Rb));
  const Vec3 da = wb.cross(a);
  const double na = n.dot(a);
  const Vec3 u = a - na * n;
  const double len = u.norm();
  const Vec3 t1 = u / len;
  const Vec3 du = da - (dn.dot(a) + n.dot(da)) * n - na * dn;
  dt[0] = (du - t1.dot(du) * t1) / len;
  dt[1] = dn.cross(t1) + n.cross(dt[0]);
  if (directions == 4) {
    dt[2] = (dt[0] + dt[1]) / std::sqrt(2.0);
    dt[3] = (dt[1] - dt[0]) / std::sqrt(2.0);
  }
}

}  // namespace rigidiff
