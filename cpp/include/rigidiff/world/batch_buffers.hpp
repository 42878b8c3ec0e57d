// One thread's buffers in the batches (parallel.hpp): a Data, with the RK4 or implicit step's workspace or the
// constrained step's data. Built on the thread that uses them, never shared.
#pragma once

#include "rigidiff/collision/collision_model.hpp"
#include "rigidiff/multibody/data.hpp"
#include "rigidiff/multibody/model.hpp"
#include "rigidiff/world/contact_step.hpp"
#include "rigidiff/world/implicit_step.hpp"
#include "rigidiff/world/rk4_step.hpp"

namespace rigidiff {

struct Rk4Buffers {
  explicit Rk4Buffers(const Model& model) : data(model), ws(model) {}
  Data data;
  Rk4Workspace ws;
};

struct ImplicitBuffers {
  explicit ImplicitBuffers(const Model& model) : data(model), ws(model) {}
  Data data;
  ImplicitWorkspace ws;
};

struct ContactBuffers {
  ContactBuffers(const Model& model, const CollisionModel& cmodel) : data(model), cd(cmodel) {}
  Data data;
  ContactStepData cd;
};

}  // namespace rigidiff
