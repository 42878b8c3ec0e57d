// The obstacles of a Projective Dynamics world (pd_model.hpp): their signed distances, and the cotangents of
// their poses through the penalty k/2 d^2 of the vertices inside them (pd_step.hpp).
#include <cmath>

#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {

double PdModel::obstacleDistance(int o, const Vec3& x, Vec3* normal, double* curvature) const {
  *curvature = 0.0;
  const int n_planes = static_cast<int>(planes.size()), n_spheres = static_cast<int>(spheres.size());
  if (o < n_planes) {
    *normal = planes[o].normal;
    return planes[o].normal.dot(x) - planes[o].offset;
  }
  if (o < n_planes + n_spheres) {
    const PdSphere& s = spheres[o - n_planes];
    const Vec3 r = x - s.centre;
    const double len = r.norm();
    *normal = len > 0.0 ? Vec3(r / len) : Vec3::UnitZ();
    *curvature = len > 0.0 ? 1.0 / len : 0.0;
    return len - s.radius;
  }
  const PdBox& b = boxes[o - n_planes - n_spheres];
  const Vec3 local = b.rotation.transpose() * (x - b.position);
  const Vec3 excess = local.cwiseAbs() - b.half;
  const Vec3 sign(local[0] < 0.0 ? -1.0 : 1.0, local[1] < 0.0 ? -1.0 : 1.0, local[2] < 0.0 ? -1.0 : 1.0);
  // inside or on the surface: the nearest face's plane (the distance is linear there; outside, the way to the box
  // would have no direction on its surface)
  if ((excess.array() <= 0.0).all()) {
    int j = 0;
    excess.maxCoeff(&j);
    *normal = sign[j] * b.rotation.col(j);
    return excess[j];
  }
  const Vec3 out = excess.cwiseMax(0.0).cwiseProduct(sign);
  const double d = out.norm();
  *normal = b.rotation * out / d;
  return d;
}

void PdModel::obstacleMotion(int o, Vec3* position, Vec3* linear, Vec3* angular) const {
  const int n_planes = static_cast<int>(planes.size()), n_spheres = static_cast<int>(spheres.size());
  position->setZero();
  linear->setZero();
  angular->setZero();
  if (o < n_planes) return;
  if (o < n_planes + n_spheres) {
    const PdSphere& s = spheres[o - n_planes];
    *position = s.centre, *linear = s.linear, *angular = s.angular;
    return;
  }
  const PdBox& b = boxes[o - n_planes - n_spheres];
  *position = b.position, *linear = b.linear, *angular = b.angular;
}

void pdObstacleCotangents(const PdModel& model, const Points& x, const Points& Z, VecX& out) {
  out.setZero(6 * model.obstacleCount());
  const int first_box = static_cast<int>(model.planes.size() + model.spheres.size());
  const double k = model.contact_stiffness;
  // grad_i E = k d n; dL/d(theta) = -z_i^T d(k d n)/d(theta) for each vertex i inside obstacle o
  model.forEachPenetration(x, [&](int i, int o, double d, const Vec3& n, double curvature) {
    if (o < static_cast<int>(model.planes.size())) return;  // planes do not move
    const Vec3 z = Z.row(i).transpose();
    const Mat3 nn = n * n.transpose();
    // a translation c of the obstacle: d(d n)/dc = -(n n^T + d curvature (I - n n^T))
    out.segment<3>(6 * o) += k * (nn + d * curvature * (Mat3::Identity() - nn)) * z;
    if (o < first_box) return;
    // a box's rotation by w about its position p (n' = n + w x n, d' = n' . (x - p) - h):
    // d(d n)/dw = n (n x r)^T - d [n]x, with r = x - p, so z^T d(d n)/dw = (z . n)(n x r) + d (n x z)
    const Vec3 r = x.row(i).transpose() - model.boxes[o - first_box].position;
    out.segment<3>(6 * o + 3) -= k * (n.cross(r) * n.dot(z) + d * n.cross(z));
  });
}

}  // namespace deformable
}  // namespace rigidiff
