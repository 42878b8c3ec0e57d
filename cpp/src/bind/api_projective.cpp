// The Projective Dynamics world behind rigidiff.ProjectiveWorld (bind/api_projective.hpp).
#include "rigidiff/bind/api_projective.hpp"
#include "rigidiff/deformable/pd_hull.hpp"
#include "rigidiff/deformable/pd_projection.hpp"
#include "rigidiff/world/floating_base_chart.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace rigidiff {
namespace bind {
namespace {

using deformable::Points;

Eigen::Map<const Points> points(const double* p, int n) { return Eigen::Map<const Points>(p, n, 3); }

}  // namespace

void ProjectiveWorld::setTimeStep(double dt) {
  if (!(dt > 0.0) || !std::isfinite(dt)) throw std::invalid_argument("dt must be finite and > 0");
  model_.dt = dt;
}

void ProjectiveWorld::setGravity(const double* g) {
  const Vec3 value(g[0], g[1], g[2]);
  if (!value.allFinite()) throw std::invalid_argument("gravity must be finite");
  model_.gravity = value;
}

void ProjectiveWorld::gravity(double* out) const {
  for (int i = 0; i < 3; ++i) out[i] = model_.gravity[i];
}

void ProjectiveWorld::setOptions(double tolerance, int max_iterations, int history, double contact_stiffness,
                                 int method) {
  if (!(tolerance > 0.0)) throw std::invalid_argument("tolerance must be > 0");
  if (max_iterations < 1) throw std::invalid_argument("max_iterations must be >= 1");
  if (history < 1) throw std::invalid_argument("history must be >= 1");
  if (method < 0 || method > 2) throw std::invalid_argument("method must be 0, 1 or 2");
  if (!(contact_stiffness > 0.0) || !std::isfinite(contact_stiffness))
    throw std::invalid_argument("contact_stiffness must be finite and > 0");
  if (contact_stiffness != model_.contact_stiffness) data_.factor_valid = false;
  model_.options.tolerance = tolerance;
  model_.options.max_iterations = max_iterations;
  model_.options.history = history;
  model_.contact_stiffness = contact_stiffness;
  model_.options.method = static_cast<deformable::PdMethod>(method);
}

void ProjectiveWorld::setFriction(double friction, double friction_velocity) {
  if (!(friction >= 0.0) || !std::isfinite(friction)) throw std::invalid_argument("friction must be finite and >= 0");
  if (!(friction_velocity > 0.0) || !std::isfinite(friction_velocity))
    throw std::invalid_argument("friction_velocity must be finite and > 0");
  model_.friction = friction;
  model_.friction_velocity = friction_velocity;
}

void ProjectiveWorld::setContactModel(int contact_model) {
  if (contact_model < 0 || contact_model > 1) throw std::invalid_argument("contact model must be 0 or 1");
  const auto value = static_cast<deformable::PdContactModel>(contact_model);
  if (value != model_.contact_model) data_.factor_valid = false;  // the planes' penalty leaves or joins the matrix
  model_.contact_model = value;
}

void ProjectiveWorld::options(double* out) const {
  out[0] = model_.options.tolerance;
  out[1] = model_.options.max_iterations;
  out[2] = model_.options.history;
  out[3] = model_.contact_stiffness;
  out[4] = static_cast<int>(model_.options.method);
}

int ProjectiveWorld::addBody(const std::string& name, const double* p, int n, const int* elements, int m, int nodes,
                             double youngs_modulus, double poisson_ratio, double density, int energies) {
  const Eigen::MatrixXi E =
      Eigen::Map<const Eigen::Matrix<int, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(elements, m, nodes);
  const int b = model_.addBody(name, points(p, n), E, youngs_modulus, poisson_ratio, density, energies);
  data_.factor_valid = false;
  return b;
}

void ProjectiveWorld::setMaterial(int body, double youngs_modulus, double poisson_ratio) {
  if (body < 0 || body >= bodyCount()) throw std::out_of_range("no deformable body " + std::to_string(body));
  model_.setMaterial(body, youngs_modulus, poisson_ratio);
  data_.factor_valid = false;
}

void ProjectiveWorld::setDensity(int body, double density) {
  if (body < 0 || body >= bodyCount()) throw std::out_of_range("no deformable body " + std::to_string(body));
  model_.setDensity(body, density);
  data_.factor_valid = false;
}

void ProjectiveWorld::setFixed(int body, const int* vertices, int count) {
  if (body < 0 || body >= bodyCount()) throw std::out_of_range("no deformable body " + std::to_string(body));
  const deformable::PdBody& b = model_.bodies[body];
  for (int i = 0; i < count; ++i)
    if (vertices[i] < 0 || vertices[i] >= b.vertex_count)
      throw std::invalid_argument("fixed vertex " + std::to_string(vertices[i]) + " is not a vertex of " + b.name +
                                  " (" + std::to_string(b.vertex_count) + " vertices)");
  for (int i = 0; i < b.vertex_count; ++i) model_.fixed[b.first_vertex + i] = 0;
  for (int i = 0; i < count; ++i) model_.fixed[b.first_vertex + vertices[i]] = 1;
  model_.updateFreeIndex();
  data_.factor_valid = false;
  if (model_.free_count == 0) throw std::invalid_argument("every vertex is fixed: nothing to simulate");
}

int ProjectiveWorld::addMuscle(const std::string& name, int body, const int* elements, int count,
                               const double* fibers, int fiber_rows, double stiffness) {
  const int k = model_.addMuscle(name, body, std::vector<int>(elements, elements + count), points(fibers, fiber_rows),
                                 stiffness);
  data_.factor_valid = false;
  return k;
}

void ProjectiveWorld::setMuscleStiffness(int muscle, double stiffness) {
  if (muscle < 0 || muscle >= muscleCount()) throw std::out_of_range("no muscle " + std::to_string(muscle));
  model_.setMuscleStiffness(muscle, stiffness);
  data_.factor_valid = false;
}

void ProjectiveWorld::setActivation(const double* a) {
  const Eigen::Map<const VecX> value(a, muscleCount());
  if (!value.allFinite()) throw std::invalid_argument("activation must be finite");
  model_.activation = value;
}

void ProjectiveWorld::muscleGradients(double* out) const {
  const int m = muscleCount();
  for (int k = 0; k < m; ++k) {
    out[k] = data_.grad_activation.size() == m ? data_.grad_activation[k] : 0.0;
    out[m + k] = data_.grad_muscle_stiffness.size() == m ? data_.grad_muscle_stiffness[k] : 0.0;
  }
}

void ProjectiveWorld::addPlane(const double* normal, double offset) {
  const Vec3 n(normal[0], normal[1], normal[2]);
  if (!(n.norm() > 0.0) || !n.allFinite() || !std::isfinite(offset))
    throw std::invalid_argument("a plane needs a finite non-zero normal and a finite offset");
  model_.planes.push_back({n.normalized(), offset / n.norm()});
  data_.factor_valid = false;
}

void ProjectiveWorld::addSphere(const double* centre, double radius) {
  const Vec3 c(centre[0], centre[1], centre[2]);
  if (!c.allFinite() || !(radius > 0.0) || !std::isfinite(radius))
    throw std::invalid_argument("a sphere needs a finite centre and a finite radius > 0");
  deformable::PdSphere sphere;
  sphere.centre = c;
  sphere.radius = radius;
  model_.spheres.push_back(sphere);
  data_.factor_valid = false;
}

namespace {

// a rotation matrix from row-major entries, checked
Mat3 rotationFrom(const double* r) {
  Mat3 R;
  for (int i = 0; i < 9; ++i) R(i / 3, i % 3) = r[i];
  if (!R.allFinite() || (R.transpose() * R - Mat3::Identity()).norm() > 1e-9 || R.determinant() < 0.0)
    throw std::invalid_argument("an obstacle's rotation must be a finite rotation matrix");
  return R;
}

}  // namespace

int ProjectiveWorld::addBox(const double* half, const double* rotation, const double* position) {
  deformable::PdBox box;
  box.half = Vec3(half[0], half[1], half[2]);
  if (!box.half.allFinite() || !(box.half.minCoeff() > 0.0))
    throw std::invalid_argument("a box needs finite half extents > 0");
  box.rotation = rotationFrom(rotation);
  box.position = Vec3(position[0], position[1], position[2]);
  if (!box.position.allFinite()) throw std::invalid_argument("a box's position must be finite");
  model_.boxes.push_back(box);
  data_.factor_valid = false;
  return model_.obstacleCount() - 1;
}

void ProjectiveWorld::setObstaclePose(int o, const double* rotation, const double* position) {
  const int planes = static_cast<int>(model_.planes.size()), spheres = static_cast<int>(model_.spheres.size());
  if (o < planes || o >= model_.obstacleCount()) throw std::out_of_range("obstacle " + std::to_string(o) + " cannot move");
  const Vec3 p(position[0], position[1], position[2]);
  if (!p.allFinite()) throw std::invalid_argument("an obstacle's position must be finite");
  if (o < planes + spheres) {
    model_.spheres[o - planes].centre = p;
    return;
  }
  deformable::PdBox& box = model_.boxes[o - planes - spheres];
  box.rotation = rotationFrom(rotation);
  box.position = p;
}

void ProjectiveWorld::setObstacleVelocity(int o, const double* linear, const double* angular) {
  const int planes = static_cast<int>(model_.planes.size()), spheres = static_cast<int>(model_.spheres.size());
  if (o < planes || o >= model_.obstacleCount()) throw std::out_of_range("obstacle " + std::to_string(o) + " cannot move");
  const Vec3 v(linear[0], linear[1], linear[2]), w(angular[0], angular[1], angular[2]);
  if (!v.allFinite() || !w.allFinite()) throw std::invalid_argument("an obstacle's velocity must be finite");
  if (o < planes + spheres) {
    model_.spheres[o - planes].linear = v;
    model_.spheres[o - planes].angular = w;
    return;
  }
  model_.boxes[o - planes - spheres].linear = v;
  model_.boxes[o - planes - spheres].angular = w;
}

void ProjectiveWorld::contactAndDensityGradients(double* out) const {
  const int b = bodyCount();
  for (int k = 0; k < b; ++k) out[k] = data_.grad_density.size() == b ? data_.grad_density[k] : 0.0;
  out[b] = data_.grad_contact_stiffness;
  out[b + 1] = data_.grad_friction;
}

void ProjectiveWorld::obstacleGradients(double* out) const {
  const int m = 6 * model_.obstacleCount();
  for (int k = 0; k < m; ++k) out[k] = data_.grad_obstacles.size() == m ? data_.grad_obstacles[k] : 0.0;
}

void ProjectiveWorld::bodyRange(int body, int* out) const {
  const deformable::PdBody& b = model_.bodies.at(body);
  out[0] = b.first_vertex;
  out[1] = b.vertex_count;
}

void ProjectiveWorld::masses(double* out) const { Eigen::Map<VecX>(out, model_.n) = model_.mass; }

void ProjectiveWorld::surfaceMask(int* out) const {
  for (int i = 0; i < model_.n; ++i) out[i] = model_.surface[i];
}

void ProjectiveWorld::fixedMask(int* out) const {
  for (int i = 0; i < model_.n; ++i) out[i] = model_.fixed[i];
}

void ProjectiveWorld::setSkeletons(const Model& model) {
  deformable::checkSkeletonJoints(model);
  sk_ = std::make_unique<deformable::PdSkeletons>();
  sk_->model = model;
  sk_->model.implicit_gyroscopic = false;  // the incremental potential takes b(s0, u0) whole, as the barrier world's
  sk_->rotations = hasRotationGroupJoints(model);
  sk_->joint_limits = joint_limits_;
  sk_->limit_stiffness = limit_stiffness_;
  sk_data_ = std::make_unique<deformable::PdSkeletonData>(sk_->model);
}

void ProjectiveWorld::setJointLimits(bool on, double stiffness) {
  if (!(std::isfinite(stiffness) && stiffness > 0.0))
    throw std::invalid_argument("joint_limit_stiffness must be finite and > 0, got " + std::to_string(stiffness));
  joint_limits_ = on;
  limit_stiffness_ = stiffness;
  if (sk_) sk_->joint_limits = on, sk_->limit_stiffness = stiffness;
}

void ProjectiveWorld::jointLimits(double* out) const {
  out[0] = joint_limits_ ? 1.0 : 0.0;
  out[1] = limit_stiffness_;
}

void ProjectiveWorld::skeletonParameterGradients(double* out) const {
  const int count = skeletonParameterCount();
  Eigen::Map<VecX> g(out, count);
  g.setZero();
  if (count == 0 || sk_data_->grad_inertia.size() != count - 3 * sk_->nv() - 1) return;
  const int ni = static_cast<int>(sk_data_->grad_inertia.size()), nv = sk_->nv();
  g.head(ni) = sk_data_->grad_inertia;
  g.segment(ni, nv) = sk_data_->grad_damping;
  g.segment(ni + nv, nv) = sk_data_->grad_stiffness;
  g.segment(ni + 2 * nv, nv) = sk_data_->grad_armature;
  g[count - 1] = sk_data_->grad_limit_stiffness;
}

void ProjectiveWorld::clearSkeletons() {
  sk_data_.reset();
  sk_.reset();
}

namespace {

deformable::PdLinkShape placedShape(const deformable::PdSkeletons* sk, int joint, const double* rotation,
                                    const double* position) {
  if (!sk) throw std::invalid_argument("set the skeletons' model before their shapes");
  if (joint < 0 || joint >= sk->model.njoints)
    throw std::out_of_range("joint index " + std::to_string(joint) + " outside [0, " +
                            std::to_string(sk->model.njoints) + ")");
  deformable::PdLinkShape shape;
  shape.joint = joint;
  shape.placement = SE3(Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(rotation),
                        Eigen::Map<const Vec3>(position));
  return shape;
}

}  // namespace

int ProjectiveWorld::addLinkShape(int joint, int kind, const double* rotation, const double* position,
                                  const double* size) {
  deformable::PdLinkShape shape = placedShape(sk_.get(), joint, rotation, position);
  if (kind < 0 || kind > 2) throw std::invalid_argument("shape kind must be 0 (sphere), 1 (box) or 2 (capsule)");
  shape.kind = static_cast<deformable::PdShapeKind>(kind);
  shape.size = Eigen::Map<const Vec3>(size);
  const int used = kind == 0 ? 1 : kind == 1 ? 3 : 2;
  if (!shape.size.head(used).allFinite() || !(shape.size.head(used).minCoeff() > 0.0))
    throw std::invalid_argument("a link shape's size must be finite and > 0");
  sk_->shapes.push_back(shape);
  return static_cast<int>(sk_->shapes.size()) - 1;
}

int ProjectiveWorld::addLinkHull(int joint, const double* rotation, const double* position, const double* vertices,
                                 int nvert, const int* triangles, int ntri) {
  deformable::PdLinkShape shape = placedShape(sk_.get(), joint, rotation, position);
  if (nvert < 0 || ntri < 0) throw std::invalid_argument("a hull's vertex and triangle counts must be >= 0");
  std::vector<Vec3> v(nvert);
  for (int i = 0; i < nvert; ++i) v[i] = Vec3(vertices[3 * i], vertices[3 * i + 1], vertices[3 * i + 2]);
  std::vector<std::array<int, 3>> t(ntri);
  for (int i = 0; i < ntri; ++i) t[i] = {triangles[3 * i], triangles[3 * i + 1], triangles[3 * i + 2]};
  shape.kind = deformable::PdShapeKind::Hull;
  shape.hull = std::make_shared<const deformable::PdHull>(deformable::makePdHull(v, t));
  sk_->shapes.push_back(shape);
  return static_cast<int>(sk_->shapes.size()) - 1;
}

void ProjectiveWorld::setLinkGroup(int shape, int group, int parent_joint, bool self_collision) {
  const int n = sk_ ? static_cast<int>(sk_->shapes.size()) : 0;
  if (shape < 0 || shape >= n)
    throw std::out_of_range("link shape index " + std::to_string(shape) + " outside [0, " + std::to_string(n) + ")");
  deformable::PdLinkShape& s = sk_->shapes[shape];
  s.group = group;
  s.parent_joint = parent_joint;
  s.self_collision = self_collision;
}

void ProjectiveWorld::step(const double* q, const double* v, const double* f, double* q_out, double* v_out) {
  const int n = model_.n;
  Points qn, vn;
  if (!sk_) {
    deformable::pdStep(model_, data_, points(q, n), points(v, n), points(f, n), qn, vn);
  } else {
    const int nv = sk_->nv(), nq = sk_->model.nq;
    sk_->model.gravity = model_.gravity;
    VecX sn, un;
    deformable::pdSkeletonStep(model_, data_, *sk_, *sk_data_, points(q, n), points(v, n), points(f, n),
                               Eigen::Map<const VecX>(q + 3 * n, nq), Eigen::Map<const VecX>(v + 3 * n, nv),
                               Eigen::Map<const VecX>(f + 3 * n, nv), qn, vn, sn, un);
    Eigen::Map<VecX>(q_out + 3 * n, nq) = sn;
    Eigen::Map<VecX>(v_out + 3 * n, nv) = un;
  }
  Eigen::Map<Points>(q_out, n, 3) = qn;
  Eigen::Map<Points>(v_out, n, 3) = vn;
}

void ProjectiveWorld::stepVjp(const double* q, const double* v, const double* f, const double* gq_next,
                              const double* gv_next, double* q_out, double* v_out, double* gq, double* gv, double* gf,
                              double* gE, double* gnu) {
  const int n = model_.n;
  step(q, v, f, q_out, v_out);
  Points a, b, c;
  VecX e, nu;
  if (!sk_) {
    deformable::pdStepVjp(model_, data_, points(gq_next, n), points(gv_next, n), a, b, c, e, nu);
  } else {
    const int nv = sk_->nv();
    VecX gs, gu;
    deformable::pdSkeletonStepVjp(model_, data_, *sk_, *sk_data_, points(gq_next, n), points(gv_next, n),
                                  Eigen::Map<const VecX>(gq_next + 3 * n, nv),
                                  Eigen::Map<const VecX>(gv_next + 3 * n, nv), a, b, c, gs, gu, e, nu);
    Eigen::Map<VecX>(gq + 3 * n, nv) = gs;
    Eigen::Map<VecX>(gv + 3 * n, nv) = gu;
    Eigen::Map<VecX>(gf + 3 * n, nv) = sk_data_->grad_tau;
  }
  Eigen::Map<Points>(gq, n, 3) = a;
  Eigen::Map<Points>(gv, n, 3) = b;
  Eigen::Map<Points>(gf, n, 3) = c;
  Eigen::Map<VecX>(gE, e.size()) = e;
  Eigen::Map<VecX>(gnu, nu.size()) = nu;
}

void ProjectiveWorld::setStartGuess(const double* x) {
  const Points guess = points(x, model_.n);
  if (!guess.allFinite()) throw std::invalid_argument("a start guess must be finite");
  data_.start_guess = guess;
  if (sk_) {
    sk_data_->start_guess = Eigen::Map<const VecX>(x + 3 * model_.n, sk_->model.nq);
    if (!sk_data_->start_guess.allFinite()) throw std::invalid_argument("a start guess must be finite");
  }
}

void ProjectiveWorld::stats(double* out) const {
  out[0] = data_.iterations;
  out[1] = data_.residual;
  out[2] = data_.contacts;
  out[3] = data_.force_scale;
  out[4] = data_.converged;
  out[5] = data_.active_set_iterations;
  out[6] = data_.settled;
  out[7] = data_.link_energy;
}

double ProjectiveWorld::energy(const double* x, double* grad) const {
  Points g;
  const double e = deformable::pdEnergy(model_, points(x, model_.n), &g);
  Eigen::Map<Points>(grad, model_.n, 3) = g;
  return e;
}

int ProjectiveWorld::hessianProduct(const double* x, const double* z, double* out, bool after_energy) const {
  deformable::PdHessian hessian;
  deformable::PdSampleCache cache;
  const Points X = points(x, model_.n);
  if (after_energy) {
    Points g;
    deformable::pdEnergy(model_, X, &g, -1, &cache);
  }
  const int reused = deformable::pdHessianBuild(model_, X, hessian, nullptr, after_energy ? &cache : nullptr);
  Points o;
  deformable::pdHessianProduct(model_, hessian, points(z, model_.n), o);
  Eigen::Map<Points>(out, model_.n, 3) = o;
  return reused;
}

void ProjectiveWorld::setThreads(int threads) {
  if (threads < 1) throw std::invalid_argument("threads must be >= 1, got " + std::to_string(threads));
  model_.options.threads = threads;
}

void projectiveSvd3(const double* F, double* U, double* sigma, double* V) {
  using RowMat3 = Eigen::Matrix<double, 3, 3, Eigen::RowMajor>;
  const deformable::Svd3 svd = deformable::svd3(Eigen::Map<const RowMat3>(F));
  Eigen::Map<RowMat3> u(U), v(V);
  u = svd.U;
  v = svd.V;
  Eigen::Map<Vec3> s(sigma);
  s = svd.sigma;
}

void projectiveVolumeProjection(const double* sigma, double* s, double* jacobian) {
  Mat3 J;
  Eigen::Map<Vec3> out(s);
  out = deformable::volumeProjection(Eigen::Map<const Vec3>(sigma), &J);
  Eigen::Map<Eigen::Matrix<double, 3, 3, Eigen::RowMajor>> dout(jacobian);
  dout = J;
}

void projectiveHullDistances(const double* vertices, int nvert, const int* triangles, int ntri, const double* points,
                             int npoints, double reach, double* distances, double* normals, double* curvatures) {
  std::vector<Vec3> v(nvert);
  for (int i = 0; i < nvert; ++i) v[i] = Eigen::Map<const Vec3>(vertices + 3 * i);
  std::vector<std::array<int, 3>> t(ntri);
  for (int i = 0; i < ntri; ++i) t[i] = {triangles[3 * i], triangles[3 * i + 1], triangles[3 * i + 2]};
  const deformable::PdHull hull = deformable::makePdHull(v, t);
  for (int k = 0; k < npoints; ++k) {
    Vec3 n = Vec3::Zero();
    Mat3 C = Mat3::Zero();
    distances[k] = deformable::hullDistance(hull, Eigen::Map<const Vec3>(points + 3 * k), reach, &n, &C);
    Eigen::Map<Vec3>(normals + 3 * k) = n;
    Eigen::Map<Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(curvatures + 9 * k) = C;
  }
}

}  // namespace bind
}  // namespace rigidiff
