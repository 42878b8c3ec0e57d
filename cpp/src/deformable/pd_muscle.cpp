// Muscles of Projective Dynamics bodies (pd_model.hpp): adding them, and the energy w/2 (|u| - a)^2 of a sample,
// u = F m, with its stress, its derivative and its derivatives with respect to the activation and the stiffness.
#include "rigidiff/deformable/pd_muscle.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace rigidiff {
namespace deformable {

int PdModel::addMuscle(const std::string& name, int b, const std::vector<int>& elements, const Points& fibers,
                       double stiffness) {
  for (const PdMuscle& m : muscles)
    if (m.name == name) throw std::invalid_argument("muscle name '" + name + "' is already used");
  if (b < 0 || b >= static_cast<int>(bodies.size())) throw std::out_of_range("no deformable body " + std::to_string(b));
  const PdBody& body = bodies[b];
  if (elements.empty()) throw std::invalid_argument("muscle " + name + ": no elements");
  if (fibers.rows() != 1 && fibers.rows() != static_cast<int>(elements.size()))
    throw std::invalid_argument("muscle " + name + ": fiber must be one direction or one per element");
  if (!(stiffness > 0.0) || !std::isfinite(stiffness))
    throw std::invalid_argument("muscle " + name + ": stiffness must be finite and > 0, got " + std::to_string(stiffness));
  PdMuscle muscle{name, b, stiffness, {}};
  std::vector<Vec3> directions;
  std::vector<char> listed(body.element_count, 0);
  for (std::size_t j = 0; j < elements.size(); ++j) {
    const int e = elements[j];
    if (e < 0 || e >= body.element_count)
      throw std::invalid_argument("muscle " + name + ": element " + std::to_string(e) + " is not an element of " +
                                  body.name + " (" + std::to_string(body.element_count) + " elements)");
    const Vec3 f = fibers.row(fibers.rows() == 1 ? 0 : j).transpose();
    if (!f.allFinite() || !(f.norm() > 0.0))
      throw std::invalid_argument("muscle " + name + ": the fibre of element " + std::to_string(e) +
                                  " must be finite and non-zero");
    const int global = body.first_element + e;
    if (listed[e]++ || samples[element_start[global]].muscle >= 0)
      throw std::invalid_argument("muscle " + name + ": element " + std::to_string(e) + " of " + body.name +
                                  (listed[e] > 1 ? " is listed twice" : " already belongs to a muscle"));
    for (int k = element_start[global]; k < element_start[global + 1]; ++k) {
      muscle.samples.push_back(k);
      directions.push_back(f.normalized());
    }
  }
  const int index = static_cast<int>(muscles.size());
  for (std::size_t j = 0; j < muscle.samples.size(); ++j) {
    samples[muscle.samples[j]].muscle = index;
    samples[muscle.samples[j]].fiber = directions[j];
  }
  muscles.push_back(muscle);
  activation.conservativeResize(index + 1);
  activation[index] = 1.0;
  setMuscleStiffness(index, stiffness);
  return index;
}

void PdModel::setMuscleStiffness(int k, double stiffness) {
  if (!(stiffness > 0.0) || !std::isfinite(stiffness))
    throw std::invalid_argument("muscle stiffness must be finite and > 0, got " + std::to_string(stiffness));
  PdMuscle& m = muscles.at(k);
  m.stiffness = stiffness;
  for (int s : m.samples) samples[s].w_muscle = stiffness * samples[s].volume;
}

namespace {

// u / |u|, or the fibre itself where u vanishes (a fibre crushed to a point pulls back along its rest direction)
Vec3 unit(const Vec3& u, const Vec3& fiber) {
  const double len = u.norm();
  return len > 0.0 ? Vec3(u / len) : fiber;
}

}  // namespace

double muscleEnergy(const PdModel& model, const PdSample& s, const Mat3& F, Mat3* stress) {
  const double a = model.activation[s.muscle];
  const Vec3 u = F * s.fiber;
  const double excess = u.norm() - a;
  // dE/dF = w (u - a u/|u|) m^T
  *stress += s.w_muscle * (u - a * unit(u, s.fiber)) * s.fiber.transpose();
  return 0.5 * s.w_muscle * excess * excess;
}

void muscleStressDerivative(const PdModel& model, const PdSample& s, const Mat3& F, Eigen::Matrix<double, 9, 9>& C) {
  const double a = model.activation[s.muscle];
  const Vec3 u = F * s.fiber;
  const double len = u.norm();
  // d/du of w (u - a u/|u|) = w ((1 - a/|u|) I + a u u^T / |u|^3); du = dF m
  Mat3 Hu = Mat3::Identity();
  if (len > 0.0) Hu = (1.0 - a / len) * Mat3::Identity() + a * u * u.transpose() / (len * len * len);
  Hu *= s.w_muscle;
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c)
        for (int j = 0; j < 3; ++j) C(3 * r + i, 3 * c + j) += Hu(r, c) * s.fiber[i] * s.fiber[j];
}

Mat3 muscleStressPerActivation(const PdSample& s, const Mat3& F) {
  return -s.w_muscle * unit(F * s.fiber, s.fiber) * s.fiber.transpose();
}

Mat3 muscleStressPerStiffness(const PdModel& model, const PdSample& s, const Mat3& F) {
  const Vec3 u = F * s.fiber;
  return s.volume * (u - model.activation[s.muscle] * unit(u, s.fiber)) * s.fiber.transpose();
}

}  // namespace deformable
}  // namespace rigidiff
