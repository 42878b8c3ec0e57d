#include "rigidiff/algorithm/center_of_mass.hpp"

#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"

namespace rigidiff {

namespace {
void subtreeCom(const Model& model, Data& data) {
  for (int i = 0; i < model.njoints; ++i) {
    const Inertia& I = model.inertias[i];
    data.mass_sub[i] = I.mass;
    data.com_sub[i] = I.mass * (i == 0 ? I.com : data.oMi[i].actPoint(I.com));
  }
  for (int i = model.njoints - 1; i > 0; --i) {
    const int p = model.parents[i];
    data.mass_sub[p] += data.mass_sub[i];
    data.com_sub[p] += data.com_sub[i];
  }
  for (int i = 0; i < model.njoints; ++i)
    if (data.mass_sub[i] > 0.0) data.com_sub[i] /= data.mass_sub[i];
}
}  // namespace

Vec3 centerOfMass(const Model& model, Data& data, const double* q) {
  forwardKinematics(model, data, q);
  subtreeCom(model, data);
  return data.com_sub[0];
}

void jacobianCenterOfMass(const Model& model, Data& data, const double* q) {
  computeJointJacobians(model, data, q);
  subtreeCom(model, data);
  const double total = data.mass_sub[0];
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& jm = model.joints[i];
    const double w = total > 0.0 ? data.mass_sub[i] / total : 0.0;
    for (int k = jm.idx_v; k < jm.idx_v + jm.nv; ++k)
      data.Jcom.col(k) = w * (data.J.col(k).head<3>() + data.J.col(k).tail<3>().cross(data.com_sub[i]));
  }
}

}  // namespace rigidiff
