#include "rigidiff/collision/collision_model.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/collision/narrowphase.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

int CollisionModel::addGeometry(const Model& model, const CollisionShape& shape, int frame, int skeleton,
                                const SE3& placement, double friction, double restitution, unsigned group,
                                unsigned mask, const std::string& name) {
  RD_CHECK_ARG(frame >= 0 && frame < static_cast<int>(model.frames.size()),
               "geometry " << name << ": frame index " << frame << " out of range");
  RD_CHECK_ARG(skeleton >= 0, "geometry " << name << ": negative skeleton index");
  RD_CHECK_ARG(std::isfinite(friction) && friction >= 0.0, "geometry " << name << ": friction must be >= 0");
  RD_CHECK_ARG(std::isfinite(restitution) && restitution >= 0.0 && restitution <= 1.0,
               "geometry " << name << ": restitution must be in [0, 1], got " << restitution);
  Geometry g;
  g.shape = shape;
  g.frame = frame;
  g.joint = model.frames[frame].joint;
  g.body = g.joint == 0 ? BodyRef{} : BodyRef{BodyKind::Articulated, g.joint};
  g.skeleton = skeleton;
  g.placement = placement;
  g.friction = friction;
  g.restitution = restitution;
  g.group = group;
  g.mask = mask;
  g.name = name;
  if (shape.type == ShapeType::Plane) {
    g.box_half.setConstant(INFINITY);
  } else {
    for (int k = 0; k < 3; ++k) {
      const double hi = shape.coreSupport(Vec3::Unit(k))[k], lo = shape.coreSupport(-Vec3::Unit(k))[k];
      g.box_center[k] = 0.5 * (hi + lo);
      g.box_half[k] = 0.5 * (hi - lo) + shape.margin();
    }
  }
  geometries.push_back(g);
  if (static_cast<int>(self_collision.size()) <= skeleton) self_collision.resize(skeleton + 1, 0);
  return static_cast<int>(geometries.size()) - 1;
}

bool CollisionModel::allowed(const Model& model, int i, int j) const {
  const Geometry& a = geometries[i];
  const Geometry& b = geometries[j];
  if (a.joint == b.joint) return false;  // one rigid body (or both welded to the world)
  if (!(a.group & b.mask) || !(b.group & a.mask)) return false;
  const bool pa = a.shape.type == ShapeType::Plane, pb = b.shape.type == ShapeType::Plane;
  if (pa && pb) return false;
  if (a.skeleton == b.skeleton) {
    if (!self_collision[a.skeleton]) return false;
    if (model.parents[a.joint] == b.joint || model.parents[b.joint] == a.joint) return false;  // adjacent links
  }
  return true;
}

CollisionData::CollisionData(const CollisionModel& cmodel) {
  const std::size_t n = cmodel.geometries.size();
  placements.resize(n);
  lower.resize(n);
  upper.resize(n);
  order.reserve(n);  // filled with the bounded boxes by the first broad phase
  reach.assign(n, 0.0);
  pairs.reserve(n);
  contacts.contacts.reserve(4 * n + 8);
}

void updateGeometryPlacements(const Model& model, const Data& data, const CollisionModel& cmodel,
                              CollisionData& cdata) {
  for (std::size_t k = 0; k < cmodel.geometries.size(); ++k) {
    const Geometry& g = cmodel.geometries[k];
    cdata.placements[k] = framePlacement(model, data, g.frame) * g.placement;
  }
}

namespace {

// world box of a geometry from its local box: conservative (the box of the rotated box), O(1)
void boundingBox(const Geometry& g, const SE3& M, double grow, Vec3& lo, Vec3& hi) {
  if (g.shape.type == ShapeType::Plane) {
    lo.setConstant(-INFINITY);
    hi.setConstant(INFINITY);
    return;
  }
  const Vec3 c = M.actPoint(g.box_center);
  const Vec3 h = M.R.cwiseAbs() * g.box_half + Vec3::Constant(grow);
  lo = c - h;
  hi = c + h;
}

// false when the world box [lo, hi] lies entirely above the half-space of plane geometry p (by more than grow)
bool boxReachesPlane(const Geometry& p, const SE3& Mp, const Vec3& lo, const Vec3& hi, double grow) {
  const Vec3 n = Mp.R * p.shape.normal;
  const double offset = p.shape.offset + n.dot(Mp.p);
  const Vec3 c = 0.5 * (lo + hi), h = 0.5 * (hi - lo);
  return n.dot(c) - n.cwiseAbs().dot(h) - offset < grow;
}

}  // namespace

void broadPhase(const Model& model, const CollisionModel& cmodel, CollisionData& cdata) {
  const int n = static_cast<int>(cmodel.geometries.size());
  for (int k = 0; k < n; ++k)
    boundingBox(cmodel.geometries[k], cdata.placements[k], 0.5 * cmodel.margin + cdata.reach[k], cdata.lower[k],
                cdata.upper[k]);
  cdata.pairs.clear();
  // a half-space has an infinite box, which every box overlaps: test the boxes against the half-space itself,
  // outside the sweep (which then holds the bounded boxes only)
  int bounded = 0, skeleton = -1;
  bool oneBody = true;  // all bounded boxes on one skeleton whose links do not touch each other
  for (int k = 0; k < n; ++k) {
    const Geometry& p = cmodel.geometries[k];
    if (p.shape.type != ShapeType::Plane) {
      ++bounded;
      if (skeleton < 0) skeleton = p.skeleton;
      oneBody = oneBody && p.skeleton == skeleton && !cmodel.self_collision[p.skeleton];
      continue;
    }
    for (int j = 0; j < n; ++j) {
      if (j == k || !cmodel.allowed(model, k, j)) continue;  // two planes are never allowed
      if (boxReachesPlane(p, cdata.placements[k], cdata.lower[j], cdata.upper[j], cmodel.margin + cdata.reach[k]))
        cdata.pairs.emplace_back(std::min(k, j), std::max(k, j));
    }
  }
  if (oneBody) {  // a robot alone on the ground: no two bounded boxes may touch
    std::sort(cdata.pairs.begin(), cdata.pairs.end());
    return;
  }
  // sweep along the axis the boxes spread most along (a standing humanoid's z, a row of bodies' x): a box can
  // only overlap the boxes that start before it ends, and the fewer start before, the fewer pairs are tested
  Vec3 lowest = Vec3::Constant(INFINITY), highest = Vec3::Constant(-INFINITY);
  for (int k = 0; k < n; ++k) {
    if (cmodel.geometries[k].shape.type == ShapeType::Plane) continue;
    lowest = lowest.cwiseMin(cdata.lower[k]);
    highest = highest.cwiseMax(cdata.lower[k]);
  }
  int axis = 0;
  (highest - lowest).maxCoeff(&axis);  // x when no box is finite (NaN compares false)
  const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
  if (static_cast<int>(cdata.order.size()) != bounded) {  // the first call: the bounded boxes by index
    cdata.order.clear();
    for (int k = 0; k < n; ++k)
      if (cmodel.geometries[k].shape.type != ShapeType::Plane) cdata.order.push_back(k);
  }
  // by the lower end along the axis, ties by index (a total order: the same as a full sort). The last step's
  // order is nearly sorted already (bodies move little in a step), so insertion sort is linear here.
  auto before = [&](int a, int b) {
    return cdata.lower[a][axis] < cdata.lower[b][axis] || (cdata.lower[a][axis] == cdata.lower[b][axis] && a < b);
  };
  for (int s = 1; s < bounded; ++s) {
    const int k = cdata.order[s];
    int t = s;
    for (; t > 0 && before(k, cdata.order[t - 1]); --t) cdata.order[t] = cdata.order[t - 1];
    cdata.order[t] = k;
  }
  for (int s = 0; s < bounded; ++s) {
    const int i = cdata.order[s];
    for (int t = s + 1; t < bounded; ++t) {
      const int j = cdata.order[t];
      if (cdata.lower[j][axis] > cdata.upper[i][axis]) break;
      if (cdata.lower[i][a1] > cdata.upper[j][a1] || cdata.lower[j][a1] > cdata.upper[i][a1]) continue;
      if (cdata.lower[i][a2] > cdata.upper[j][a2] || cdata.lower[j][a2] > cdata.upper[i][a2]) continue;
      if (!cmodel.allowed(model, i, j)) continue;
      cdata.pairs.emplace_back(std::min(i, j), std::max(i, j));
    }
  }
  std::sort(cdata.pairs.begin(), cdata.pairs.end());
}

void computeContacts(const Model& model, Data& data, const CollisionModel& cmodel, CollisionData& cdata,
                     const double* q) {
  forwardKinematics(model, data, q);
  detectContacts(model, data, cmodel, cdata);
}

void detectContacts(const Model& model, const Data& data, const CollisionModel& cmodel, CollisionData& cdata) {
  updateGeometryPlacements(model, data, cmodel, cdata);
  detectContactsAtPlacements(model, cmodel, cdata);
}

void detectContactsAtPlacements(const Model& model, const CollisionModel& cmodel, CollisionData& cdata) {
  broadPhase(model, cmodel, cdata);
  cdata.contacts.clear();
  for (auto [i, j] : cdata.pairs) {
    if (cmodel.geometries[i].joint == 0) std::swap(i, j);  // a moving body is A: the ground's normal points up
    collideShapes(cmodel.geometries[i].shape, cdata.placements[i], i, cmodel.geometries[j].shape, cdata.placements[j],
                  j, cmodel.margin + cdata.reach[i] + cdata.reach[j], cdata.contacts.contacts);
  }
}

}  // namespace rigidiff
