// The forward step of a Projective Dynamics world (pd_step.hpp).
#include <algorithm>
#include <functional>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "rigidiff/deformable/pd_complementarity.hpp"
#include "rigidiff/deformable/pd_elements.hpp"
#include "rigidiff/deformable/pd_lbfgs.hpp"
#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {

void pdFactorise(const PdModel& model, PdData& data, const std::vector<char>& contacts) {
  const double h2 = model.dt * model.dt;
  std::vector<Eigen::Triplet<double>> entries;
  for (int i = 0; i < model.n; ++i) {
    const int r = model.free_index[i];
    if (r < 0) continue;
    entries.emplace_back(r, r, model.mass[i] / h2 + model.contact_stiffness * contacts[i]);
  }
  for (const PdSample& s : model.samples) {
    // sum w G^T G, and a muscle's w (G m)(G m)^T (its energy is w/2 |F m - p|^2); the neo-Hookean energy,
    // whose Hessian is not constant, by the weight 2 mu + lambda (its Hessian at rest along a stretch), and the
    // corotated hyperelastic's volume term by lambda (its shear term is in w_corotated)
    const double w = s.w_corotated + s.w_volume + 2.0 * s.mu_neohookean + s.lambda_neohookean + s.w_determinant;
    const Eigen::Matrix<double, 8, 1> gm = s.grad * s.fiber;
    for (int a = 0; a < s.count; ++a) {
      const int ra = model.free_index[s.nodes[a]];
      if (ra < 0) continue;
      for (int b = 0; b < s.count; ++b) {
        const int rb = model.free_index[s.nodes[b]];
        if (rb >= 0) entries.emplace_back(ra, rb, w * s.grad.row(a).dot(s.grad.row(b)) + s.w_muscle * gm[a] * gm[b]);
      }
    }
  }
  Eigen::SparseMatrix<double> L(model.free_count, model.free_count);
  L.setFromTriplets(entries.begin(), entries.end());
  data.factor.compute(L);
  if (data.factor.info() != Eigen::Success)
    throw std::runtime_error("the projective dynamics matrix could not be factorised (not positive definite)");
  data.factor_valid = true;
  ++data.factor_stamp;
  data.factor_dt = model.dt;
  data.factor_contacts = contacts;
  const Eigen::SparseMatrix<double>& factor = data.factor.matrixL().nestedExpression();
  // pdSolve's substitutions take each column's diagonal as its first entry and the rest as below it, as
  // Eigen's simplicial factorisation stores them
  data.factor_diagonal.assign(model.free_count, 0.0);
  const int* outer = factor.outerIndexPtr();
  const int* inner = factor.innerIndexPtr();
  for (int j = 0; j < model.free_count; ++j) {
    bool lower = outer[j] < outer[j + 1] && inner[outer[j]] == j;
    for (int k = outer[j] + 1; lower && k < outer[j + 1]; ++k) lower = inner[k] > j;
    if (!lower)
      throw std::logic_error("the projective dynamics matrix's factor is not stored diagonal first (column " +
                             std::to_string(j) + ")");
    data.factor_diagonal[j] = factor.valuePtr()[outer[j]];
  }
}

VecX pdSolve(const PdModel& model, const PdData& data, const VecX& g) {
  // the three coordinates share L (A = I3 x L): the substitutions read each factor entry once and update a row
  // of three, rather than sweeping the factor once per coordinate; each row padded to four (a zero), so that
  // it is two whole vector registers
  const int n = model.free_count;
  const Eigen::VectorXi& perm = data.factor.permutationP().indices();  // (P g)[perm[i]] = g[i] (none: identity)
  auto row = [&](int i) { return perm.size() == n ? perm[i] : i; };
  using Row = Eigen::Vector4d;
  std::vector<Row, Eigen::aligned_allocator<Row>> Y(n);
  for (int i = 0; i < n; ++i) Y[row(i)] = Row(g[i], g[n + i], g[2 * n + i], 0.0);
  const Eigen::SparseMatrix<double>& L = data.factor.matrixL().nestedExpression();
  const int* outer = L.outerIndexPtr();
  const int* inner = L.innerIndexPtr();
  const double* value = L.valuePtr();
  const std::vector<double>& diagonal = data.factor_diagonal;
  for (int j = 0; j < n; ++j) {  // L y = P g, column by column (the diagonal is each column's first entry)
    const Row yj = Y[j] / diagonal[j];
    Y[j] = yj;
    for (int k = outer[j] + 1; k < outer[j + 1]; ++k) Y[inner[k]] -= value[k] * yj;
  }
  for (int j = n - 1; j >= 0; --j) {  // L^T x = y, a dot product per column
    Row sum = Y[j];
    for (int k = outer[j] + 1; k < outer[j + 1]; ++k) sum -= value[k] * Y[inner[k]];
    Y[j] = sum / diagonal[j];
  }
  VecX out(3 * n);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 3; ++c) out[c * n + i] = Y[row(i)][c];
  return out;
}

void pdScatterFree(const PdModel& model, const VecX& xf, Points& X) {
  const int nf = model.free_count;
  for (int i = 0; i < model.n; ++i)
    if (model.free_index[i] >= 0)
      for (int c = 0; c < 3; ++c) X(i, c) = xf[c * nf + model.free_index[i]];
}

VecX pdHessianFree(const PdModel& model, const PdData& data, const PdHessian& hessian, const VecX& zf, Points& Z) {
  const int nf = model.free_count;
  const double h2 = model.dt * model.dt;
  Z.setZero(model.n, 3);
  pdScatterFree(model, zf, Z);
  Points HZ;
  pdHessianProduct(model, hessian, Z, HZ);
  pdFrictionHessianProduct(model, data, hessian.x, Z, HZ);
  VecX out(3 * nf);
  for (int i = 0; i < model.n; ++i) {
    const int r = model.free_index[i];
    if (r < 0) continue;
    for (int c = 0; c < 3; ++c) out[c * nf + r] = model.mass[i] / h2 * Z(i, c) + HZ(i, c);
  }
  return out;
}

namespace {

void checkFinite(const Points& a, const char* name) {
  if (!a.allFinite()) throw std::invalid_argument(std::string(name) + " must be finite");
}

}  // namespace

void pdCheckStartIsFinite(const PdModel& model, const Points& q, double force_scale, double start_potential) {
  if (std::isfinite(force_scale) && std::isfinite(start_potential)) return;
  for (const PdBody& b : model.bodies) {
    if (!b.neohookean) continue;
    for (int e = b.first_element; e < b.first_element + b.element_count; ++e)
      for (int k = model.element_start[e]; k < model.element_start[e + 1]; ++k) {
        const double det = deformationGradient(model.samples[k], q).determinant();
        if (det > 0.0) continue;
        throw std::invalid_argument(
            "deformable " + b.name + ": element " + std::to_string(e - b.first_element) + " is " +
            (det < 0.0 ? "inverted" : "flat") + " in q (det F = " + sci(det) +
            "), where the neo-Hookean energy is infinite: start from a configuration without inverted elements, "
            "or use the 'corotated' or 'corotated_hyperelastic' energy, which pushes an inverted element back");
      }
  }
  throw std::invalid_argument("the projective step's forces overflow at its start (force scale " + sci(force_scale) +
                                "): q, v, f, a stiffness (the contacts', the joint limits') or an obstacle's "
                                "centre, radius, size or pose hold values too large for the step");
}

void pdStep(const PdModel& model, PdData& data, const Points& q, const Points& v, const Points& f, Points& q_next,
            Points& v_next) {
  if (model.bodies.empty()) throw std::invalid_argument("the world has no deformable body");
  checkFinite(q, "q");
  checkFinite(v, "v");
  checkFinite(f, "f");
  const double h = model.dt, h2 = h * h;
  const int nf = model.free_count;
  data.q = q;
  data.v = v;
  data.f = f;
  data.y.resize(model.n, 3);
  for (int i = 0; i < model.n; ++i)
    data.y.row(i) = q.row(i) + h * v.row(i) + h2 * (model.gravity.transpose() + f.row(i) / model.mass[i]);
  // the matrix holds the penalty stiffness of the surface vertices below a plane at q or at the inertial target
  // y (the ones likely to touch during the step): elsewhere it would only slow the iteration down; the solution
  // does not depend on it
  const std::vector<char> contacts = pdContactCandidates(model, q, data.y);
  if (!data.factor_valid || data.factor_dt != model.dt || contacts != data.factor_contacts)
    pdFactorise(model, data, contacts);
  pdStartActiveSet(model, data);
  pdFrictionContacts(model, data);
  Points X = q;
  Points grad;
  // the incremental potential on the free vertices, column c of a vertex at c * nf + its free row; its gradient
  // is projected on the active set's subspace (the minimisation's), unless `raw` is set
  bool raw = false;
  auto potential = [&](const VecX& xf, VecX& g) {
    pdScatterFree(model, xf, X);
    double value = pdEnergy(model, X, &grad, -1, &data.sample_cache) + pdFrictionEnergy(model, data, X, &grad);
    g.resize(3 * nf);
    for (int i = 0; i < model.n; ++i) {
      const int r = model.free_index[i];
      if (r < 0) continue;
      const Eigen::RowVector3d dx = X.row(i) - data.y.row(i);
      value += 0.5 * model.mass[i] / h2 * dx.squaredNorm();
      for (int c = 0; c < 3; ++c) g[c * nf + r] = model.mass[i] / h2 * dx[c] + grad(i, c);
    }
    if (!raw) pdProjectOnActiveSet(model, data.active, g);
    return value;
  };
  auto inverse = [&](const VecX& g) { return pdConstrainedSolve(model, data, g); };
  VecX xf(3 * nf), g0;
  for (int i = 0; i < model.n; ++i)
    if (model.free_index[i] >= 0)
      for (int c = 0; c < 3; ++c) xf[c * nf + model.free_index[i]] = q(i, c);
  pdPlaceOnPlanes(model, data.active, xf);
  const double g_start = potential(xf, g0);
  // the scale of the forces at play at the start: inertia (gravity, velocity) and elastic and contact forces,
  // which cancel at an equilibrium while the scale does not
  double inertia = 0.0, internal = 0.0;
  for (int i = 0; i < model.n; ++i) {
    if (model.free_index[i] < 0) continue;
    inertia += (model.mass[i] / h2 * (q.row(i) - data.y.row(i))).squaredNorm();
    internal += grad.row(i).squaredNorm();
  }
  data.force_scale = std::sqrt(inertia) + std::sqrt(internal);
  pdCheckStartIsFinite(model, q, data.force_scale, g_start);
  // bodies with the neo-Hookean energy: line searches start no further than an element's inversion
  bool neohookean = false;
  for (const PdBody& b : model.bodies) neohookean = neohookean || b.neohookean;
  Points X_d = q, D = Points::Zero(model.n, 3);
  StepLimit limit;
  if (neohookean)
    limit = [&](const VecX& at, const VecX& d) {
      pdScatterFree(model, at, X_d);
      pdScatterFree(model, d, D);
      return pdInversionFreeStep(model, X_d, D);
    };
  // the solve starts from q + dt v (the motion continued) where its potential is lower than q's: a rolling or
  // falling body starts about where it ends, which halves Newton's iterations on a rolling ball
  VecX guess = xf;
  for (int i = 0; i < model.n; ++i)
    if (model.free_index[i] >= 0)
      for (int c = 0; c < 3; ++c) guess[c * nf + model.free_index[i]] += h * v(i, c);
  pdPlaceOnPlanes(model, data.active, guess);
  if (limit) guess = xf + limit(xf, guess - xf) * (guess - xf);
  // the lowest of the starting points, with its value and gradient for the solver
  Evaluated best{g_start, g0};
  VecX g_try;
  const double g_guess = potential(guess, g_try);
  if (g_guess < best.value) xf.swap(guess), best = {g_guess, g_try};
  // the caller's guess (a recorded rollout's next state, when its adjoint solves the step again)
  if (data.start_guess.rows() == model.n) {
    for (int i = 0; i < model.n; ++i)
      if (model.free_index[i] >= 0)
        for (int c = 0; c < 3; ++c) guess[c * nf + model.free_index[i]] = data.start_guess(i, c);
    data.start_guess.resize(0, 3);
    pdPlaceOnPlanes(model, data.active, guess);
    const double g_given = potential(guess, g_try);
    if (g_given < best.value) xf.swap(guess), best = {g_given, g_try};
  }
  // never below the rounding level of the gradient itself, about a thousand roundings of its inertial term
  // |M y| / dt^2 (at an exact equilibrium the force scale is itself rounding, and no iterate could meet it)
  double inertial = 0.0;
  for (int i = 0; i < model.n; ++i)
    if (model.free_index[i] >= 0) inertial += (model.mass[i] / h2 * data.y.row(i)).squaredNorm();
  const double threshold = std::max(model.options.tolerance * data.force_scale,
                                    1e3 * std::numeric_limits<double>::epsilon() * std::sqrt(inertial));
  data.iterations = 0;
  // minimises g on the active set's subspace from xf (at_start: its value and gradient, when known)
  auto minimise = [&](const Evaluated* at_start) {
    LbfgsResult r;
    const int budget = model.options.max_iterations - data.iterations;
    int used = 0;
    if (model.options.method == PdMethod::Lbfgs) {
      r = lbfgs(potential, inverse, xf, threshold, budget, model.options.history, limit, at_start);
      used = r.iterations;
    }
    if (!r.converged && used < budget) {
      // Newton (or L-BFGS stalled, A^-1 far from the true inverse Hessian): the true Hessian's element blocks
      // at each iterate, and conjugate gradients preconditioned by A^-1 or the assembled matrix factorised
      PdHessian& blocks = data.hessian;
      Points X_h = X, Z;
      auto direction = [&](const VecX& at, const VecX& g, double forcing) {
        pdScatterFree(model, at, X_h);
        pdHessianBuild(model, X_h, blocks, nullptr, &data.sample_cache);  // (the gradient's SVDs, at the same point)
        VecX d;
        if (model.options.method == PdMethod::NewtonCholesky) {
          Eigen::SparseMatrix<double> H = pdHessianMatrix(model, data, blocks);
          if (data.active.size()) H = pdConstrainedMatrix(model, data.active, H);
          Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> factor(H);
          if (factor.info() == Eigen::Success) {
            d = -factor.solve(g);
            pdProjectOnActiveSet(model, data.active, d);
            return d;
          }
        }
        auto product = [&](const VecX& z) {
          VecX out = pdHessianFree(model, data, blocks, z, Z);
          pdProjectOnActiveSet(model, data.active, out);
          return out;
        };
        preconditionedCg(product, inverse, -g, d, forcing, 10 * static_cast<int>(g.size()));
        return d;
      };
      r = newton(potential, direction, inverse, xf, threshold, budget - used, limit, used == 0 ? at_start : nullptr);
      used += r.iterations;
    }
    data.iterations += used;
    return r;
  };
  LbfgsResult r = minimise(&best);
  // the complementarity's active set (DiffPD's Alg. 3), updated from each solution until it no longer changes
  const bool settled = pdSettleActiveSet(
      model, data, threshold, r.converged,
      [&](Points& at) {
        VecX g;
        raw = true;
        potential(xf, g);
        raw = false;
        pdScatterFree(model, xf, at);
        return g;
      },
      [&]() {
        pdPlaceOnPlanes(model, data.active, xf);
        r = minimise(nullptr);
        return r.converged;
      });
  data.residual = data.force_scale > 0.0 ? r.gradient_norm / data.force_scale : 0.0;
  pdCheckConverged(model, data, r, settled);
  pdScatterFree(model, xf, X);
  data.x = X;
  q_next = X;
  v_next = (X - q) / h;
  data.contacts = pdObstacleContactCount(model, X) + data.active.size();
}

void pdStartActiveSet(const PdModel& model, PdData& data) {
  if (model.contact_model != PdContactModel::Complementarity) {
    data.active.clear();
    pdActiveSetFactorise(model, data, data.active);
    return;
  }
  // the vertices touching an obstacle at q start held on it (the last step's active set), and friction's normal
  // forces are the pushes that hold them at q
  const double h2 = model.dt * model.dt;
  Points grad_q;
  pdEnergy(model, data.q, &grad_q);
  data.start_gradient = (model.mass.asDiagonal() * (data.q - data.y)) / h2 + grad_q;
  // (when the caller gives the step's recorded solution as a guess, rollout_backward solving it again, the
  // pairs on their planes there: the recorded final set, which the loop then confirms without changing it)
  const bool guessed = data.start_guess.rows() == model.n;
  PdActiveSet touching;
  pdTouchingPairs(model, data.q, data.v, guessed ? data.start_guess : data.q, !guessed, touching);
  if (touching.vertex != data.active.vertex || touching.obstacle != data.active.obstacle ||
      touching.offset != data.active.offset || touching.normal != data.active.normal)
    data.active = touching;
  pdActiveSetFactorise(model, data, data.active);
}

bool pdSettleActiveSet(const PdModel& model, PdData& data, double threshold, bool converged,
                       const std::function<VecX(Points&)>& solution, const std::function<bool()>& again,
                       const std::function<int(const VecX&, const Points&, bool)>& links) {
  data.active_set_iterations = 0;
  data.active_set_cycled = false;
  data.active_forces.resize(0);
  if (model.contact_model != PdContactModel::Complementarity) return true;
  std::vector<std::vector<int>> seen;
  bool settled = false;
  Points X(model.n, 3);
  while (converged) {
    X = data.q;
    const VecX g = solution(X);
    data.active_forces = pdActiveForces(model, data.active, g);
    if (links) links(g, X, false);
    if (data.active_set_iterations == kMaxActiveSetIterations) break;
    int change = pdUpdateActiveSet(model, data, data.active_forces, X, threshold, seen);
    if (links && change != -1) {
      const int linked = links(g, X, true);
      change = linked == -1 ? -1 : std::max(change, linked);
    }
    settled = change == 0;
    data.active_set_cycled = change == -1;
    if (change != 1) break;
    ++data.active_set_iterations;
    pdActiveSetFactorise(model, data, data.active);
    converged = again();
  }
  return settled;
}

std::string pdUnsettledMessage(const PdData& data, const std::string& held) {
  const std::string n = std::to_string(data.active_set_iterations);
  return "the complementarity contact's active set did not settle: " +
         (data.active_set_cycled ? "it came back to a set it had held after " + n + " changes"
                                 : "still changing after " + n + " changes") +
         " (" + held + "); contact_model=\"penalty\" has no active set to settle";
}

void pdCheckConverged(const PdModel& model, PdData& data, const LbfgsResult& r, bool settled) {
  data.settled = settled || !r.converged;  // (an unconverged solve is reported as such, not as the set)
  data.converged = r.converged && settled;
  if (!r.converged && model.options.raise_on_failure)
    throw std::runtime_error("the projective step did not converge: |grad g| = " + sci(r.gradient_norm) +
                             " is " + sci(data.residual) + " of the start's force scale after " +
                             std::to_string(data.iterations) + " iterations (tolerance " +
                             sci(model.options.tolerance) + ")");
  if (!settled && model.options.raise_on_failure)
    throw std::runtime_error(
        pdUnsettledMessage(data, std::to_string(data.active.size()) + " vertices held on planes, balls or boxes"));
}

std::vector<char> pdContactCandidates(const PdModel& model, const Points& q, const Points& y) {
  std::vector<char> contacts(model.n, 0);
  for (int i = 0; i < model.n; ++i)
    for (int o = 0; model.surface[i] && o < model.obstacleCount(); ++o) {
      if (!model.penalised(o)) continue;
      Vec3 n;
      double curvature;
      contacts[i] += model.obstacleDistance(o, q.row(i).transpose(), &n, &curvature) < 0.0 ||
                     model.obstacleDistance(o, y.row(i).transpose(), &n, &curvature) < 0.0;
    }
  return contacts;
}

int pdObstacleContactCount(const PdModel& model, const Points& x) {
  int count = 0;
  model.forEachPenetration(x, [&](int, int, double, const Vec3&, double) { ++count; });
  return count;
}

}  // namespace deformable
}  // namespace rigidiff
