// The triangle-mesh side of the box tree (collision/bvh.hpp): the boxes of the faces, and the filter
// that drops pairs of faces meeting at a vertex from a self query (they always touch there).
#include <algorithm>

#include "rigidiff/collision/bvh.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

void triangleBoxes(const Vec3* points, int n, const std::array<int, 3>* faces, int m, Vec3* lo, Vec3* hi) {
  for (int f = 0; f < m; ++f) {
    for (int k : faces[f]) {
      RD_CHECK_ARG(k >= 0 && k < n, "triangle " << f << " has vertex index " << k << " out of range [0, " << n << ")");
      RD_CHECK_ARG(points[k].allFinite(), "vertex " << k << " of triangle " << f << " is not finite");
    }
    const Vec3 &a = points[faces[f][0]], &b = points[faces[f][1]], &c = points[faces[f][2]];
    lo[f] = a.cwiseMin(b).cwiseMin(c);
    hi[f] = a.cwiseMax(b).cwiseMax(c);
  }
}

void dropAdjacentTriangles(const std::array<int, 3>* faces, std::vector<std::pair<int, int>>& pairs) {
  auto shareVertex = [&](const std::pair<int, int>& p) {
    const std::array<int, 3>&a = faces[p.first], &b = faces[p.second];
    for (int u : a)
      if (u == b[0] || u == b[1] || u == b[2]) return true;
    return false;
  };
  pairs.erase(std::remove_if(pairs.begin(), pairs.end(), shareVertex), pairs.end());
}

}  // namespace rigidiff
