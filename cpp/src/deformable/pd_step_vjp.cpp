// The adjoint of a Projective Dynamics step (pd_step.hpp). At the solution x, grad g(x; y, q_fixed) = 0, so
// with H = M / dt^2 + hess E(x) on the free vertices and b = dL/dx' (x' = x, v' = (x - q) / dt):
//   H z = b_free,  dL/dy = M z / dt^2,  dL/dq_fixed = b_fixed - (hess E z)_fixed,
// (with the complementarity's active set, P H P z = P b_free, P the projector off the held normals),
// and y = q + dt v + dt^2 (gravity + M^-1 f) passes dL/dy on to q, v and f. The adjoint is solved by the
// conjugate gradients preconditioned by the prefactorised PD matrix (L-BFGS on z^T H z / 2 - b^T z where they
// meet non-positive curvature), with H's element blocks built once; where they stall short of the tolerance, by
// the factorised H.
#include <cmath>
#include <stdexcept>
#include <string>

#include "rigidiff/deformable/pd_complementarity.hpp"
#include "rigidiff/deformable/pd_elements.hpp"
#include "rigidiff/deformable/pd_lbfgs.hpp"
#include "rigidiff/deformable/pd_muscle.hpp"
#include "rigidiff/deformable/pd_skeleton.hpp"
#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {

void pdStepVjp(const PdModel& model, PdData& data, const Points& gq_next, const Points& gv_next, Points& gq,
               Points& gv, Points& gf, VecX& gE, VecX& gnu) {
  if (data.x.rows() != model.n) throw std::logic_error("step_vjp needs a step first");
  if (!gq_next.allFinite() || !gv_next.allFinite())
    throw std::invalid_argument("dL_dq_next and dL_dv_next must be finite");
  const double h = model.dt;
  const int nf = model.free_count;
  PdHessian& hessian = data.hessian;
  pdHessianBuild(model, data.x, hessian, nullptr, &data.sample_cache);  // (the step's last SVDs, at x)
  const Points b = gq_next + gv_next / h;
  Points Z = Points::Zero(model.n, 3);
  VecX bf(3 * nf);
  for (int i = 0; i < model.n; ++i)
    if (model.free_index[i] >= 0)
      for (int c = 0; c < 3; ++c) bf[c * nf + model.free_index[i]] = b(i, c);
  // the complementarity's active vertices are held along their normals: the adjoint lives on the same subspace
  // (P H P z = P b, with the constrained inverse of A as preconditioner)
  const VecX b_held = bf;
  pdProjectOnActiveSet(model, data.active, bf);
  auto product = [&](const VecX& z) {
    VecX out = pdHessianFree(model, data, hessian, z, Z);
    pdProjectOnActiveSet(model, data.active, out);
    return out;
  };
  auto inverse = [&](const VecX& g) { return pdConstrainedSolve(model, data, g); };
  // the direct adjoint (H assembled and factorised): empty where the factorisation fails
  auto direct = [&]() {
    Eigen::SparseMatrix<double> H = pdHessianMatrix(model, data, hessian);
    if (data.active.size()) H = pdConstrainedMatrix(model, data.active, H);
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> factor(H);
    return factor.info() == Eigen::Success ? VecX(factor.solve(bf)) : VecX();
  };
  const bool cholesky = model.options.method == PdMethod::NewtonCholesky;
  VecX zf = VecX::Zero(3 * nf);
  if (cholesky && bf.norm() > 0.0) {  // the baseline's
    const VecX z = direct();
    if (z.size()) zf = z;
  }
  // conjugate gradients preconditioned by A^-1 (H is positive definite at a minimum of g), L-BFGS where they meet
  // non-positive curvature
  try {
    solveAdjoint(product, inverse, bf, zf, model.options.tolerance, model.options.max_iterations, model.options.history);
  } catch (const std::runtime_error&) {
    // an ill-conditioned H (a nearly incompressible material, stiff contact) can stall the iterations short of the
    // tolerance: the direct adjoint answers instead, checked (and refined from, where it falls short) the same way
    if (cholesky) throw;
    const VecX z = direct();
    if (!z.size()) throw;
    zf = z;
    solveAdjoint(product, inverse, bf, zf, model.options.tolerance, model.options.max_iterations, model.options.history);
  }
  pdScatterFree(model, zf, Z);
  pdStepCotangents(model, data, Z, b, gv_next, gq, gv, gf, gE, gnu);
  if (pdHoldsOnObstacles(model, data))
    pdHeldCotangents(model, data, zf, VecX(b_held - pdHessianFree(model, data, hessian, zf, Z)), gq, gv);
}

bool pdHoldsOnObstacles(const PdModel& model, const PdData& data) {
  for (int o : data.active.obstacle)
    if (o >= static_cast<int>(model.planes.size())) return true;
  return false;
}

void pdHeldCotangents(const PdModel& model, PdData& data, const VecX& zf, const VecX& residual_free, Points& gq,
                      Points& gv) {
  if (data.active_forces.size() != data.active.size())
    throw std::logic_error("step_vjp needs the normal forces of a converged step");
  Points Z = Points::Zero(model.n, 3), residual = Points::Zero(model.n, 3);
  pdScatterFree(model, zf, Z);
  pdScatterFree(model, residual_free, residual);
  pdHoldingPlaneCotangents(model, data.active, data.q, data.v, data.x, Z, residual, data.active_forces, gq, gv,
                           data.grad_obstacles);
}

void pdStepCotangents(const PdModel& model, PdData& data, const Points& Z, const Points& b, const Points& gv_next,
                      Points& gq, Points& gv, Points& gf, VecX& gE, VecX& gnu) {
  const double h = model.dt, h2 = h * h;
  Points HZ;
  pdHessianProduct(model, data.hessian, Z, HZ);  // elastic and penalty only: friction is added below
  gq = -gv_next / h;
  gv.setZero(model.n, 3);
  gf.setZero(model.n, 3);
  for (int i = 0; i < model.n; ++i) {
    if (model.free_index[i] < 0) {
      gq.row(i) += b.row(i) - HZ.row(i);
      continue;
    }
    const Eigen::RowVector3d dy = model.mass[i] / h2 * Z.row(i);
    gq.row(i) += dy;
    gv.row(i) = h * dy;
    gf.row(i) = Z.row(i);
  }
  data.grad_activation.setZero(model.muscles.size());
  data.grad_muscle_stiffness.setZero(model.muscles.size());
  data.grad_obstacles.setZero(6 * model.obstacleCount());
  data.grad_contact_stiffness = 0.0;
  gE.setZero(model.bodies.size());
  gnu.setZero(model.bodies.size());
  pdAddForceCotangents(model, data, data.x, Z, gE, gnu);
  VecX per_lambda;
  pdFrictionCotangent(model, data, Z, gq, data.grad_obstacles, &per_lambda);
  // the friction coefficient (friction's gradient is mu times its per-mu gradient, over every contact at the
  // start, so that switching friction on has a gradient at mu = 0), and the contact stiffness through the
  // penalty's normal forces lambda = k depth(q) (not the complementarity's, which do not depend on k)
  PdData contacts;
  contacts.q = data.q;
  contacts.start_gradient = data.start_gradient;
  pdFrictionContacts(model, contacts, true);
  Points friction_per_mu;
  pdFrictionGradientPerMu(model, contacts, data.x, friction_per_mu);
  data.grad_friction = -(Z.array() * friction_per_mu.array()).sum();
  pdFrictionGradientPerMu(model, contacts, data.x, friction_per_mu, true);
  data.grad_contact_stiffness -= model.friction * (Z.array() * friction_per_mu.array()).sum() / model.contact_stiffness;
  // each body's density: its masses in M (x - y) / dt^2 = M (x - q - dt v) / dt^2 - M g - f
  data.grad_density.setZero(model.bodies.size());
  for (std::size_t k = 0; k < model.bodies.size(); ++k) {
    const PdBody& body = model.bodies[k];
    for (int i = body.first_vertex; i < body.first_vertex + body.vertex_count; ++i)
      if (model.free_index[i] >= 0)
        data.grad_density[k] -= Z.row(i).dot(model.mass[i] / h2 * (data.x.row(i) - data.y.row(i)) + data.f.row(i)) /
                                body.density;
  }
  pdStartForceCotangents(model, data, per_lambda, gq, gv, gf, gE, gnu);
}

void pdAddForceCotangents(const PdModel& model, PdData& data, const Points& x, const Points& Z, VecX& gE, VecX& gnu) {
  // muscles: dL/d(theta) = -z^T d(grad E)/d(theta), d(grad E)/d(theta) at node k being (d stress/d theta) g_k
  for (std::size_t k = 0; k < model.muscles.size(); ++k)
    for (int i : model.muscles[k].samples) {
      const PdSample& s = model.samples[i];
      const Mat3 F = deformationGradient(s, x);
      const Mat3 per_activation = muscleStressPerActivation(s, F), per_stiffness = muscleStressPerStiffness(model, s, F);
      for (int a = 0; a < s.count; ++a) {
        const Vec3 z = Z.row(s.nodes[a]).transpose(), g = s.grad.row(a).transpose();
        data.grad_activation[k] -= z.dot(per_activation * g);
        data.grad_muscle_stiffness[k] -= z.dot(per_stiffness * g);
      }
    }
  // the contact stiffness k through the penalty's gradient k d n, and the obstacles' poses
  model.forEachPenetration(x, [&](int i, int, double d, const Vec3& n, double) {
    data.grad_contact_stiffness -= d * n.dot(Z.row(i).transpose());
  });
  VecX poses;
  pdObstacleCotangents(model, x, Z, poses);
  data.grad_obstacles += poses;
  // each body's Lame parameters through its energies' weights, chained to (E, nu)
  Points per_mu, per_lambda;
  for (std::size_t k = 0; k < model.bodies.size(); ++k) {
    const PdBody& body = model.bodies[k];
    pdLameGradients(model, x, static_cast<int>(k), per_mu, per_lambda, &data.sample_cache);
    const double gmu = -(Z.array() * per_mu.array()).sum(), glambda = -(Z.array() * per_lambda.array()).sum();
    const double E = body.youngs_modulus, nu = body.poisson_ratio, d = (1.0 + nu) * (1.0 - 2.0 * nu);
    // mu = E / (2 (1 + nu)), lambda = E nu / ((1 + nu)(1 - 2 nu))
    gE[k] += gmu / (2.0 * (1.0 + nu)) + glambda * nu / d;
    gnu[k] += -gmu * E / (2.0 * (1.0 + nu) * (1.0 + nu)) + glambda * E * (1.0 + 2.0 * nu * nu) / (d * d);
  }
}

}  // namespace deformable
}  // namespace rigidiff
