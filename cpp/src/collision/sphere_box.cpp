// Sphere (A) against a box (B): the box feature nearest to the centre (face, edge or vertex); a centre
// inside the box touches the face it is least deep below.
#include <cmath>

#include "rigidiff/collision/narrowphase.hpp"

namespace rigidiff {
namespace narrowphase {

void sphereBox(const CollisionShape& sphere, const SE3& Ms, int gs, const CollisionShape& box, const SE3& Mb, int gb,
               double margin, std::vector<Contact>& out) {
  const Vec3& h = box.half_extents;
  const Vec3 c = Mb.R.transpose() * (Ms.p - Mb.p);  // centre in the box frame
  Feature fs;
  fs.kind = FeatureKind::Point;
  fs.margin = sphere.radius;
  Feature fb;
  int clamped[3], nclamped = 0, free_axis = -1;
  Vec3 q = c;
  for (int k = 0; k < 3; ++k) {
    if (c[k] > h[k] || c[k] < -h[k]) {
      q[k] = c[k] > 0.0 ? h[k] : -h[k];
      clamped[nclamped++] = k;
    } else {
      free_axis = k;
    }
  }
  if (nclamped == 0) {
    // inside: the face of least depth
    int best = 0;
    double depth = INFINITY;
    for (int k = 0; k < 3; ++k) {
      const double dk = h[k] - std::abs(c[k]);
      if (dk < depth) {
        depth = dk;
        best = k;
      }
    }
    if (-depth - sphere.radius >= margin) return;
    fb.kind = FeatureKind::Face;
    fb.d = Vec3::Zero();
    fb.d[best] = c[best] >= 0.0 ? 1.0 : -1.0;
    fb.p = fb.d * h[best];
    addContact(out, gs, gb, fs, Ms, fb, Mb, Mb.R * fb.d);
    return;
  }
  const double dist = (c - q).norm();
  if (dist - sphere.radius >= margin) return;
  if (nclamped == 1) {
    const int k = clamped[0];
    fb.kind = FeatureKind::Face;
    fb.d = Vec3::Zero();
    fb.d[k] = q[k] > 0.0 ? 1.0 : -1.0;
    fb.p = fb.d * h[k];
  } else if (nclamped == 2) {
    fb.kind = FeatureKind::Segment;
    fb.d = Vec3::Zero();
    fb.d[free_axis] = 1.0;
    fb.p = q;
    fb.p[free_axis] = 0.0;
  } else {
    fb.kind = FeatureKind::Point;
    fb.p = q;
  }
  addContact(out, gs, gb, fs, Ms, fb, Mb, Mb.R * (c - q).normalized());
}

}  // namespace narrowphase
}  // namespace rigidiff
