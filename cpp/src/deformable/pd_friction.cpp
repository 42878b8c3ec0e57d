// Lagged smoothed friction of Projective Dynamics vertices on static planes (pd_step.hpp), after IPC (Li et al.
// 2020): D = mu lambda f0(|u|) with u = P (x - q) the slip over the step in the plane (P = I - n n^T) and f0 the
// C1 mollifier of |u| below eps = eps_v dt: f0(y) = -y^3 / (3 eps^2) + y^2 / eps + eps / 3 there, y above.
// Its gradient is mu lambda f1(y) u / y (a Coulomb force opposing the slip, smoothly static below eps), and the
// normal force lambda = k depth(q) is frozen at the step's start.
#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {
namespace {

struct Slip {
  Vec3 u;             // the slip in the plane
  double y = 0.0;     // |u|
  double f1_y = 0.0;  // f1(y) / y (finite at y = 0)
  double c2 = 0.0;    // (f1'(y) - f1(y) / y) / y^2: the coefficient of u u^T in the Hessian
};

Slip slip(const PdModel& model, const PdData& data, const Points& x, std::size_t c) {
  const int i = data.friction.vertex[c];
  const Vec3& n = data.friction.normal[c];
  const double eps = model.friction_velocity * model.dt;
  Slip s;
  const Vec3 dx = (x.row(i) - data.q.row(i)).transpose();
  s.u = dx - n * n.dot(dx);
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
    for (const PdPlane& p : model.planes) {
      const double d = p.normal.dot(data.q.row(i).transpose()) - p.offset;
      if (d >= 0.0) continue;
      data.friction.vertex.push_back(i);
      data.friction.normal.push_back(p.normal);
      data.friction.lambda.push_back(-model.contact_stiffness * d);
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

void pdFrictionGradientPerMu(const PdModel& model, const PdData& data, const Points& x, Points& out) {
  out.setZero(x.rows(), 3);
  for (std::size_t c = 0; c < data.friction.vertex.size(); ++c) {
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

void pdFrictionCotangent(const PdModel& model, const PdData& data, const Points& Z, Points& gq) {
  for (std::size_t c = 0; c < data.friction.vertex.size(); ++c) {
    const int i = data.friction.vertex[c];
    const Vec3& n = data.friction.normal[c];
    const Slip s = slip(model, data, data.x, c);
    const Vec3 z = Z.row(i).transpose();
    // d(grad D)/dq = -hess D through u = P (x - q), so -z^T d(grad D)/dq = +hess D z
    const double w = model.friction * data.friction.lambda[c];
    gq.row(i) += w * slipHessianProduct(s, n, z).transpose();
    // lambda = -k (n . q - offset): d(grad D)/dq = mu f1/y u (-k n)^T
    gq.row(i) += model.friction * model.contact_stiffness * s.f1_y * z.dot(s.u) * n.transpose();
  }
}

}  // namespace deformable
}  // namespace rigidiff
