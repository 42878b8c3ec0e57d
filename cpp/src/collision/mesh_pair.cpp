// A triangle mesh (A) against any shape but a half-space (B): spheres and capsules meet the faces
// themselves (mesh_rounded.hpp), boxes and other triangle meshes their faces, edges and vertices
// (mesh_polytope.hpp); cylinders and convex meshes meet the prisms of the faces near them, each through
// the convex routine (collision/triangle_mesh.hpp).
#include <algorithm>
#include <cmath>
#include <vector>

#include "contact_patches.hpp"
#include "mesh_polytope.hpp"
#include "mesh_rounded.hpp"

#include "rigidiff/collision/manifold.hpp"
#include "rigidiff/collision/narrowphase.hpp"
#include "rigidiff/collision/triangle_mesh.hpp"

namespace rigidiff {
namespace narrowphase {

namespace {

// box, in the frame of Mf, of shape s placed by Ms (its core's support along the frame's axes, grown by
// its margin and by `grow`)
void boxIn(const SE3& Mf, const CollisionShape& s, const SE3& Ms, double grow, Vec3& lo, Vec3& hi) {
  for (int k = 0; k < 3; ++k) {
    const Vec3 axis = Mf.R.col(k);
    const double up = axis.dot(Ms.actPoint(s.coreSupport(Ms.R.transpose() * axis)) - Mf.p);
    const double down = axis.dot(Ms.actPoint(s.coreSupport(-(Ms.R.transpose() * axis))) - Mf.p);
    hi[k] = up + s.margin() + grow;
    lo[k] = down - s.margin() - grow;
  }
}

// a contact on an edge or vertex shared by several faces is found once per face: keep the first
// (within 1e-9 size of a contact kept before it, with the same normal). Each contact is compared only
// with those whose x lies within that distance of its own (an order by x), which keeps the same contacts
// as comparing it with every earlier one.
void dropDuplicates(std::vector<Contact>& out, std::size_t first, double size) {
  const std::size_t n = out.size() - first;
  const double tol = 1e-9 * size;
  auto same = [&](std::size_t i, std::size_t k) {
    return (out[i].point - out[k].point).norm() <= tol && out[i].normal.dot(out[k].normal) > 1.0 - 1e-12;
  };
  bool finite = std::isfinite(tol);
  for (std::size_t k = first; k < out.size() && finite; ++k) finite = out[k].point.allFinite();
  std::vector<char> drop(n, 0);
  if (!finite || n < 32) {  // few contacts, or NaN that an order cannot hold: compare with every earlier one
    for (std::size_t k = 1; k < n; ++k)
      for (std::size_t i = 0; i < k && !drop[k]; ++i) drop[k] = !drop[i] && same(first + i, first + k);
  } else {
    std::vector<std::size_t> byX(n), rank(n);
    for (std::size_t k = 0; k < n; ++k) byX[k] = k;
    std::sort(byX.begin(), byX.end(), [&](std::size_t a, std::size_t b) {
      const double xa = out[first + a].point.x(), xb = out[first + b].point.x();
      return xa < xb || (xa == xb && a < b);
    });
    for (std::size_t r = 0; r < n; ++r) rank[byX[r]] = r;
    const double window = 2.0 * tol;  // wider than any pair same() accepts, round-off of its norm included
    for (std::size_t k = 1; k < n; ++k) {  // in order, so that an earlier contact's fate is known
      const double x = out[first + k].point.x();
      for (std::size_t r = rank[k]; r-- > 0 && x - out[first + byX[r]].point.x() <= window && !drop[k];)
        drop[k] = byX[r] < k && !drop[byX[r]] && same(first + byX[r], first + k);
      for (std::size_t r = rank[k] + 1; r < n && out[first + byX[r]].point.x() - x <= window && !drop[k]; ++r)
        drop[k] = byX[r] < k && !drop[byX[r]] && same(first + byX[r], first + k);
    }
  }
  std::size_t kept = first;
  for (std::size_t k = 0; k < n; ++k)
    if (!drop[k]) out[kept++] = out[first + k];
  out.resize(kept);
}

// many contacts of nearly one normal (a body resting across several faces) keep the four that span them
void reduceCoplanar(std::vector<Contact>& out, std::size_t first) {
  const std::size_t n = out.size() - first;
  if (n <= 4) return;
  Vec3 mean = Vec3::Zero();
  for (std::size_t k = first; k < out.size(); ++k) mean += out[k].normal;
  mean.normalize();
  for (std::size_t k = first; k < out.size(); ++k)
    if (out[k].normal.dot(mean) < std::cos(5.0 * M_PI / 180.0)) return;
  std::vector<Vec3> pts;
  std::vector<double> depth;
  for (std::size_t k = first; k < out.size(); ++k) {
    pts.push_back(out[k].point);
    depth.push_back(out[k].distance);
  }
  std::vector<Contact> kept;
  for (int k : manifold::reduceToFour(pts, depth)) kept.push_back(out[first + k]);
  out.resize(first);
  out.insert(out.end(), kept.begin(), kept.end());
}

}  // namespace

void meshPair(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
              double margin, std::vector<Contact>& out) {
  const MeshTriangles& ma = *a.triangles;
  Vec3 lo, hi;
  boxIn(Ma, b, Mb, margin, lo, hi);
  std::vector<int> faces_a;
  ma.query(lo, hi, faces_a);
  const std::size_t first = out.size();
  const double size = ma.size();  // the mesh's size
  if (b.type == ShapeType::Sphere || b.type == ShapeType::Capsule) {
    meshRounded(a, Ma, ga, faces_a, b, Mb, gb, margin, out);
    dropDuplicates(out, first, size);
    reduceCoplanar(out, first);
    return;
  }
  if (b.type == ShapeType::Box || b.type == ShapeType::TriangleMesh) {
    std::vector<std::pair<int, int>> pairs;
    meshPolytopePairs(a, Ma, b, Mb, faces_a, margin, pairs);
    meshPolytope(a, Ma, ga, b, Mb, gb, pairs, margin, out);
    dropDuplicates(out, first, size);
    reducePatches(out, first, size);
    return;
  }
  // cylinders and convex meshes: the prisms of the faces; a contact on a flat or valley edge of a face is
  // a ghost of an edge inside the surface (the neighbour face reports the true one), and one whose point of
  // B lies behind the face is real only if that point's way out to the face (to the face's nearest point)
  // crosses no other face (else B lies across a part thinner than the prisms, as a can standing on a shelf
  // is from the shelf's underside)
  std::vector<int> crossing;
  for (int f : faces_a) {
    const std::size_t from = out.size();
    convexPair(ma.prism(f), Ma, ga, b, Mb, gb, margin, out);
    std::size_t kept = from;
    for (std::size_t k = from; k < out.size(); ++k) {
      const Contact& c = out[k];
      // the witness point on the prism (a deep contact's midpoint can lie far from the side it leaves by)
      const Vec3 pa = Ma.R.transpose() * (c.point + 0.5 * c.distance * c.normal - Ma.p);
      if (ma.ghostContact(f, pa, -(Ma.R.transpose() * c.normal))) continue;
      const Vec3 pb = Ma.R.transpose() * (c.point - 0.5 * c.distance * c.normal - Ma.p);  // B's witness point
      if (ma.acrossAnotherFace(f, pb, crossing)) continue;
      out[kept++] = c;
    }
    out.resize(kept);
  }
  dropDuplicates(out, first, size);
  reduceCoplanar(out, first);
}

}  // namespace narrowphase
}  // namespace rigidiff
