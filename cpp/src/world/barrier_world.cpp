// Building a barrier world (world/barrier_world.hpp).
#include "rigidiff/world/barrier_world.hpp"

#include <cmath>

#include "rigidiff/macros.hpp"

namespace rigidiff {

int BarrierWorldModel::addBody(AffineBody body) {
  RD_CHECK_ARG(!body.name.empty(), "an affine body needs a non-empty name");
  for (const AffineBody& b : bodies) RD_CHECK_ARG(b.name != body.name, "name '" << body.name << "' is already used");
  bodies.push_back(std::move(body));
  return static_cast<int>(bodies.size()) - 1;
}

void BarrierWorldModel::addPlane(const Vec3& normal, double offset) {
  RD_CHECK_ARG(normal.allFinite() && std::isfinite(offset), "a ground plane needs a finite normal and offset");
  const double len = normal.norm();
  RD_CHECK_ARG(len > 0.0, "a ground plane's normal must be non-zero");
  planes.push_back(GroundPlane{normal / len, offset / len});
}

}  // namespace rigidiff
