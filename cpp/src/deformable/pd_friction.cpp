// Lagged smoothed friction of Projective Dynamics vertices on the obstacles (pd_step.hpp), after IPC (Li et al.
// 2020): D = mu lambda f0(|u|) with u = P (x - r) the slip over the step in the tangent plane (P = I - n n^T)
// relative to the reference r = q + dt (v_o + w_o x (q - c_o)), where the obstacle's velocity carries its
// material point under the vertex (r = q for the static planes), and f0 the C1 mollifier of |u| below
// eps = eps_v dt: f0(y) = -y^3 / (3 eps^2) + y^2 / eps + eps / 3 there, y above. Its gradient is
// mu lambda f1(y) u / y (a Coulomb force opposing the slip, smoothly static below eps); the normal force
// lambda = k depth(q) (the complementarity's: the normal push at q, pd_complementarity.hpp), the normal n and the
// reference are frozen at the step's start.
#include "rigidiff/deformable/pd_complementarity.hpp"
#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {
namespace {

struct Slip {
  Vec3 u;             // the slip in the tangent plane
  Vec3 r;             // x - reference
  double y = 0.0;     // |u|
  double f1_y = 0.0;  // f1(y) / y (finite at y = 0)
  double c2 = 0.0;    // (f1'(y) - f1(y) / y) / y^2: the coefficient of u u^T in the Hessian
};

Slip slip(const PdModel& model, const PdData& data, const Points& x, std::size_t c) {
  const int i = data.friction.vertex[c];
  const Vec3& n = data.friction.normal[c];
  const double eps = model.friction_velocity * model.dt;
  Slip s;
  s.r = x.row(i).transpose() - data.friction.reference[c];
  s.u = s.r - n * n.dot(s.r);
  s.y = s.u.norm();
  if (s.y < eps) {
    s.f1_y = -s.y / (eps * eps) + 2.0 / eps;
    // c2 u u^T has the size |u| / eps^2: zero at u = 0 (where 1 / |u| would make it inf times 0)
    s.c2 = s.y > 0.0 ? -1.0 / (eps * eps * s.y) : 0.0;
  } else {
    s.f1_y = 1.0 / s.y;
    s.c2 = -1.0 / (s.y * s.y * s.y);
  }
  return s;
}

// hess D_c z for one contact (mu lambda already applied)
Vec3 slipHessianProduct(const Slip& s, const Vec3& n, const Vec3& z) {
  const Vec3 pz = z - n * n.dot(z);
  return s.f1_y * pz + s.c2 * s.u * s.u.dot(pz);
}

}  // namespace

void pdFrictionContacts(const PdModel& model, PdData& data, bool always) {
  data.friction = PdFriction();
  if (!(model.friction > 0.0) && !always) return;
  for (int i = 0; i < model.n; ++i) {
    if (!model.surface[i] || model.free_index[i] < 0) continue;
    const Vec3 x0 = data.q.row(i).transpose();
    for (int o = 0; o < model.obstacleCount(); ++o) {
      Vec3 n, position, linear, angular;
      double curvature;
      const double d = model.obstacleDistance(o, x0, &n, &curvature);
      const bool penalty = model.penalised(o);
      // the complementarity holds a touching vertex on the plane: its normal force is the push that keeps it
      // there at the start, n . grad g(q)
      const double lambda = penalty ? -model.contact_stiffness * d
                                    : d <= kContactGap ? n.dot(data.start_gradient.row(i).transpose()) : 0.0;
      if (penalty ? d >= 0.0 : !(lambda > 0.0)) continue;
      model.obstacleMotion(o, &position, &linear, &angular);
      data.friction.vertex.push_back(i);
      data.friction.obstacle.push_back(o);
      data.friction.normal.push_back(n);
      data.friction.lambda.push_back(lambda);
      data.friction.penalty.push_back(penalty);
      data.friction.reference.push_back(x0 + model.dt * (linear + angular.cross(x0 - position)));
      data.friction.curvature.push_back(curvature * (Mat3::Identity() - n * n.transpose()));
    }
  }
}

double pdFrictionEnergy(const PdModel& model, const PdData& data, const Points& x, Points* grad) {
  const double eps = model.friction_velocity * model.dt;
  double energy = 0.0;
  for (std::size_t c = 0; c < data.friction.vertex.size(); ++c) {
    const Slip s = slip(model, data, x, c);
    const double w = model.friction * data.friction.lambda[c];
    energy += w * (s.y < eps ? -s.y * s.y * s.y / (3.0 * eps * eps) + s.y * s.y / eps + eps / 3.0 : s.y);
    if (grad) grad->row(data.friction.vertex[c]) += w * s.f1_y * s.u.transpose();
  }
  return energy;
}

void pdFrictionGradientPerMu(const PdModel& model, const PdData& data, const Points& x, Points& out,
                             bool penalty_only) {
  out.setZero(x.rows(), 3);
  for (std::size_t c = 0; c < data.friction.vertex.size(); ++c) {
    if (penalty_only && !data.friction.penalty[c]) continue;
    const Slip s = slip(model, data, x, c);
    out.row(data.friction.vertex[c]) += data.friction.lambda[c] * s.f1_y * s.u.transpose();
  }
}

void pdFrictionHessianProduct(const PdModel& model, const PdData& data, const Points& x, const Points& z,
                              Points& out) {
  for (std::size_t c = 0; c < data.friction.vertex.size(); ++c) {
    const int i = data.friction.vertex[c];
    const Slip s = slip(model, data, x, c);
    const double w = model.friction * data.friction.lambda[c];
    out.row(i) += w * slipHessianProduct(s, data.friction.normal[c], z.row(i).transpose()).transpose();
  }
}

void pdFrictionHessianBlocks(const PdModel& model, const PdData& data, const Points& x,
                             std::vector<std::pair<int, Mat3>>& blocks) {
  for (std::size_t c = 0; c < data.friction.vertex.size(); ++c) {
    const Slip s = slip(model, data, x, c);
    const Vec3& n = data.friction.normal[c];
    const double w = model.friction * data.friction.lambda[c];
    // the matrix of slipHessianProduct: f1/y P + c2 u u^T (u lies in the plane, so u^T P = u^T)
    const Mat3 P = Mat3::Identity() - n * n.transpose();
    blocks.emplace_back(data.friction.vertex[c], w * (s.f1_y * P + s.c2 * s.u * s.u.transpose()));
  }
}

void pdFrictionCotangent(const PdModel& model, const PdData& data, const Points& Z, Points& gq, VecX& grad_obstacles,
                         VecX* per_lambda) {
  if (per_lambda) per_lambda->setZero(data.friction.vertex.size());
  const double mu = model.friction, k = model.contact_stiffness;
  const int first_box = static_cast<int>(model.planes.size() + model.spheres.size());
  for (std::size_t c = 0; c < data.friction.vertex.size(); ++c) {
    const int i = data.friction.vertex[c], o = data.friction.obstacle[c];
    const Vec3& n = data.friction.normal[c];
    const Mat3& C = data.friction.curvature[c];
    const double lambda = data.friction.lambda[c];
    const Slip s = slip(model, data, data.x, c);
    const Vec3 z = Z.row(i).transpose();
    // z . grad D_c = mu lambda z . psi(u), psi = f1/y u, u = P(n) (x - r): its derivatives with respect to the
    // lagged lambda, normal n and reference r (d psi / du = f1/y I + c2 u u^T)
    const Vec3 hz = s.f1_y * z + s.c2 * s.u * s.u.dot(z);
    const double g_lambda = mu * z.dot(s.f1_y * s.u);
    Vec3 g_normal = -mu * lambda * (n.dot(s.r) * hz + hz.dot(n) * s.r);
    // the complementarity's lambda = n . grad g_i(q) turns with n too (its q-dependence: pdStartForceCotangents)
    if (!data.friction.penalty[c]) g_normal += g_lambda * data.start_gradient.row(i).transpose();
    const Vec3 g_reference = -mu * lambda * (hz - n * n.dot(hz));
    if (per_lambda) (*per_lambda)[c] = -g_lambda;  // dL/dlambda = -z . d(grad D)/dlambda
    // the complementarity's lambda is not the penalty's k depth(q): the caller chains it (pdStartForceCotangents)
    const double k_lambda = data.friction.penalty[c] ? k : 0.0;
    // chained to the start: lambda = -k d(q_i), n = grad d(q_i) (its derivative C), r = q_i + dt (v + w x (q_i - c))
    Vec3 position, linear, angular;
    model.obstacleMotion(o, &position, &linear, &angular);
    const Vec3 w_ref = model.dt * angular.cross(g_reference);  // [dt w]x^T g_r = -dt w x g_r, with the sign of -q
    gq.row(i) -= (-k_lambda * g_lambda * n + C * g_normal + g_reference - w_ref).transpose();
    if (o < static_cast<int>(model.planes.size())) continue;  // planes do not move
    // the obstacle's translation moves q_i relative to it by -dc (d r / dc = -dt [w]x)
    grad_obstacles.segment<3>(6 * o) -= k_lambda * g_lambda * n - C * g_normal + w_ref;
    if (o < first_box) continue;
    // a box's rotation dt about its position: q_i moves relative to it by -dt x (q_i - c) and n turns with it
    const Vec3 r0 = data.q.row(i).transpose() - position;
    grad_obstacles.segment<3>(6 * o + 3) -=
        -k_lambda * g_lambda * n.cross(r0) - r0.cross(C * g_normal) + n.cross(g_normal);
  }
}

}  // namespace deformable
}  // namespace rigidiff
