// The barrier world as seen by the bindings (bind/api_barrier.hpp).
#include "rigidiff/bind/api_barrier.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "rigidiff/abd/orthogonality.hpp"
#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/contact/barrier.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/barrier_articulated_derivatives.hpp"
#include "rigidiff/world/barrier_contacts.hpp"
#include "rigidiff/world/barrier_friction.hpp"
#include "rigidiff/world/barrier_skeleton_parameters.hpp"
#include "rigidiff/world/barrier_step.hpp"
#include "rigidiff/world/barrier_step_derivatives.hpp"
#include "rigidiff/world/parallel_chunks.hpp"

namespace rigidiff {
namespace bind {

namespace {
void checkBody(const BarrierWorldModel& m, int body) {
  if (body < 0 || body >= static_cast<int>(m.bodies.size()))
    RD_THROW(std::out_of_range, "body index " << body << " outside [0, " << m.bodies.size() << ")");
}
}  // namespace

BarrierWorld::BarrierWorld() = default;

void BarrierWorld::setTimeStep(double dt) {
  RD_CHECK_ARG(std::isfinite(dt) && dt > 0.0, "dt must be finite and > 0, got " << dt);
  model_.dt = dt;
}

void BarrierWorld::setGravity(const double* g) {
  const Vec3 v(g[0], g[1], g[2]);
  RD_CHECK_ARG(v.allFinite(), "gravity must be finite");
  model_.gravity = v;
}

void BarrierWorld::gravity(double* out) const {
  for (int k = 0; k < 3; ++k) out[k] = model_.gravity[k];
}

void BarrierWorld::setOptions(double dhat, double tol, int iterations, double friction, double friction_velocity) {
  RD_CHECK_ARG(std::isfinite(friction) && friction >= 0.0, "friction must be finite and >= 0, got " << friction);
  RD_CHECK_ARG(std::isfinite(friction_velocity) && friction_velocity > 0.0,
               "friction_velocity must be finite and > 0, got " << friction_velocity);
  RD_CHECK_ARG(std::isfinite(dhat) && dhat > 0.0, "dhat must be finite and > 0, got " << dhat);
  RD_CHECK_ARG(std::isfinite(tol) && tol > 0.0, "newton_tolerance must be finite and > 0, got " << tol);
  RD_CHECK_ARG(iterations >= 1, "max_newton_iterations must be >= 1, got " << iterations);
  model_.options.dhat = dhat;
  model_.options.newton_tolerance = tol;
  model_.options.max_newton_iterations = iterations;
  model_.options.friction = friction;
  model_.options.friction_velocity = friction_velocity;
}

void BarrierWorld::options(double* out) const {
  out[0] = model_.options.dhat;
  out[1] = model_.options.newton_tolerance;
  out[2] = model_.options.max_newton_iterations;
  out[3] = model_.options.friction;
  out[4] = model_.options.friction_velocity;
}

int BarrierWorld::addAffineBody(const std::string& name, const double* points, int n, const int* faces, int m,
                                double density, double stiffness) {
  return model_.addBody(makeAffineBody(name, points, n, faces, m, density, stiffness));
}

int BarrierWorld::addStaticBody(const std::string& name, const double* points, int n, const int* faces, int m,
                                double density, double stiffness) {
  AffineBody body = makeSurfaceBody(name, points, n, faces, m);
  if (body.closed && static_cast<int>(body.faces.size()) == m &&
      meshVolumeIntegrals(body.rest.data(), n, body.faces.data(), m).volume > 0.0) {
    body = makeAffineBody(name, points, n, faces, m, density, stiffness);
  } else {
    body.density = density;
    body.stiffness = stiffness;
    body.mass_matrix = Mat12::Identity();
  }
  body.fixed = true;
  return model_.addBody(std::move(body));
}

void BarrierWorld::setBodyParameters(int body, double density, double stiffness) {
  RD_CHECK_ARG(body >= 0 && body < bodyCount(), "body index " << body << " out of range");
  RD_CHECK_ARG(std::isfinite(density) && density > 0.0, "density must be finite and > 0, got " << density);
  RD_CHECK_ARG(std::isfinite(stiffness) && stiffness > 0.0, "stiffness must be finite and > 0, got " << stiffness);
  AffineBody& b = model_.bodies[body];
  b.density = density;
  b.mass = density * b.integrals.volume;
  b.mass_matrix = affineMassMatrix(b.integrals, density);
  b.stiffness = stiffness;
}

void BarrierWorld::popBody() {
  if (!model_.bodies.empty()) model_.bodies.pop_back();
}

void BarrierWorld::setFixed(int body, bool fixed) {
  checkBody(model_, body);
  model_.bodies[body].fixed = fixed;
}

void BarrierWorld::addPlane(const double* normal, double offset) {
  model_.addPlane(Vec3(normal[0], normal[1], normal[2]), offset);
}

void BarrierWorld::popPlane() {
  if (!model_.planes.empty()) model_.planes.pop_back();
}

void BarrierWorld::plane(int i, double* out) const {
  if (i < 0 || i >= static_cast<int>(model_.planes.size()))
    RD_THROW(std::out_of_range, "plane index " << i << " outside [0, " << model_.planes.size() << ")");
  for (int k = 0; k < 3; ++k) out[k] = model_.planes[i].normal[k];
  out[3] = model_.planes[i].offset;
}

void BarrierWorld::massProperties(int body, double* out) const {
  checkBody(model_, body);
  const AffineBody& b = model_.bodies[body];
  out[0] = b.mass;
  out[1] = b.integrals.volume;
  for (int k = 0; k < 3; ++k) out[2 + k] = b.density * b.integrals.first[k];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) out[5 + 3 * r + c] = b.density * b.integrals.second(r, c);
}

void BarrierWorld::massMatrix(int body, double* out) const {
  checkBody(model_, body);
  Eigen::Map<Eigen::Matrix<double, 12, 12, Eigen::RowMajor>> M(out);
  M = model_.bodies[body].mass_matrix;
}

int BarrierWorld::vertexCount(int body) const {
  checkBody(model_, body);
  return static_cast<int>(model_.bodies[body].rest.size());
}

int BarrierWorld::faceCount(int body) const {
  checkBody(model_, body);
  return static_cast<int>(model_.bodies[body].faces.size());
}

void BarrierWorld::restMesh(int body, double* points, int* faces) const {
  checkBody(model_, body);
  const AffineBody& b = model_.bodies[body];
  for (size_t i = 0; i < b.rest.size(); ++i)
    for (int k = 0; k < 3; ++k) points[3 * i + k] = b.rest[i][k];
  for (size_t f = 0; f < b.faces.size(); ++f)
    for (int k = 0; k < 3; ++k) faces[3 * f + k] = b.faces[f][k];
}

void BarrierWorld::checkState(const double* q) {
  for (int i = 0; i < nq(); ++i) RD_CHECK_ARG(std::isfinite(q[i]), "q[" << i << "] is not finite");
  if (!art_data_) return checkIntersectionFree(model_, data_, q);
  checkConfiguration(art_.model, q);
  buildArticulatedContactModel(model_, art_, art_data_->contact);
  VecX y(art_data_->contact.nq());
  rigidiff::contactCoordinates(art_, art_data_->data, static_cast<int>(model_.bodies.size()), q, y.data());
  checkIntersectionFree(art_data_->contact, data_, y.data());
}

void BarrierWorld::step(const double* q, const double* v, const double* tau, double* q_out, double* v_out) {
  if (art_data_)
    articulatedBarrierStep(model_, art_, *art_data_, data_, q, v, tau, q_out, v_out);
  else
    barrierStep(model_, data_, q, v, tau, q_out, v_out);
}

void BarrierWorld::refuseSkeletons(const char* what) const {
  RD_CHECK_ARG(!art_data_, what << " of barrier worlds with skeletons are not implemented yet");
}

void BarrierWorld::setSkeletons(const Model& model) {
  ArticulatedBarrier art;
  art.model = model;
  art.model.implicit_gyroscopic = implicit_gyroscopic_;
  art.joint_limits = joint_limits_;
  art.checkSupported();
  art_ = std::move(art);
  art_data_ = std::make_unique<ArticulatedBarrierData>(art_.model);
}

void BarrierWorld::updateSkeletons(const Model& model) {
  RD_CHECK_ARG(art_data_ && model.njoints == art_.model.njoints && model.nq == art_.model.nq && model.nv == art_.model.nv,
               "updateSkeletons: the model has other joints than the world's skeletons");
  art_.model = model;
  art_.model.implicit_gyroscopic = implicit_gyroscopic_;
  art_data_ = std::make_unique<ArticulatedBarrierData>(art_.model);
}

int BarrierWorld::addSkeletonSurface(const std::string& name, int joint, int parent_joint, int group,
                                     bool self_collision, const double* points, int n, const int* faces, int m) {
  RD_CHECK_ARG(art_data_, "set the skeletons' model before their surfaces");
  RD_CHECK_ARG(joint >= 0 && joint < art_.model.njoints,
               "joint index " << joint << " outside [0, " << art_.model.njoints << ")");
  RD_CHECK_ARG(parent_joint >= 0 && parent_joint < art_.model.njoints,
               "parent joint index " << parent_joint << " outside [0, " << art_.model.njoints << ")");
  ArticulatedSurface s;
  s.joint = joint;
  s.parent_joint = parent_joint;
  s.group = group;
  s.self_collision = self_collision;
  s.mesh = makeSurfaceBody(name, points, n, faces, m);  // massless: its inertia is the link's
  art_.surfaces.push_back(std::move(s));
  return static_cast<int>(art_.surfaces.size()) - 1;
}

void BarrierWorld::contactCoordinates(const double* q, double* y, double* jac) {
  RD_CHECK_ARG(art_data_, "the world has no skeletons");
  for (int i = 0; i < nq(); ++i) RD_CHECK_ARG(std::isfinite(q[i]), "q[" << i << "] is not finite");
  const int nb = static_cast<int>(model_.bodies.size()), nv = art_.model.nv;
  rigidiff::contactCoordinates(art_, art_data_->data, nb, q, y);
  if (nv > 0) computeJointJacobians(art_.model, art_data_->data, q);
  MatX J;
  for (int k = 0; k < skeletonSurfaceCount(); ++k) {
    surfaceJacobian(art_, art_data_->data, k, J);
    Eigen::Map<Eigen::Matrix<double, 12, Eigen::Dynamic, Eigen::RowMajor>>(jac + 12L * nv * k, 12, nv) = J;
  }
}

int BarrierWorld::parameterCount() const { return barrierParameterCount(model_) + skeletonParameterCount(art_.model); }

void BarrierWorld::stepJacobians(const double* q, const double* v, const double* tau, double* q_out, double* v_out,
                                 double* jac, double* jac_p) {
  const long nn = static_cast<long>(nv()) * nv();
  const long np = static_cast<long>(nv()) * parameterCount();
  if (art_data_)
    articulatedStepJacobians(model_, art_, *art_data_, data_, q, v, tau, q_out, v_out, jac, jac + nn, jac + 2 * nn,
                             jac + 3 * nn, jac + 4 * nn, jac + 5 * nn, jac_p, jac_p + np);
  else
    barrierStepJacobians(model_, data_, q, v, tau, q_out, v_out, jac, jac + nn, jac + 2 * nn, jac + 3 * nn,
                         jac + 4 * nn, jac + 5 * nn, jac_p, jac_p + np);
}

void BarrierWorld::vjpAt(const double* q, const double* v, const double* tau, const double* q_next, double kappa_start,
                         double kappa_end, const double* gq_next, const double* gv_next, double* gq, double* gv,
                         double* gtau, double* gparams) {
  if (art_data_)
    articulatedVjpAt(model_, art_, *art_data_, data_, q, v, tau, q_next, kappa_start, kappa_end, gq_next, gv_next, gq,
                     gv, gtau, gparams);
  else
    barrierVjpAt(model_, data_, q, v, tau, q_next, kappa_start, kappa_end, gq_next, gv_next, gq, gv, gtau, gparams);
}

void BarrierWorld::stepVjp(const double* q, const double* v, const double* tau, const double* gq_next,
                           const double* gv_next, double* q_out, double* v_out, double* gq, double* gv, double* gtau,
                           double* gparams) {
  step(q, v, tau, q_out, v_out);
  vjpAt(q, v, tau, q_out, data_.stats.kappa_start, data_.stats.kappa, gq_next, gv_next, gq, gv, gtau, gparams);
}

void BarrierWorld::rolloutBackward(int T, const double* Q, const double* V, const double* taus, const double* kappas,
                                   const double* GQ, const double* GV, double* gq0, double* gv0, double* gtaus,
                                   double* gparams) {
  reverseRollout(nq(), nv(), parameterCount(), T, Q, V, taus, kappas, GQ, GV, gq0, gv0, gtaus, gparams,
                 [&](const double* q, const double* v, const double* tau, const double* q_next, double ks, double ke,
                     const double* gq_next, const double* gv_next, double* gq, double* gv, double* gtau, double* gp) {
                   vjpAt(q, v, tau, q_next, ks, ke, gq_next, gv_next, gq, gv, gtau, gp);
                 });
}

void BarrierWorld::stats(double* out) const {
  const BarrierStepStats& s = data_.stats;
  out[0] = s.newton_iterations;
  out[1] = s.kappa;
  out[2] = s.min_distance;
  out[3] = s.residual;
  out[4] = s.active_pairs;
  out[5] = s.candidates;
  out[6] = s.symbolic_factorisations;
  out[7] = s.line_search_evaluations;
  out[8] = s.time_candidates;
  out[9] = s.time_barrier;
  out[10] = s.time_assembly;
  out[11] = s.time_factorisation;
  out[12] = s.time_ccd;
  out[13] = s.time_total;
  out[14] = s.kappa_start;
}

double BarrierWorld::incrementalPotential(const double* q, const double* q_n, const double* v_n, const double* tau,
                                          double kappa, double* grad) {
  if (art_data_)
    return articulatedIncrementalPotential(model_, art_, *art_data_, data_, q, q_n, v_n, tau, kappa, grad);
  data_.friction.clear();
  return rigidiff::incrementalPotential(model_, data_, q, q_n, v_n, tau, kappa, grad);
}

double BarrierWorld::frictionPotential(const double* q, const double* q_n, double kappa, double* grad) {
  if (art_data_) return articulatedFrictionPotential(model_, art_, *art_data_, data_, q, q_n, kappa, grad);
  barrierPositions(model_, q_n, data_.x);
  collectBarrierPairs(model_, data_);
  buildFrictionPairs(model_, data_, kappa);
  for (int i = 0; i < model_.nq(); ++i) grad[i] = 0.0;
  return rigidiff::frictionPotential(model_, data_, q, q_n, grad, nullptr);
}

double BarrierWorld::barrierPotential(const double* q, double* grad, double* hessian) {
  refuseSkeletons("barrier potentials");
  const int n = model_.nq();
  barrierPositions(model_, q, data_.x);
  collectBarrierPairs(model_, data_);
  for (int i = 0; i < n; ++i) grad[i] = 0.0;
  data_.hessian.reset(static_cast<int>(model_.bodies.size()));
  const double value = rigidiff::barrierPotential(model_, data_, 1.0, grad, &data_.hessian);
  Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(hessian, n, n) =
      data_.hessian.dense();
  return value;
}

double BarrierWorld::collisionFreeStep(const double* q, const double* dq) {
  refuseSkeletons("collision-free steps");
  return rigidiff::collisionFreeStep(model_, data_, q, dq);
}

void BarrierWorld::contactTimings(const double* q, const double* dq, int repeat, double* out) {
  refuseSkeletons("contact timings");
  RD_CHECK_ARG(repeat >= 1, "repeat must be >= 1, got " << repeat);
  using Clock = std::chrono::steady_clock;
  auto median = [repeat](auto&& f) {
    std::vector<double> t(repeat);
    for (double& s : t) {
      const Clock::time_point start = Clock::now();
      f();
      s = std::chrono::duration<double>(Clock::now() - start).count();
    }
    std::nth_element(t.begin(), t.begin() + repeat / 2, t.end());
    return t[repeat / 2];
  };
  const int n = model_.nq(), nb = static_cast<int>(model_.bodies.size());
  VecX grad(n);
  out[0] = median([&] {
    barrierPositions(model_, q, data_.x);
    collectBarrierPairs(model_, data_);
  });
  const double candidates = static_cast<double>(data_.candidates.size());
  const double pairs = static_cast<double>(data_.pairs.size());
  double value = 0.0;
  out[1] = median([&] {
    grad.setZero();
    value = rigidiff::barrierPotential(model_, data_, 1.0, grad.data(), nullptr);
  });
  // the pattern is written once before the clock, as a Newton loop keeps it while the same bodies touch
  data_.hessian.reset(nb);
  rigidiff::barrierPotential(model_, data_, 1.0, nullptr, &data_.hessian);
  data_.hessian.writeLower(data_.matrix);
  out[2] = median([&] {
    data_.hessian.reset(nb);
    rigidiff::barrierPotential(model_, data_, 1.0, nullptr, &data_.hessian);
    data_.hessian.writeLower(data_.matrix);
  });
  double alpha = 1.0;
  out[3] = median([&] { alpha = rigidiff::collisionFreeStep(model_, data_, q, dq); });
  out[4] = candidates;
  out[5] = pairs;
  out[6] = alpha;
  out[7] = value;
}

void parallelChunkVisits(int n, int bad, int* visits) {
  RD_CHECK_ARG(n >= 0, "n must be >= 0, got " << n);
  parallelChunks(static_cast<size_t>(n), [&](size_t i) {
    if (static_cast<int>(i) == bad) RD_THROW(std::invalid_argument, "element " << i << " failed");
    ++visits[i];
  });
}

void barrierValues(const double* s, int n, double shat, double* out) {
  RD_CHECK_ARG(std::isfinite(shat) && shat > 0.0, "dhat must be finite and > 0");
  for (int i = 0; i < n; ++i) {
    out[3 * i] = barrier(s[i], shat);
    out[3 * i + 1] = barrierFirstDerivative(s[i], shat);
    out[3 * i + 2] = barrierSecondDerivative(s[i], shat);
  }
}

double orthogonalityTerms(const double* q, double weight, double* grad, double* hessian) {
  Eigen::Map<Vec12> g(grad);
  Eigen::Map<Eigen::Matrix<double, 12, 12, Eigen::RowMajor>> H(hessian);
  g = orthogonalityGradient(q, weight);
  H = orthogonalityHessian(q, weight);
  return orthogonalityEnergy(q, weight);
}

void barrierStiffness(double bbox_diagonal, double dhat, double average_mass, double grad_dot, double grad_sq,
                      double* out) {
  const BarrierStiffness k = initialBarrierStiffness(bbox_diagonal, dhat * dhat, average_mass, grad_dot, grad_sq);
  out[0] = k.kappa;
  out[1] = k.kappa_min;
  out[2] = k.kappa_max;
}

}  // namespace bind
}  // namespace rigidiff
