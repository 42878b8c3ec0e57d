// The adjoint of a Projective Dynamics step (pd_step.hpp). At the solution x, grad g(x; y, q_fixed) = 0, so
// with H = M / dt^2 + hess E(x) on the free vertices and b = dL/dx' (x' = x, v' = (x - q) / dt):
//   H z = b_free,  dL/dy = M z / dt^2,  dL/dq_fixed = b_fixed - (hess E z)_fixed,
// and y = q + dt v + dt^2 (gravity + M^-1 f) passes dL/dy on to q, v and f. The adjoint is solved by the
// step's quasi-Newton iteration on z^T H z / 2 - b^T z, with the same prefactorised PD matrix.
#include <cmath>
#include <stdexcept>
#include <string>

#include "rigidiff/deformable/pd_lbfgs.hpp"
#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {

void pdStepVjp(const PdModel& model, PdData& data, const Points& gq_next, const Points& gv_next, Points& gq,
               Points& gv, Points& gf, VecX& gE, VecX& gnu) {
  if (data.x.rows() != model.n) throw std::logic_error("step_vjp needs a step first");
  if (!gq_next.allFinite() || !gv_next.allFinite())
    throw std::invalid_argument("dL_dq_next and dL_dv_next must be finite");
  const double h = model.dt, h2 = h * h;
  const int nf = model.free_count;
  std::vector<PdSampleCache> cache;
  pdHessianCache(model, data.x, cache);
  const Points b = gq_next + gv_next / h;
  Points Z = Points::Zero(model.n, 3), HZ;
  auto quadratic = [&](const VecX& zf, VecX& g) {
    g = pdHessianFree(model, data, data.x, cache, zf, Z);
    double value = 0.5 * zf.dot(g);
    for (int i = 0; i < model.n; ++i) {
      const int r = model.free_index[i];
      if (r < 0) continue;
      for (int c = 0; c < 3; ++c) {
        value -= b(i, c) * zf[c * nf + r];
        g[c * nf + r] -= b(i, c);
      }
    }
    return value;
  };
  auto inverse = [&](const VecX& g) { return pdSolve(model, data, g); };
  VecX zf = VecX::Zero(3 * nf);
  double b_norm = 0.0;
  for (int i = 0; i < model.n; ++i)
    if (model.free_index[i] >= 0) b_norm += b.row(i).squaredNorm();
  b_norm = std::sqrt(b_norm);
  if (b_norm > 0.0) {
    LbfgsResult r = lbfgs(quadratic, inverse, zf, model.options.tolerance * b_norm, model.options.max_iterations,
                          model.options.history);
    if (!r.converged) {
      // L-BFGS stalled: conjugate gradients on H z = b, preconditioned by A^-1, from scratch
      VecX bf(3 * nf), grad;
      for (int i = 0; i < model.n; ++i)
        if (model.free_index[i] >= 0)
          for (int c = 0; c < 3; ++c) bf[c * nf + model.free_index[i]] = b(i, c);
      r.iterations += preconditionedCg([&](const VecX& z) { return pdHessianFree(model, data, data.x, cache, z, Z); },
                                       inverse, bf, zf, model.options.tolerance, model.options.max_iterations);
      quadratic(zf, grad);
      r.gradient_norm = grad.norm();
      if (!(r.gradient_norm <= model.options.tolerance * b_norm))
        throw std::runtime_error("the projective adjoint did not converge: |H z - b| = " + sci(r.gradient_norm) +
                                 " is " + sci(r.gradient_norm / b_norm) + " of |b| after " +
                                 std::to_string(r.iterations) + " iterations");
    }
  }
  pdScatterFree(model, zf, Z);
  pdEnergyHessianProduct(model, data.x, cache, Z, HZ);  // elastic and penalty only: friction is added below
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
  pdFrictionCotangent(model, data, Z, gq);
  // each body's weights are 2 mu V (corotated) and lambda V (volume): chain their stiffness factors to (E, nu)
  const int bodies = static_cast<int>(model.bodies.size());
  gE.setZero(bodies);
  gnu.setZero(bodies);
  Points unit_corotated, unit_volume;
  for (int k = 0; k < bodies; ++k) {
    const PdBody& body = model.bodies[k];
    pdElasticWeightGradients(model, data.x, k, unit_corotated, unit_volume);
    const double zc = -(Z.array() * unit_corotated.array()).sum(), zv = -(Z.array() * unit_volume.array()).sum();
    const double E = body.youngs_modulus, nu = body.poisson_ratio, d = (1.0 + nu) * (1.0 - 2.0 * nu);
    // 2 mu = E / (1 + nu), lambda = E nu / ((1 + nu)(1 - 2 nu))
    gE[k] = zc / (1.0 + nu) + zv * nu / d;
    gnu[k] = -zc * E / ((1.0 + nu) * (1.0 + nu)) + zv * E * (1.0 + 2.0 * nu * nu) / (d * d);
  }
}

}  // namespace deformable
}  // namespace rigidiff
