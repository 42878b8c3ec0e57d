// Deformable solids under Projective Dynamics (World(solver="projective")): the model (meshes turned into
// quadrature samples, lumped masses, material weights, fixed vertices, ground planes) and the scratch data of
// a step. Positions are n x 3 row-major (vertex i at row i), so the flat state is (x0, y0, z0, x1, ...).
#pragma once

#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "rigidiff/fwd.hpp"
#include "rigidiff/deformable/pd_projection.hpp"

namespace rigidiff {

class ThreadTeam;  // world/thread_team.hpp

namespace deformable {

using Points = Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>;

/// One quadrature sample of one element: F = sum_k x_k grad_k^T over the element's nodes.
struct PdSample {
  std::array<int, 8> nodes{};            ///< global vertex indices (the first `count` are used)
  int count = 0;                         ///< 4 (tetrahedron) or 8 (hexahedron)
  int body = 0;                          ///< the deformable body it belongs to
  Eigen::Matrix<double, 8, 3> grad;      ///< rows: d N_k / d X at the sample (rest coordinates)
  double volume = 0.0;                   ///< its share of the element's rest volume (weight times |J|)
  double w_corotated = 0.0;              ///< 2 mu volume per energy with the shear term |F - R|^2 (corotated,
                                         ///< corotated hyperelastic; 0: none)
  double w_volume = 0.0;                 ///< lambda volume (0 when the body has no volume energy)
  double mu_neohookean = 0.0;            ///< mu volume of the neo-Hookean energy (0: none)
  double lambda_neohookean = 0.0;        ///< lambda volume of the neo-Hookean energy
  double w_determinant = 0.0;            ///< lambda volume of the corotated hyperelastic's w/2 (J - 1)^2 (0: none)
  int muscle = -1;                       ///< the muscle its element belongs to (-1: none)
  Vec3 fiber = Vec3::Zero();             ///< the muscle's unit fibre direction m in rest coordinates
  double w_muscle = 0.0;                 ///< the muscle's stiffness times volume: energy w/2 (|F m| - a)^2
};

/// Elements of one body that contract together: each sample of them adds w/2 (|F m| - a)^2, a being the
/// muscle's activation (the fibre's target stretch: 1 rest, below 1 contraction), set before each step.
struct PdMuscle {
  std::string name;
  int body = 0;
  double stiffness = 0.0;    ///< Pa
  std::vector<int> samples;  ///< its samples (global indices)
};

/// The energies a body may combine (a mask): the PD energies "corotated" and "volume", the hyperelastic
/// neo-Hookean energy mu/2 (I1 - 3) - mu log J + lambda/2 (log J)^2, and the corotated hyperelastic energy
/// mu |F - R|^2 + lambda/2 (J - 1)^2 (its shear term a corotated PD energy, pd_corotated_hyperelastic.hpp),
/// minimised by the same solvers (their Hessians are not constant, so A only approximates them, with the weight
/// 2 mu + lambda).
enum PdEnergy { kCorotated = 1, kVolume = 2, kNeoHookean = 4, kCorotatedHyperelastic = 8 };

/// A body's material and where its vertices and samples sit.
struct PdBody {
  std::string name;
  int first_vertex = 0, vertex_count = 0;
  int first_sample = 0, sample_count = 0;
  int first_element = 0, element_count = 0;
  double youngs_modulus = 0.0, poisson_ratio = 0.0, density = 0.0;
  bool corotated = true, volume = false, neohookean = false, corotated_hyperelastic = false;
};

/// The static half space {x : normal . x >= offset} is free.
struct PdPlane {
  Vec3 normal = Vec3::UnitZ();
  double offset = 0.0;
};

/// A ball {x : |x - centre| <= radius}: its outside is free. Its centre may move between steps; its velocity
/// (linear at the centre, angular, world axes) is the motion friction sees during a step.
struct PdSphere {
  Vec3 centre = Vec3::Zero();
  double radius = 1.0;
  Vec3 linear = Vec3::Zero(), angular = Vec3::Zero();
};

/// A box of half extents `half` at the pose (rotation, position): its outside is free. Its pose may move
/// between steps; its velocity (linear at its position, angular, world axes) is the motion friction sees.
struct PdBox {
  Vec3 half = Vec3::Ones();
  Mat3 rotation = Mat3::Identity();
  Vec3 position = Vec3::Zero();
  Vec3 linear = Vec3::Zero(), angular = Vec3::Zero();
};

/// How a step minimises its incremental potential.
enum class PdMethod {
  Lbfgs = 0,           ///< L-BFGS with A^-1 as initial inverse Hessian (DiffPD), finished by Newton-CG if it stalls
  NewtonCg = 1,        ///< Newton, conjugate gradients on the true Hessian preconditioned by A^-1
  NewtonCholesky = 2,  ///< Newton, the assembled Hessian factorised at every iteration (sparse LDL^T): a baseline
};

struct PdOptions {
  /// a step stops when ||grad g|| on the free vertices <= tolerance * (||M (q - y)|| / dt^2 + ||grad E(q)||),
  /// the scale of the inertial and internal forces at the start; the adjoint when ||H z - b|| <= tolerance ||b||
  double tolerance = 1e-8;
  int max_iterations = 1000;  ///< quasi-Newton iterations of a step or an adjoint solve; more raise
  int history = 10;           ///< L-BFGS history length
  PdMethod method = PdMethod::Lbfgs;
  int threads = 1;            ///< threads of the per-element work (results do not depend on it)
  bool raise_on_failure = true;  ///< a step that does not converge throws; else it returns its last iterate
};

/// How the ground planes, balls and boxes hold the surface vertices.
enum class PdContactModel {
  Penalty = 0,          ///< the implicit penalty k/2 min(0, d)^2 (DiffPD's "planar_collision" vertex energy)
  Complementarity = 1,  ///< DiffPD's active set: a touching vertex is held on the obstacle (pd_complementarity.hpp)
};

struct PdModel {
  double dt = 1e-2;
  PdContactModel contact_model = PdContactModel::Penalty;
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
  double contact_stiffness = 1e4;  ///< penalty weight of a surface vertex below a plane, N/m
  double friction = 0.0;           ///< Coulomb coefficient mu of the planes (0: frictionless)
  double friction_velocity = 1e-3; ///< eps_v, m/s: slip slower than this is smoothly static
  PdOptions options;
  /// the helper threads of the per-element loops (pd_elements.hpp), made on first use for options.threads;
  /// copies of the model share them (a loop already running on them makes another one run alone)
  mutable std::shared_ptr<ThreadTeam> element_team;
  int n = 0;                       ///< vertices of every body
  std::vector<PdBody> bodies;
  std::vector<PdSample> samples;
  /// element e's samples are [element_start[e], element_start[e + 1]) (one for a tetrahedron, eight for a
  /// hexahedron), all on the same nodes
  std::vector<int> element_start{0};
  std::vector<PdMuscle> muscles;
  VecX activation;                 ///< (muscles) the activations of the next step or adjoint (the caller's input)
  VecX mass;                       ///< (n) lumped from the exact element mass integrals
  std::vector<char> fixed;         ///< (n) vertices held at their start position
  std::vector<char> surface;       ///< (n) vertices that may touch a plane
  std::vector<PdPlane> planes;
  std::vector<PdSphere> spheres;
  std::vector<int> free_index;     ///< (n) row of a vertex among the free ones, -1 if fixed
  int free_count = 0;

  /// Appends a body from rest vertices (n x 3) and elements (m x nodes, nodes 4 or 8, see pd_mesh.cpp for the
  /// hexahedron's node order). invalid_argument naming the element for an inverted or degenerate one.
  /// energies: a PdEnergy mask.
  int addBody(const std::string& name, const Points& rest, const Eigen::MatrixXi& elements, double youngs_modulus,
              double poisson_ratio, double density, int energies);
  /// Appends a muscle over elements of body b (indices into the body's elements) with unit fibre directions
  /// (one row per element, or one row for all) and stiffness > 0; its activation starts at 1 (rest length).
  /// invalid_argument naming the problem (an element already in a muscle, a zero fibre, ...).
  int addMuscle(const std::string& name, int b, const std::vector<int>& elements, const Points& fibers,
                double stiffness);
  /// Sets body b's density (> 0), scaling its vertices' masses.
  void setDensity(int b, double density);
  /// Sets muscle k's stiffness (> 0) and its samples' weights.
  void setMuscleStiffness(int k, double stiffness);
  /// Sets body b's material (validated) and its samples' weights.
  void setMaterial(int b, double youngs_modulus, double poisson_ratio);
  void updateFreeIndex();
  int elementCount() const { return static_cast<int>(element_start.size()) - 1; }

  std::vector<PdBox> boxes;

  /// Obstacles: the planes, then the spheres, then the boxes.
  int obstacleCount() const { return static_cast<int>(planes.size() + spheres.size() + boxes.size()); }
  /// Signed distance of x to obstacle o (negative inside), the outward unit normal there, and the curvature
  /// of the distance field (1 / |x - centre| for a sphere; 0 for a plane, and for a box where x is inside).
  double obstacleDistance(int o, const Vec3& x, Vec3* normal, double* curvature) const;

  /// Obstacle o's position (a sphere's centre, a box's origin; 0 for a plane) and velocity during a step (zero
  /// for a plane).
  void obstacleMotion(int o, Vec3* position, Vec3* linear, Vec3* angular) const;

  /// Whether obstacle o pushes by the penalty (every obstacle, unless the complementarity model holds vertices
  /// on them).
  bool penalised(int) const { return contact_model == PdContactModel::Penalty; }

  /// Calls visit(i, o, depth, normal, curvature) for every surface vertex i of x inside a penalised obstacle o
  /// (depth < 0: its signed distance), once per obstacle it is inside.
  template <typename Visit>
  void forEachPenetration(const Points& x, const Visit& visit) const {
    for (int i = 0; i < n; ++i) {
      if (!surface[i]) continue;
      for (int o = 0; o < obstacleCount(); ++o) {
        if (!penalised(o)) continue;
        Vec3 normal;
        double curvature;
        const double d = obstacleDistance(o, x.row(i).transpose(), &normal, &curvature);
        if (d < 0.0) visit(i, o, d, normal, curvature);
      }
    }
  }
};

/// The friction of a step, lagged: each free surface vertex inside an obstacle at the step's start q rubs on it
/// with the normal force lambda = k * depth(q), in the tangent plane of the normal there, relative to the
/// obstacle's material point under it, which the obstacle's velocity moves over the step (the reference).
struct PdFriction {
  std::vector<int> vertex;
  std::vector<int> obstacle;
  std::vector<Vec3> normal;
  std::vector<double> lambda;
  /// whether lambda is the penalty's k depth(q) (else the complementarity's start force, pd_complementarity.hpp)
  std::vector<char> penalty;
  std::vector<Vec3> reference;  ///< q_i + dt (v + w x (q_i - position))
  std::vector<Mat3> curvature;  ///< the distance field's Hessian at q_i (for the adjoint)
};

/// The side of an element's block in storage (a hexahedron's 3 x 8 dofs; a tetrahedron uses its top-left 12).
constexpr int kElementBlock = 24;

/// The Hessian of E at x as element blocks and penalty terms (pd_hessian.hpp).
struct PdHessian {
  /// element e's block, column-major, at blocks[e * kElementBlock^2] (rows 3 a + r: node a, axis r)
  std::vector<double> blocks;
  Points x;                    ///< where it was built (the penalty's terms are evaluated there)
  /// pdHessianProduct's per-element results (kept between products, which conjugate gradients repeat)
  mutable std::vector<double> products;
};

/// The complementarity contact's active set: (vertex, obstacle) pairs, each vertex held on its pair's plane,
/// normal . x_i = offset (a ground plane, or a ball's or box's tangent plane, pd_complementarity.hpp), and the
/// Schur complement that turns the PD matrix's factor into the inverse on that subspace.
struct PdActiveSet {
  std::vector<int> vertex, obstacle;
  std::vector<Vec3> normal;           ///< each pair's plane (pdHoldingPlane, from the step's start q, v)
  std::vector<double> offset;
  Eigen::MatrixXd columns;            ///< (free_count x pairs) L^-1 e_i for each pair's vertex i
  Eigen::LLT<Eigen::MatrixXd> schur;  ///< of S[a, b] = (n_a . n_b) (L^-1)[i_a, i_b]
  int stamp = -1;                     ///< the factorisation columns and schur were built with (-1: none)
  int size() const { return static_cast<int>(vertex.size()); }
  /// No pairs and nothing factorised (the storage is kept; schur is read only once factorised again).
  void clear() {
    vertex.clear();
    obstacle.clear();
    normal.clear();
    offset.clear();
    columns.resize(0, 0);
    stamp = -1;
  }
};

/// Each sample's F with its SVD (and volume projection), recorded by an energy evaluation for the Hessian built
/// next at the same point (a Newton iteration's gradient and Hessian, the adjoint's at the solution): each is
/// then computed once.
struct PdSampleCache {
  struct Entry {
    Mat3 F;
    Svd3 svd;
    bool has_volume = false;  ///< whether volume holds the volume projection of svd.sigma
    VolumeKkt volume;
  };
  std::vector<Entry> entries;  ///< per sample, in model order (each element's samples are written by one thread)
  /// sample k's entry if it was recorded for this very F (compared exactly), else null
  const Entry* find(std::size_t k, const Mat3& F) const {
    return k < entries.size() && entries[k].F == F ? &entries[k] : nullptr;
  }
};

/// Caches of a step at its solution x (for the adjoint) and the factorised global matrix.
struct PdData {
  PdFriction friction;
  PdActiveSet active;              ///< the complementarity contact's final active set of the step
  VecX active_forces;              ///< and its normal forces at the solution (pairs order; empty if unsettled)
  /// (n x 3) grad g at the start q, M (q - y) / dt^2 + grad E(q): its component along a plane's normal is the
  /// complementarity's normal force on a vertex touching it at the start (friction's lambda)
  Points start_gradient;
  PdHessian start_hessian;         ///< hess E at the start q (the adjoint of start_gradient)
  int factor_stamp = 0;            ///< counts pdFactorise's factorisations (the active set's columns follow it)
  int active_set_iterations = 0;   ///< the complementarity's active-set iterations of the last step
  bool active_set_cycled = false;  ///< its set came back to one it had held (not settled)
  bool settled = true;             ///< false if the last step converged on an active set that still changed
  Eigen::SimplicialLLT<Eigen::SparseMatrix<double>> factor;
  bool factor_valid = false;
  double factor_dt = 0.0;
  std::vector<char> factor_contacts;  ///< (n) vertices whose contact stiffness the factorised matrix holds
  std::vector<double> factor_diagonal;  ///< the factor L's diagonal, for pdSolve's substitutions
  Points x, q, y, f;               ///< the step's solution, start, inertial target and external forces
  Points v;                        ///< the step's start velocity (the complementarity's planes slide along it)
  PdHessian hessian;               ///< the last Newton iteration's or adjoint's Hessian (its storage is reused)
  PdSampleCache sample_cache;      ///< the SVDs of the step's last energy evaluation (for its Hessian)
  Points start_guess;              ///< (n x 3, or empty) one more starting point for the next step, used once
  int iterations = 0;
  bool converged = true;           ///< whether the step met its tolerance (see PdOptions::raise_on_failure)
  double residual = 0.0;           ///< final ||grad g|| / force_scale
  double force_scale = 0.0;        ///< ||M (q - y)|| / dt^2 + ||grad E(q)|| on the free vertices
  int contacts = 0;                ///< surface vertices below a plane at x
  double link_energy = 0.0;        ///< the links' contact energy (penalty and lagged friction) at the solution
  VecX grad_activation;            ///< (muscles) the last adjoint's cotangents of the activations
  VecX grad_muscle_stiffness;      ///< (muscles) and of the muscles' stiffnesses
  VecX grad_obstacles;             ///< (6 obstacles) and of the obstacles' poses (pdObstacleCotangents)
  VecX grad_density;               ///< (bodies) and of the bodies' densities
  double grad_contact_stiffness = 0.0, grad_friction = 0.0;  ///< and of the contact stiffness and mu
};

/// Lame parameters (mu, lambda) of (E, nu).
inline void lame(double youngs_modulus, double poisson_ratio, double* mu, double* lambda) {
  *mu = youngs_modulus / (2.0 * (1.0 + poisson_ratio));
  *lambda = youngs_modulus * poisson_ratio / ((1.0 + poisson_ratio) * (1.0 - 2.0 * poisson_ratio));
}

}  // namespace deformable
}  // namespace rigidiff
