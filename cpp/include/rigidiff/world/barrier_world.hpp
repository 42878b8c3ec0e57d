// A barrier world (World(solver="barrier")): affine bodies and static ground planes under IPC's barrier,
// stepped by implicit Euler as the minimisation of an incremental potential (barrier_step.hpp). The state
// is q = (q_0, q_1, ...) with 12 coordinates per body in insertion order (abd/affine_body.hpp), and
// v = dq/dt of the same size.
#pragma once

#include <Eigen/Sparse>
#include <string>
#include <vector>

#include "rigidiff/abd/affine_body.hpp"
#include "rigidiff/collision/ccd/swept_pairs.hpp"
#include "rigidiff/world/block_hessian.hpp"
#include "rigidiff/world/pair_term_sums.hpp"

namespace rigidiff {

/// The static half space {x : normal . x >= offset} is free; its boundary plane is a barrier participant.
struct GroundPlane {
  Vec3 normal = Vec3::UnitZ();  ///< unit
  double offset = 0.0;
};

/// Solver settings of a barrier world.
struct BarrierOptions {
  double dhat = 1e-3;               ///< activation distance of the barrier, m (> 0)
  double newton_tolerance = 1e-2;   ///< stop when no surface vertex moves by > tol * l * dt in a Newton step,
                                    ///< nor in the free step M^-1 grad E of the residual force
  int max_newton_iterations = 200;  ///< a step that needs more raises std::runtime_error
  double friction = 0.0;            ///< Coulomb coefficient mu of every contact (>= 0; 0: frictionless)
  double friction_velocity = 1e-3;  ///< eps_v, m/s: slip slower than this is smoothly static (> 0)
};

struct BarrierWorldModel {
  double dt = 1e-2;
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
  BarrierOptions options;
  std::vector<AffineBody> bodies;
  std::vector<GroundPlane> planes;
  /// Per body, its collision group (empty: none; -1: no group), the link surfaces of one skeleton
  /// (barrier_articulated.hpp): two bodies of one group >= 0 form pairs only when the group's self-collision is
  /// on (collision_self) and they are on different links (collision_joint), neither the other's parent link
  /// (collision_parent: the joint carrying the parent link).
  std::vector<int> collision_group, collision_joint, collision_parent;
  std::vector<char> collision_self;

  /// May bodies a and b form pairs (by their groups alone)?
  bool mayPair(int a, int b) const {
    if (collision_group.empty() || collision_group[a] < 0 || collision_group[a] != collision_group[b]) return true;
    if (!collision_self[a]) return false;
    const int ja = collision_joint[a], jb = collision_joint[b];
    return ja != jb && collision_parent[a] != jb && collision_parent[b] != ja;  // adjacent links overlap
  }
  int nq() const { return 12 * static_cast<int>(bodies.size()); }
  /// Appends a body (its name must be new and non-empty) and returns its index.
  int addBody(AffineBody body);
  /// Appends the plane normal . x = offset (normal normalised; invalid_argument for a zero normal).
  void addPlane(const Vec3& normal, double offset);
};

/// What a barrier step did (for diagnostics and tests).
struct BarrierStepStats {
  int newton_iterations = 0;
  double kappa = 0.0;                 ///< the barrier stiffness at the end of the step (a power of two)
  double kappa_start = 0.0;           ///< ... and at its start, which the friction's normal forces use
  double min_distance = 0.0;          ///< the smallest surface distance at the end (inf if none within dhat)
  double residual = 0.0;              ///< the last Newton step's largest vertex move / (l dt)
  int active_pairs = 0;               ///< pairs within dhat at the end
  int candidates = 0;                 ///< primitive pairs of the last broad phase
  int symbolic_factorisations = 0;    ///< sparsity patterns analysed (the pattern is kept while it holds)
  int line_search_evaluations = 0;    ///< energy evaluations of the line searches
  // wall-clock seconds spent in each part of the step, summed over its Newton iterations
  double time_candidates = 0.0;       ///< broad phase: body pairs and primitive pairs
  double time_barrier = 0.0;          ///< pairs within dhat, barrier (and friction) energy, gradient, Hessian
  double time_assembly = 0.0;         ///< body blocks and the sparse matrix
  double time_factorisation = 0.0;    ///< sparse LDL^T (symbolic when the pattern changed, numeric) and solve
  double time_ccd = 0.0;              ///< the collision-free step size
  double time_total = 0.0;            ///< the whole step
};

/// One pair within reach of the barrier: point–triangle, edge–edge or point–plane. Points are (body,
/// vertex) of the bodies' rest meshes; for a plane, body_b is the plane index.
struct BarrierPair {
  enum Kind : int { PointTriangle = 0, EdgeEdge = 1, PointPlane = 2 } kind = PointTriangle;
  int body_a = 0, body_b = 0;  ///< the point's (or edge A's) body; the triangle's (edge B's) body or plane
  int a = 0, b = 0;            ///< vertex / edge index on body_a; face / edge index on body_b (unused for planes)
};

/// A contact pair frozen at the start of a step for the lagged friction (barrier_friction.hpp).
struct FrictionPair {
  int npts = 0;                        ///< 1 (point–plane) or 4
  int body[4] = {0, 0, 0, 0};          ///< each point's body
  Vec3 xbar[4];                        ///< each point's body coordinates
  double weight[4] = {0, 0, 0, 0};     ///< the closest points' weights c_k (second side negative)
  Eigen::Matrix<double, 3, 2> basis;   ///< tangent basis T
  double normal_force = 0.0;           ///< mu lambda
};

/// Scratch of the barrier step and its contact queries: sized by the step, reused between steps.
struct BarrierWorldData {
  std::vector<std::vector<Vec3>> x, x_end;  ///< world positions of each body's vertices (start, end of a move)
  std::vector<Vec3> pa_start, pa_end, pb_start, pb_end;  ///< primitive points for the swept broad phase
  SweptPairsScratch swept;
  std::vector<std::pair<int, int>> prim_pairs;
  std::vector<int> kept_a, kept_b;  ///< the primitives of a self-collision pair near the other body's box
  std::vector<Vec3> body_lo, body_hi;          ///< each body's (swept) box
  std::vector<int> body_order;                 ///< bodies sorted by body_lo.x (sweep and prune)
  std::vector<std::pair<int, int>> body_pairs; ///< body pairs whose boxes overlap
  std::vector<BarrierPair> candidates;  ///< primitive pairs that may be within dhat along the current move
  std::vector<BarrierPair> pairs;
  PairTermSums sums;  ///< the terms of pairs (or friction), summed per run of pairs between the same two bodies
  std::vector<FrictionPair> friction;  ///< the step's frozen friction pairs (empty without friction)
  BlockHessian hessian;
  Eigen::SparseMatrix<double> matrix;  ///< the lower triangle of the Newton matrix, its pattern kept
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt;
  BarrierStepStats stats;
};

}  // namespace rigidiff
