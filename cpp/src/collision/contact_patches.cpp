// Contact reduction per patch (contact_patches.hpp): a flat face resting on a finely triangulated one
// touches at every vertex; a few extreme points and the deepest carry the same support polygon.
#include "contact_patches.hpp"

#include <cmath>

namespace rigidiff {
namespace narrowphase {

namespace {

// a tangent basis of the plane with normal n that turns with n, from the world axis least along n
void tangentBasis(const Vec3& n, Vec3& t1, Vec3& t2) {
  int axis = 0;
  n.cwiseAbs().minCoeff(&axis);
  t1 = Vec3::Unit(axis).cross(n).normalized();
  t2 = n.cross(t1);
}

// indices (into members) of the contacts kept for one patch
std::vector<std::size_t> representatives(const std::vector<Contact>& out, const std::vector<std::size_t>& members,
                                         double size) {
  const double tie = 1e-9 * size;
  std::vector<std::size_t> kept;
  auto keep = [&](std::size_t i) {
    for (std::size_t k : kept)
      if (k == i) return;
    kept.push_back(i);
  };
  std::size_t deepest = 0;
  for (std::size_t i = 1; i < members.size(); ++i)
    if (out[members[i]].distance < out[members[deepest]].distance - tie) deepest = i;
  keep(deepest);
  Vec3 t1, t2;
  tangentBasis(out[members[0]].normal, t1, t2);
  const Vec3 dirs[8] = {t1 + t2, -t1 - t2, t1 - t2, t2 - t1, t1, -t1, t2, -t2};
  for (const Vec3& d : dirs) {
    if (kept.size() == kMostPerPatch) break;
    std::size_t far = 0;
    for (std::size_t i = 1; i < members.size(); ++i)
      if (d.dot(out[members[i]].point) > d.dot(out[members[far]].point) + tie) far = i;
    keep(far);
  }
  return kept;
}

}  // namespace

void reducePatches(std::vector<Contact>& out, std::size_t first, double size) {
  const double agree = std::cos(kPatchAngleDegrees * M_PI / 180.0);
  std::vector<std::vector<std::size_t>> patches;
  for (std::size_t k = first; k < out.size(); ++k) {
    std::size_t p = 0;
    while (p < patches.size() && out[patches[p][0]].normal.dot(out[k].normal) <= agree) ++p;
    if (p == patches.size()) patches.emplace_back();
    patches[p].push_back(k);
  }
  std::vector<bool> keep(out.size() - first, true);
  for (const std::vector<std::size_t>& members : patches) {
    if (members.size() <= kMostPerPatch) continue;
    for (std::size_t k : members) keep[k - first] = false;
    for (std::size_t i : representatives(out, members, size)) keep[members[i] - first] = true;
  }
  std::size_t kept = first;
  for (std::size_t k = first; k < out.size(); ++k)
    if (keep[k - first]) out[kept++] = out[k];
  out.resize(kept);
}

}  // namespace narrowphase
}  // namespace rigidiff
