// Implicit Euler for Projective Dynamics bodies (docs/deformable.md): x minimises the incremental potential
// g(x) = |x - y|^2_M / (2 dt^2) + E(x), y = q + dt v + dt^2 (gravity + M^-1 f), by L-BFGS whose initial
// inverse Hessian is the constant PD matrix A^-1 (prefactorised once, Cholesky); v' = (x - q) / dt. Fixed
// vertices stay at q. The adjoint solves (A - dA) z = b with the same factors and the same quasi-Newton.
#pragma once

#include <functional>

#include "rigidiff/deformable/pd_hessian.hpp"
#include "rigidiff/deformable/pd_lbfgs.hpp"
#include "rigidiff/deformable/pd_model.hpp"
#include "rigidiff/deformable/pd_projection.hpp"

namespace rigidiff {
namespace deformable {

/// Energy E(x) (elastic and contact penalty) and, if grad is not null, its gradient (n x 3). With body >= 0 only
/// that body's elastic energy (no contact). With a cache, the samples' F, SVDs and volume projections are
/// recorded there for a Hessian built next at the same x.
double pdEnergy(const PdModel& model, const Points& x, Points* grad, int body = -1, PdSampleCache* cache = nullptr);

/// The derivatives of body b's elastic gradient at x (n x 3 each) with respect to its Lame parameters mu and
/// lambda (through the weights of its energies).
/// (cache: SVDs and volume projections recorded at x by pdEnergy, reused where F is the same, or null)
void pdLameGradients(const PdModel& model, const Points& x, int body, Points& per_mu, Points& per_lambda,
                     const PdSampleCache* cache = nullptr);

/// Factorises the free-vertex block of the scalar PD matrix L = M / dt^2 + sum w G G^T + the contact stiffness of
/// each vertex marked in contacts (n; per plane it may touch).
void pdFactorise(const PdModel& model, PdData& data, const std::vector<char>& contacts);

/// A^-1 g for g on the free vertices stacked by coordinate (3 free_count: x of every free vertex, then y, z).
VecX pdSolve(const PdModel& model, const PdData& data, const VecX& g);

/// Writes xf (stacked as in pdSolve) into the free rows of X (n x 3).
void pdScatterFree(const PdModel& model, const VecX& xf, Points& X);

/// IPC's lagged smoothed friction D(x) = sum mu lambda f0(|P (x - r)|) of the step's contacts (data.friction,
/// from q = data.q; P the tangent projector, r the reference point, f0 the C1 mollifier of |.| below eps_v dt)
/// and its gradient, added to grad (n x 3) if not null.
double pdFrictionEnergy(const PdModel& model, const PdData& data, const Points& x, Points* grad);

/// Adds hess D(x) z to out (n x 3).
void pdFrictionHessianProduct(const PdModel& model, const PdData& data, const Points& x, const Points& z, Points& out);

/// Adds to gq (n x 3) the cotangent of the step's start q through the friction's reference points, normals and
/// the penalty's normal forces, -d(grad D)/dq^T z, for the adjoint z (n x 3) at the solution data.x, and to
/// grad_obstacles (6 per obstacle, as pdObstacleCotangents) those of the obstacles' poses. per_lambda, if not null,
/// receives dL/dlambda of each contact (data.friction order), which the caller chains for the complementarity's.
void pdFrictionCotangent(const PdModel& model, const PdData& data, const Points& Z, Points& gq, VecX& grad_obstacles,
                         VecX* per_lambda = nullptr);

/// The complementarity's start of a step (data.q, data.y and data.start_guess set): friction's start gradient and
/// the pairs touching at q (or on their planes at the guess) as data.active, factorised; an empty set under the
/// penalty.
void pdStartActiveSet(const PdModel& model, PdData& data);

/// The complementarity's active-set loop (DiffPD's Alg. 3) after a solve that `converged`: solution(X) writes the
/// free vertices of the current solution into X (n x 3) and returns the unprojected gradient of g there (stacked
/// as in pdSolve); again() places the vertices on the new set's planes and solves again, returning whether it
/// converged. Returns whether the set settled (always under the penalty); counts data.active_set_iterations.
/// links(g, X, update), when given, is called with each solution's gradient and vertices: to set the forces of
/// the pairs it holds (and data.active_forces at the vertices it shares) without update, and with it to apply the
/// rule to its pairs, returning 0 (unchanged), 1 (changed) or -1 (cycling), after data.active's update.
bool pdSettleActiveSet(const PdModel& model, PdData& data, double threshold, bool converged,
                       const std::function<VecX(Points&)>& solution, const std::function<bool()>& again,
                       const std::function<int(const VecX&, const Points&, bool)>& links = nullptr);
/// The error for a complementarity active set that did not settle: whether it came back to a set it had held
/// (a cycle) or was still changing, after how many changes, and `held` (what the set holds).
std::string pdUnsettledMessage(const PdData& data, const std::string& held);

/// Records the step's convergence (data.settled, data.converged; data.residual and data.iterations set) and, with
/// raise_on_failure, throws runtime_error naming the residual or the active set that did not settle.
void pdCheckConverged(const PdModel& model, PdData& data, const LbfgsResult& r, bool settled);

/// How many obstacles each surface vertex is inside at q or at y (n): the penalties the PD matrix holds.
std::vector<char> pdContactCandidates(const PdModel& model, const Points& q, const Points& y);

/// The pairs (surface vertex, obstacle) in contact at x.
int pdObstacleContactCount(const PdModel& model, const Points& x);

/// Finds the step's friction contacts from data.q (see PdFriction); none without friction unless `always`. Under
/// the complementarity model a vertex within kContactGap of a plane, ball or box at q rubs on it with the normal
/// force n . data.start_gradient (when positive).
void pdFrictionContacts(const PdModel& model, PdData& data, bool always = false);

/// Friction's gradient at x per unit mu (n x 3, overwritten): sum lambda f1(y)/y u over the contacts of data
/// (only those whose lambda is the penalty's if penalty_only).
void pdFrictionGradientPerMu(const PdModel& model, const PdData& data, const Points& x, Points& out,
                             bool penalty_only = false);

/// (M / dt^2 + hess E(x) + hess D(x)) z on the free vertices at the x where `hessian` was built, z and the
/// result stacked as in pdSolve (Z: n x 3 scratch).
VecX pdHessianFree(const PdModel& model, const PdData& data, const PdHessian& hessian, const VecX& zf, Points& Z);

/// The matrix of pdHessianFree (3 free_count square, stacked as in pdSolve), assembled: M / dt^2, the element
/// blocks and the penalty's and friction's vertex blocks.
Eigen::SparseMatrix<double> pdHessianMatrix(const PdModel& model, const PdData& data, const PdHessian& hessian);

/// Appends friction's Hessian at x as (vertex, 3 x 3 block) pairs, one per contact of data.friction.
void pdFrictionHessianBlocks(const PdModel& model, const PdData& data, const Points& x,
                             std::vector<std::pair<int, Mat3>>& blocks);

/// Whether the complementarity holds a vertex on a ball or box (whose planes depend on q and the poses).
bool pdHoldsOnObstacles(const PdModel& model, const PdData& data);

/// Adds to gq, gv and data.grad_obstacles the cotangents through the complementarity's holding planes on balls
/// and boxes (pdHoldingPlaneCotangents) of the adjoint zf of the step's solution, given its residual b - H z on
/// the free vertices (both stacked as in pdSolve; b the cotangent of x', not projected).
void pdHeldCotangents(const PdModel& model, PdData& data, const VecX& zf, const VecX& residual_free, Points& gq,
                      Points& gv);

/// The cotangents (6 per obstacle: translation, then rotation about its position, both in world axes; zero for
/// planes) of the obstacles' poses through the penalty at x, for the adjoint Z (n x 3): -Z^T d(grad E)/d(pose).
void pdObstacleCotangents(const PdModel& model, const Points& x, const Points& Z, VecX& out);

/// The longest step t in (0, 1] from x along d (both n x 3) before the determinant of a neo-Hookean sample's F
/// falls to a tenth of its value at x: the start of an inversion-free line search (1 without neo-Hookean bodies).
double pdInversionFreeStep(const PdModel& model, const Points& x, const Points& d);

/// invalid_argument unless a step's start has a finite force scale and potential: an element of a neo-Hookean
/// body inverted in q (its energy is infinite there; the message names the body and the element), or q, v,
/// f or an obstacle holding values too large for the step (a vertex at 1e300 would otherwise "converge" on a
/// NaN residual).
void pdCheckStartIsFinite(const PdModel& model, const Points& q, double force_scale, double start_potential);

/// Adds -Z^T d(grad E(x))/d(theta) to the cotangents of the parameters theta that E's gradient depends on: the
/// muscles' activations and stiffnesses, the contact stiffness (the penalty's), the obstacles' poses (in data) and
/// each body's Young's modulus and Poisson's ratio (gE, gnu).
void pdAddForceCotangents(const PdModel& model, PdData& data, const Points& x, const Points& Z, VecX& gE, VecX& gnu);

/// One step from (q, v) under external forces f (all n x 3); writes (q', v'). runtime_error with the residual
/// when the quasi-Newton iteration does not converge.
void pdStep(const PdModel& model, PdData& data, const Points& q, const Points& v, const Points& f, Points& q_next,
            Points& v_next);

/// Cotangents of (q, v, f) and of each body's Young's modulus and Poisson's ratio (gE, gnu: one per body) from
/// those of (q', v'), for the step just taken by pdStep (data holds its solution).
void pdStepVjp(const PdModel& model, PdData& data, const Points& gq_next, const Points& gv_next, Points& gq,
               Points& gv, Points& gf, VecX& gE, VecX& gnu);

}  // namespace deformable
}  // namespace rigidiff
