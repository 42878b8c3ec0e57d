// The step of a barrier world (world/barrier_step.hpp): projected Newton on the incremental potential with
// a CCD-filtered backtracking line search.
#include "rigidiff/world/barrier_step.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "rigidiff/abd/orthogonality.hpp"
#include "rigidiff/contact/barrier.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/barrier_contacts.hpp"
#include "rigidiff/world/barrier_friction.hpp"

namespace rigidiff {

namespace {

// the smallest relative tolerance of the free step (the Newton step's may be smaller)
constexpr double kFreeStepFloor = 1e-6;

using Clock = std::chrono::steady_clock;

// seconds since t, and t moved to now
double lap(Clock::time_point& t) {
  const Clock::time_point now = Clock::now();
  const double out = std::chrono::duration<double>(now - t).count();
  t = now;
  return out;
}

void checkFinite(const double* x, int n, const char* name) {
  for (int i = 0; i < n; ++i)
    RD_CHECK_ARG(std::isfinite(x[i]), name << "[" << i << "] is not finite (" << x[i] << ")");
}

}  // namespace

double largestVertexMove(const BarrierWorldModel& model, const VecX& dq) {
  double out = 0.0;
  for (size_t i = 0; i < model.bodies.size(); ++i) {
    const double* d = dq.data() + 12 * i;
    for (const Vec3& xbar : model.bodies[i].rest) {
      const Vec3 dx(d[0] + d[3] * xbar[0] + d[4] * xbar[1] + d[5] * xbar[2],
                    d[1] + d[6] * xbar[0] + d[7] * xbar[1] + d[8] * xbar[2],
                    d[2] + d[9] * xbar[0] + d[10] * xbar[1] + d[11] * xbar[2]);
      out = std::max(out, dx.norm());
    }
  }
  return out;
}

void finishBarrierStep(const BarrierWorldModel& model, BarrierWorldData& data, int iterations, double kappa,
                       double residual, const double* q, const VecX& q_end, double* q_out, double* v_out) {
  if (iterations == model.options.max_newton_iterations)
    RD_THROW(std::runtime_error, "barrier step: Newton did not converge in " << iterations << " iterations (residual "
                                     << residual << " > tolerance " << model.options.newton_tolerance << ")");
  for (Eigen::Index i = 0; i < q_end.size(); ++i) {
    q_out[i] = q_end[i];
    v_out[i] = (q_end[i] - q[i]) / model.dt;
  }
  data.stats.newton_iterations = iterations;
  data.stats.kappa = kappa;
  data.stats.residual = residual;
  data.stats.active_pairs = static_cast<int>(data.pairs.size());
  data.stats.min_distance = std::sqrt(data.stats.min_distance);
}

double incrementalPotential(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* q_n,
                            const double* v_n, const double* tau, double kappa, double* grad, bool reuse_candidates) {
  const double h = model.dt;
  double energy = 0.0;
  for (size_t i = 0; i < model.bodies.size(); ++i) {
    const AffineBody& body = model.bodies[i];
    const int at = 12 * static_cast<int>(i);
    if (body.fixed) {  // static: not an unknown, its own terms are constant
      if (grad) Eigen::Map<Vec12>(grad + at).setZero();
      continue;
    }
    Vec12 dq, f;
    for (int r = 0; r < 12; ++r) {
      dq[r] = q[at + r] - q_n[at + r] - h * v_n[at + r];
      f[r] = tau[at + r];
    }
    f += affineGravityForce(body, model.gravity);
    Vec12 qi = Eigen::Map<const Vec12>(q + at);
    const double w = body.stiffness * body.integrals.volume;
    const Vec12 Mdq = body.mass_matrix * dq;
    energy += 0.5 * dq.dot(Mdq) - h * h * f.dot(qi) + h * h * orthogonalityEnergy(q + at, w);
    if (grad) Eigen::Map<Vec12>(grad + at) = Mdq - h * h * f + h * h * orthogonalityGradient(q + at, w);
  }
  Clock::time_point t = Clock::now();
  barrierPositions(model, q, data.x);
  if (!reuse_candidates) {
    barrierCandidates(model, data, false, model.options.dhat);
    data.stats.time_candidates += lap(t);
  }
  data.stats.min_distance = pairsFromCandidates(model, data);
  if (kappa > 0.0) energy += kappa * barrierPotential(model, data, kappa, grad, nullptr);
  if (!data.friction.empty()) energy += frictionPotential(model, data, q, q_n, grad, nullptr);
  data.stats.time_barrier += lap(t);
  return energy;
}

void barrierStep(const BarrierWorldModel& model, BarrierWorldData& data, const double* q, const double* v,
                 const double* tau, double* q_out, double* v_out) {
  const int n = model.nq();
  const double h = model.dt;
  checkFinite(q, n, "q");
  checkFinite(v, n, "v");
  checkFinite(tau, n, "tau");
  const Clock::time_point start = Clock::now();
  Clock::time_point t = start;
  data.stats = BarrierStepStats();
  data.friction.clear();
  if (n == 0) return;
  checkIntersectionFree(model, data, q);
  const double l = sceneDiagonal(model, data);
  const double shat = model.options.dhat * model.options.dhat;

  // the barrier stiffness starts at IPC's lower bound kappa_min, rounded up to a power of two: piecewise
  // constant in (q, v, tau), so the step is smooth in them wherever the rounding does not jump and its
  // derivatives hold kappa fixed exactly. IPC's balance -g_B.g_E/|g_B|^2 is left out: for pairs just inside
  // dhat g_B is tiny, the balance lands on kappa_max and the Newton solve turns stiff
  double average_mass = 0.0;
  int moving = 0;
  for (const AffineBody& b : model.bodies)
    if (!b.fixed) average_mass += b.mass, ++moving;
  average_mass = moving > 0 ? average_mass / moving : 1.0;
  const BarrierStiffness stiffness = initialBarrierStiffness(l, shat, average_mass, 0.0, 0.0);
  double kappa = std::exp2(std::ceil(std::log2(stiffness.kappa_min)));
  data.stats.kappa_start = kappa;
  const double kappa_max = std::exp2(std::ceil(std::log2(stiffness.kappa_max)));
  VecX grad = VecX::Zero(n);
  // E and its gradient at the start state, whose pairs the friction freezes (data.pairs, data.x); there the
  // slip is zero, so the friction adds its constant mu lambda eps / 3 per pair to E and nothing to the gradient
  double energy = incrementalPotential(model, data, q, q, v, tau, kappa, grad.data());
  buildFrictionPairs(model, data, kappa);
  if (!data.friction.empty()) energy += frictionPotential(model, data, q, q, nullptr, nullptr);

  VecX qk = Eigen::Map<const VecX>(q, n), trial(n), grad_trial(n), dir(n), free_step(n), neg_grad(n), q_end(n);
  std::vector<Eigen::LDLT<Mat12>> mass_factors;
  for (const AffineBody& b : model.bodies) mass_factors.emplace_back(b.mass_matrix);
  double prev_min_s = data.stats.min_distance;
  const double tolerance = model.options.newton_tolerance * l * h;
  double residual = std::numeric_limits<double>::infinity();
  int it = 0;
  for (; it < model.options.max_newton_iterations; ++it) {
    // the Hessian, each element block projected to PSD (data.pairs are those at qk, from the last evaluation)
    t = Clock::now();
    data.hessian.reset(static_cast<int>(model.bodies.size()));
    for (size_t i = 0; i < model.bodies.size(); ++i) {
      const AffineBody& body = model.bodies[i];
      const int at = 12 * static_cast<int>(i);
      // a static body's block is its mass matrix alone: with no coupling and a zero gradient it does not move
      data.hessian.addDiagonal(static_cast<int>(i),
                               body.fixed ? body.mass_matrix
                                          : Mat12(body.mass_matrix + h * h * projectToPsd(orthogonalityHessian(
                                                qk.data() + at, body.stiffness * body.integrals.volume))));
    }
    data.stats.time_assembly += lap(t);
    barrierPotential(model, data, kappa, nullptr, &data.hessian);
    frictionPotential(model, data, qk.data(), q, nullptr, &data.hessian);
    data.stats.time_barrier += lap(t);
    // the pattern (which bodies touch) is kept while it holds: its symbolic analysis is redone only when it changes
    if (data.hessian.writeLower(data.matrix)) {
      data.ldlt.analyzePattern(data.matrix);
      ++data.stats.symbolic_factorisations;
    }
    data.stats.time_assembly += lap(t);
    data.ldlt.factorize(data.matrix);
    if (data.ldlt.info() != Eigen::Success)
      RD_THROW(std::runtime_error, "barrier step: the Newton matrix could not be factorised at iteration " << it);
    neg_grad = -grad;
    dir = data.ldlt.solve(neg_grad);
    data.stats.time_factorisation += lap(t);
    // converged when neither the Newton step nor the free step M^-1 grad E of the residual force moves a
    // vertex by more than the tolerance: the second keeps a very stiff term (smoothed static friction at
    // zero slip, a barrier near contact) from passing a tiny Newton step off as convergence; its own
    // tolerance stops at kFreeStepFloor, above the rounding of the stiff terms in grad E
    for (size_t i = 0; i < model.bodies.size(); ++i)
      free_step.segment<12>(12 * i) = mass_factors[i].solve(grad.segment<12>(12 * i));
    const double move = largestVertexMove(model, dir), free_move = largestVertexMove(model, free_step);
    residual = std::max(move, free_move) / (l * h);
    if (move <= tolerance && free_move <= std::max(tolerance, kFreeStepFloor * l * h)) break;

    // the line search starts at the largest collision-free fraction of the step and halves until E decreases
    // the candidates of the whole move qk -> qk + dir within dhat serve its CCD and every energy of the line
    // search, whose iterates lie on that move
    t = Clock::now();
    q_end = qk + dir;
    barrierPositions(model, qk.data(), data.x);
    barrierPositions(model, q_end.data(), data.x_end);
    barrierCandidates(model, data, true, model.options.dhat);
    data.stats.time_candidates += lap(t);
    double alpha = collisionFreeStepOfCandidates(model, data);
    data.stats.time_ccd += lap(t);
    energy = backtrackingLineSearch(model, alpha, energy, it, residual, [&](double a) {
      trial = qk + a * dir;
      grad_trial.setZero();
      ++data.stats.line_search_evaluations;
      return incrementalPotential(model, data, trial.data(), q, v, tau, kappa, grad_trial.data(), true);
    });
    qk = trial;
    grad = grad_trial;
    const double min_s = data.stats.min_distance;
    const double new_kappa = updateBarrierStiffness(prev_min_s, min_s, kappa_max, kappa, l);
    prev_min_s = min_s;
    if (new_kappa != kappa) {
      kappa = new_kappa;
      grad.setZero();
      energy = incrementalPotential(model, data, qk.data(), q, v, tau, kappa, grad.data(), true);
    }
  }
  finishBarrierStep(model, data, it, kappa, residual, q, qk, q_out, v_out);
  data.stats.time_total = lap(t = start);
}

}  // namespace rigidiff
