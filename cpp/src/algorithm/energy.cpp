#include "rigidiff/algorithm/energy.hpp"

#include "rigidiff/algorithm/kinematics.hpp"

namespace rigidiff {

double kineticEnergy(const Model& model, Data& data, const double* q, const double* v) {
  forwardKinematics(model, data, q, v);
  double e = 0.0;
  for (int i = 1; i < model.njoints; ++i) e += model.inertias[i].kineticEnergy(data.v[i]);
  for (int k = 0; k < model.nv; ++k) e += 0.5 * model.armature[k] * v[k] * v[k];
  return e;
}

double potentialEnergy(const Model& model, Data& data, const double* q) {
  forwardKinematics(model, data, q);
  double e = -model.inertias[0].mass * model.gravity.dot(model.inertias[0].com);
  for (int i = 1; i < model.njoints; ++i)
    e -= model.inertias[i].mass * model.gravity.dot(data.oMi[i].actPoint(model.inertias[i].com));
  return e;
}

}  // namespace rigidiff
