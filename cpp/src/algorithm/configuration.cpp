#include "rigidiff/algorithm/configuration.hpp"

#include <cmath>

#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {
// index in q of the joint's quaternion, or -1
int quaternionOffset(const JointModel& j) {
  if (j.type == JointType::Ball) return j.idx_q;
  if (j.type == JointType::Free) return j.idx_q + 3;
  return -1;
}
}  // namespace

void integrate(const Model& model, const double* q, const double* dv, double* q_out, Motion motion) {
  double buf[7];
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    jointIntegrate(j, q + j.idx_q, dv + j.idx_v, buf, motion);
    for (int k = 0; k < j.nq; ++k) q_out[j.idx_q + k] = buf[k];
  }
}

void difference(const Model& model, const double* q0, const double* q1, double* d) {
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    jointDifference(j, q0 + j.idx_q, q1 + j.idx_q, d + j.idx_v);
  }
}

void neutralConfiguration(const Model& model, double* q) {
  for (int i = 1; i < model.njoints; ++i) jointNeutral(model.joints[i], q + model.joints[i].idx_q);
}

void checkFinite(const double* x, long n, const char* what) {
  for (long k = 0; k < n; ++k)
    RD_CHECK_ARG(std::isfinite(x[k]), what << "[" << k << "] is not finite (" << x[k] << ")");
}

void checkConfiguration(const Model& model, const double* q, double tol, const char* what) {
  checkFinite(q, model.nq, what);
  for (int i = 1; i < model.njoints; ++i) {
    const int o = quaternionOffset(model.joints[i]);
    if (o < 0) continue;
    const double n = std::sqrt(q[o] * q[o] + q[o + 1] * q[o + 1] + q[o + 2] * q[o + 2] + q[o + 3] * q[o + 3]);
    RD_CHECK_ARG(std::abs(n - 1.0) <= tol, what << "[" << o << ":" << o + 4 << "], the quaternion of joint '"
                                                << model.names[i] << "', has norm " << n
                                                << "; expected a unit quaternion (x, y, z, w)");
  }
}

void normalizeConfiguration(const Model& model, double* q) {
  for (int i = 1; i < model.njoints; ++i) {
    const int o = quaternionOffset(model.joints[i]);
    if (o < 0) continue;
    const double n = std::sqrt(q[o] * q[o] + q[o + 1] * q[o + 1] + q[o + 2] * q[o + 2] + q[o + 3] * q[o + 3]);
    RD_CHECK_ARG(n > 1e-12 && std::isfinite(n), "the quaternion of joint '" << model.names[i] << "' (q[" << o << ":"
                                                 << o + 4 << "]) has norm " << n
                                                 << ": too small or not finite to normalise");
    for (int k = 0; k < 4; ++k) q[o + k] /= n;
  }
}

}  // namespace rigidiff
