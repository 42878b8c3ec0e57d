#include "rigidiff/collision/narrowphase.hpp"

#include <utility>

#include "rigidiff/collision/manifold.hpp"
#include "rigidiff/macros.hpp"
#include "thread_scratch.hpp"

namespace rigidiff {

namespace narrowphase {

namespace {

// the lists of clippedPatchContacts: the clipped polygon, and its points below the margin
struct PatchScratch {
  std::vector<manifold::ClippedPoint> clipped, kept;
  std::vector<Vec3> pts;
  std::vector<double> depth;
};

}  // namespace

int clippedPatchContacts(const Feature& face, manifold::PointsView reference, const Vec3& n_ref, const SE3& Mr,
                         int gr, manifold::PointsView incident, double inc_margin, const SE3& Mi, int gi,
                         double margin, std::vector<Contact>& out) {
  const Vec3 face_point = Mr.actPoint(face.p);
  // the thread's lists, kept from call to call: a resting face patch allocates nothing once warm
  PatchScratch& scratch = threadScratch<PatchScratch>();
  std::vector<manifold::ClippedPoint>& clipped = scratch.clipped;
  std::vector<manifold::ClippedPoint>& kept = scratch.kept;
  std::vector<Vec3>& pts = scratch.pts;
  std::vector<double>& depth = scratch.depth;
  kept.clear();
  pts.clear();
  depth.clear();
  manifold::clipToPrism(incident, reference, n_ref, clipped);
  for (const manifold::ClippedPoint& c : clipped) {
    const double gap = n_ref.dot(c.x - face_point) - face.margin - inc_margin;
    if (gap < margin) {
      pts.push_back(c.x);
      depth.push_back(gap);
      kept.push_back(c);
    }
  }
  const manifold::FourIndices four = manifold::reduceToFour(pts, depth);
  for (int k : four) {
    Feature ref = face, inc;
    manifold::clippedFeatures(kept[k], incident, reference, n_ref, Mr, Mi, ref, inc);
    inc.margin = inc_margin;
    addContact(out, gr, gi, ref, Mr, inc, Mi, -n_ref);
  }
  return four.size();
}

void swapRoles(std::vector<Contact>& out, std::size_t first) {
  for (std::size_t k = first; k < out.size(); ++k) {
    Contact& c = out[k];
    std::swap(c.geom_a, c.geom_b);
    std::swap(c.feature_a, c.feature_b);
    c.normal = -c.normal;
    c.type = contactType(c.feature_a.kind, c.feature_b.kind);
  }
}

}  // namespace narrowphase

namespace {

bool isRounded(ShapeType t) { return t == ShapeType::Sphere || t == ShapeType::Capsule; }

// the routine for (a, b) in its own order; false when it only exists for (b, a)
bool dispatch(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
              double margin, std::vector<Contact>& out) {
  const ShapeType ta = a.type, tb = b.type;
  if (tb == ShapeType::Plane) {
    if (ta == ShapeType::Plane) return true;  // two half-spaces: nothing to report
    narrowphase::shapePlane(a, Ma, ga, b, Mb, gb, margin, out);
    return true;
  }
  if (ta == ShapeType::Plane) return false;
  if (ta == ShapeType::TriangleMesh) {
    narrowphase::meshPair(a, Ma, ga, b, Mb, gb, margin, out);
    return true;
  }
  if (tb == ShapeType::TriangleMesh) return false;
  if (isRounded(ta) && isRounded(tb)) {
    narrowphase::roundedPair(a, Ma, ga, b, Mb, gb, margin, out);
    return true;
  }
  if (ta == ShapeType::Sphere && tb == ShapeType::Box) {
    narrowphase::sphereBox(a, Ma, ga, b, Mb, gb, margin, out);
    return true;
  }
  if (ta == ShapeType::Box && tb == ShapeType::Sphere) return false;
  if (ta == ShapeType::Box && tb == ShapeType::Box) {
    narrowphase::boxBox(a, Ma, ga, b, Mb, gb, margin, out);
    return true;
  }
  narrowphase::convexPair(a, Ma, ga, b, Mb, gb, margin, out);
  return true;
}

}  // namespace

void collideShapes(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
                   double margin, std::vector<Contact>& out) {
  RD_CHECK_ARG(margin >= 0.0, "contact margin must be >= 0, got " << margin);
  if (dispatch(a, Ma, ga, b, Mb, gb, margin, out)) return;
  const std::size_t first = out.size();
  dispatch(b, Mb, gb, a, Ma, ga, margin, out);
  narrowphase::swapRoles(out, first);
}

}  // namespace rigidiff
