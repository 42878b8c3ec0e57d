#include "rigidiff/world/world_data.hpp"

#include <algorithm>
#include <cstring>

#include "rigidiff/world/knot_team.hpp"

namespace rigidiff {

WorldData::WorldData(const WorldModel& world)
    : data(world.model), collision(world.cmodel), contact(world.cmodel) {}

WorldData::~WorldData() = default;

void WorldData::resetCollision(const WorldModel& world) {
  collision = CollisionData(world.cmodel);
  contact = ContactStepData(world.cmodel);
  warm_known = false;
  knots_.reset();  // its threads' WorldData were sized for the geometries before
}

KnotTeam& WorldData::knotTeam(int threads) {
  if (!knots_ || knots_->threads() != threads) knots_ = std::make_unique<KnotTeam>(threads);
  return *knots_;
}

Rk4Workspace& WorldData::rk4(const Model& model) {
  if (!rk4_) rk4_ = std::make_unique<Rk4Workspace>(model, true);
  return *rk4_;
}

ImplicitWorkspace& WorldData::implicit(const Model& model) {
  if (!implicit_) implicit_ = std::make_unique<ImplicitWorkspace>(model);
  return *implicit_;
}

void WorldData::continueFrom(const Model& model, const double* q, const double* v) {
  const std::size_t nq = model.nq, nv = model.nv;
  const bool continues = warm_known && warm_end.size() == nq + nv &&
                         std::memcmp(q, warm_end.data(), nq * sizeof(double)) == 0 &&
                         std::memcmp(v, warm_end.data() + nq, nv * sizeof(double)) == 0;
  if (!continues) {
    contact.warmClasses.clear();
    contact.warmImpulses.clear();
  }
  warm_known = false;  // until the step succeeds and endAt records its end
}

void WorldData::endAt(const Model& model, const double* q, const double* v) {
  warm_end.resize(model.nq + model.nv);
  std::copy(q, q + model.nq, warm_end.begin());
  std::copy(v, v + model.nv, warm_end.begin() + model.nq);
  warm_known = true;
}

}  // namespace rigidiff
