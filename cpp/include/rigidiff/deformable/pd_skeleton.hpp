// Articulated skeletons in a Projective Dynamics world (docs/deformable.md, "Robots"): their links' collision
// shapes (spheres, boxes, capsules, convex hulls: pd_hull.hpp) push the surface vertices of the deformable bodies
// with the same penalty k/2 d^2 as the obstacles and rub on them with the same lagged friction, two-way: one
// implicit-Euler incremental potential over (free vertices x, joint coordinates s) is minimised at once,
//   G(x, s) = g(x) + S(s) + C(x, s),
//   S(s) = 1/2 u^T M(s0) u / h^2 - tau_c^T ds + b(s0, u0)^T ds + 1/(2h) ds^T D ds + 1/2 (s - s_r)^T K (s - s_r)
//          + k_l/2 sum (min(0, s - s_lo)^2 + min(0, s_hi - s)^2)   (the joint-limit penalty, when enabled),
// with g the deformable bodies' potential (pd_step.hpp), ds = s - s0, u = ds - h u0 (s0, u0 the joints' start
// coordinates and velocities), tau_c the joint forces clipped to the effort limits, b the bias forces (gravity
// included), D, K the joints' damping and stiffness about the rest position s_r: the articulated incremental
// potential of the barrier world (world/barrier_articulated.hpp) divided by h^2, so that it is an energy like
// g. Vector-space joints (revolute, prismatic, translational; universal ones are two revolutes) have ds/dt = u and
// ds = s - s0. Free and ball joints (floating bases) are stepped as the barrier world steps them
// (world/floating_base_chart.hpp; docs/deformable.md, "Floating bases"): the joints' unknown is then the
// displacement ds in the time step's chart at s0 (a free joint's origin moves by R0 ds_lin, its frame turns by
// exp3(ds_ang)), s = s0 (+) ds, the spring's offset is difference(s_r, s0), u0 takes the lcp step's frame turn
// (w x u on a free joint's linear velocity) and the new velocity is ds / h re-expressed as the lcp step does.
// Planar joints likewise, as a free joint confined to its plane (docs/deformable.md, "Planar joints"): x moves by
// R(theta0) ds_xy, theta by ds_w; their limits' penalty on x, y and theta is taken in the tangent at s.
// C holds the link contacts (with the surface vertices, the obstacles, and each other: pd_link_links.cpp); in a
// complementarity world the vertices are held on the links instead (pd_link_holding.hpp). Their
// Hessian is exact (the second derivatives of the links' poses included), so the adjoint of the step is exact too.
#pragma once

#include <array>
#include <functional>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "rigidiff/deformable/pd_step.hpp"
#include "rigidiff/multibody/data.hpp"
#include "rigidiff/multibody/model.hpp"

namespace rigidiff {
namespace deformable {

/// The kinds of collision shape a link may carry (a hull: a convex polytope, pd_hull.hpp).
enum class PdShapeKind { Sphere = 0, Box = 1, Capsule = 2, Hull = 3 };

struct PdHull;

/// A link's collision shape: its pose in the frame of the joint that moves it (0: welded to the world, a static
/// shape that touches the other links alone, not the vertices nor the obstacles) and its size (a sphere: radius;
/// a box: half extents; a capsule: radius and half the length of its axis, which is the local z axis; a hull:
/// unused, its polytope is `hull`, in the shape's frame). Shapes of different groups (skeletons) touch each
/// other; two of one group only with its self_collision on, on different links neither of which is the other's
/// parent link (parent_joint: the joint carrying the link's parent link, 0 the world): linkShapesPair.
struct PdLinkShape {
  int joint = 1;
  PdShapeKind kind = PdShapeKind::Sphere;
  SE3 placement;
  Vec3 size = Vec3::Ones();
  std::shared_ptr<const PdHull> hull;
  int group = 0, parent_joint = 0;
  bool self_collision = false;
};

/// The skeletons of a projective world: one multibody model of all of them (their coordinates after the
/// vertices in q and v) and their links' shapes. With joint_limits, each joint coordinate beyond its position
/// limit adds the penalty limit_stiffness/2 (gap)^2 to the step's potential (pd_joint_limits.cpp).
struct PdSkeletons {
  Model model;
  std::vector<PdLinkShape> shapes;
  bool rotations = false;  ///< a free, ball or planar joint: the unknown is the displacement ds (pd_floating_base.cpp)
  bool joint_limits = false;
  double limit_stiffness = 1e4;
  int nv() const { return model.nv; }
};

/// One vertex's contact with a link shape, at given joint coordinates: the signed distance d (< 0 inside), the
/// outward normal n and the distance field's Hessian (world frame), the joint's pose, and the point Jacobian
/// J (3 x nv: the velocity of the link's material point at the vertex per joint velocity) with the links'
/// angular Jacobian W (3 x nv), zero outside the shape's chain.
struct PdLinkContact {
  int vertex = 0, shape = 0;
  double d = 0.0;
  Vec3 normal = Vec3::UnitZ();
  Mat3 curvature = Mat3::Zero();
  MatX J, W;
};

/// Lagged friction of a vertex inside a link shape at the step's start: normal force lambda = k depth, the
/// normal there, and the link's material point under the vertex (in the joint frame) that the slip follows.
struct PdLinkFriction {
  int vertex = 0, shape = 0;
  double lambda = 0.0;
  Vec3 normal = Vec3::UnitZ();
  Mat3 curvature = Mat3::Zero();  ///< the distance field's Hessian at the start, for the adjoint
  Vec3 local = Vec3::Zero();
  Mat3 rotation0 = Mat3::Identity();  ///< the joint's rotation at the start
  MatX J0, W0;                    ///< the start's point and angular Jacobians at the vertex, for the adjoint
  bool held = false;              ///< a complementarity hold's (lambda: the start's push, pd_link_holding.hpp)
};

/// One vertex's block of the coupling Hessian: rows and columns (x_i, s).
struct PdCouplingBlock {
  int vertex = 0;
  Mat3 xx = Mat3::Zero();
  MatX xs;  ///< 3 x nv
};

/// Lagged friction of a link shape inside an obstacle at the step's start (pd_link_obstacles.cpp): the normal
/// force lambda = k depth, the normal, the link's material point at the contact (in the joint frame) and the
/// obstacle's material point there at the end of the step (`reference`: it moves with the obstacle's velocity).
/// `lagged` holds their derivatives (rows: lambda, normal, local, reference) along the start's link twist (world
/// axes, linear at the origin, then angular) and the obstacle's translation and rotation about its position (12
/// columns); jv0 and w0 map the joints' velocities to that link twist at the start (3 x nv each), for the adjoint.
struct PdLinkObstacleFriction {
  int shape = 0, obstacle = 0;
  double lambda = 0.0;
  Vec3 normal = Vec3::UnitZ(), local = Vec3::Zero(), reference = Vec3::Zero();
  Eigen::Matrix<double, 10, 12> lagged;
  MatX jv0, w0;
};

/// Lagged friction of a probe of link a's shape inside link b's at the step's start (pd_link_links.cpp): the
/// normal force lambda = k depth, the normal, and the contact point (link a's surface point there) as a material
/// point of each link (local_a, local_b in their joints' frames): the slip is the tangential part of
/// p_a(s) - p_b(s). `lagged` holds their derivatives (rows: lambda, normal, local_a, local_b) along the start's
/// twists of a's and then b's link (world axes, linear at the origin then angular: 12 columns); jv_a, w_a, jv_b,
/// w_b map the joints' velocities to those twists at the start (3 x nv each), for the adjoint.
struct PdLinkLinkFriction {
  int joint_a = 0, joint_b = 0;
  double lambda = 0.0;
  Vec3 normal = Vec3::UnitZ(), local_a = Vec3::Zero(), local_b = Vec3::Zero();
  Eigen::Matrix<double, 10, 12> lagged;
  MatX jv_a, w_a, jv_b, w_b;
};

/// The lagged slip of a friction contact of a point x against the material point local of a link posed by pose,
/// and the mollifier f0 of pd_friction.cpp with its derivatives (pd_link_contact.cpp).
struct LinkSlip {
  Vec3 u, r, phi;  // the slip in the tangent plane, x - phi, the material point
  double y = 0.0, f0 = 0.0, f1_y = 0.0, c2 = 0.0;
};
LinkSlip linkSlip(const PdModel& model, const Vec3& normal, const Vec3& local, const SE3& pose, const Vec3& x);

/// Scratch and caches of a coupled step (the multibody Data, the step's constants, the solution's Hessian).
/// The complementarity contact's vertices held on links (pd_link_holding.hpp): pair p holds vertex[p] on the plane
/// normal[p] . x - coupling[p] . ds = offset[p] tangent to link shape shape[p] at the start, which moves with the
/// link's displacement ds (to first order: coupling = J(s0)^T n). With data.active's pairs (the obstacles'), they
/// make the step's constraints E^T z = e (E's column p: n at the vertex's rows, -coupling at the joints'), whose
/// Euclidean projector and inverse of blockdiag(A, joints' block) on E^T z = 0 are built here.
struct PdLinkHolds {
  bool enabled = false;  ///< a complementarity world (linkHoldingEnabled)
  std::vector<int> vertex, shape;
  std::vector<Vec3> normal;
  std::vector<double> offset;
  std::vector<VecX> coupling;  ///< nv each
  VecX forces;                 ///< the normal forces at the last solution (pairs order)
  // every constraint of the step: data.active's pairs then these (rebuilt by linkHoldsFactorise)
  std::vector<int> all_vertex;
  std::vector<Vec3> all_normal;
  MatX all_coupling;                   ///< nv x pairs (zero columns for the obstacles')
  Eigen::LDLT<MatX> gram;              ///< of E^T E
  MatX columns, joint_columns;         ///< A^-1's (free_count x pairs: L^-1 e_i) and the joints' block^-1 G
  Eigen::LDLT<MatX> schur;             ///< of E^T blockdiag(A, joints' block)^-1 E
  int size() const { return static_cast<int>(vertex.size()); }
  void clear() {
    vertex.clear(), shape.clear(), normal.clear(), offset.clear(), coupling.clear();
    forces.resize(0);
  }
};

struct PdSkeletonData {
  explicit PdSkeletonData(const Model& model) : data(model) {}
  Data data;
  VecX s0, u0, tau, tau_c, s;       ///< the joints' start (nq), velocity, forces (given, clipped), solution (nq)
  VecX u_step;                      ///< u0 with free joints' frame turn (u0 without free joints)
  VecX spring0;                     ///< the springs' offset at the start: difference(s_r, s0)
  VecX ds;                          ///< the solution's displacement from s0 (nv; s - s0 for vector-space joints)
  MatX M;                           ///< M(s0)
  VecX bias;                        ///< b(s0, u0), gravity included
  std::vector<PdLinkFriction> friction;
  std::vector<PdLinkObstacleFriction> obstacle_friction;
  std::vector<PdLinkLinkFriction> link_friction;
  std::vector<PdCouplingBlock> blocks;  ///< the coupling Hessian at the last iterate (or solution)
  MatX hss;                         ///< the joints' block of the Hessian, the skeletons' own terms included
  Eigen::LLT<MatX> preconditioner;  ///< of the joints' Gauss-Newton block
  VecX start_guess;                 ///< (nv, or empty) the joints' part of a caller's guess, used once
  VecX grad_tau;                    ///< the last adjoint's cotangent of the joint forces
  /// The last adjoint's cotangents of the skeletons' own parameters: the inertial parameters of each joint's
  /// merged body (10 (njoints - 1), as regressor.hpp's inertiaParameters), the joints' damping, stiffness and
  /// armature (nv each) and the joint-limit stiffness.
  VecX grad_inertia, grad_damping, grad_stiffness, grad_armature;
  double grad_limit_stiffness = 0.0;
  int contacts = 0;                 ///< link contacts at the solution
  PdLinkHolds holds;
};

/// The joint-limit penalty of pd_skeleton.hpp at the joint coordinates s (0 unless sk.joint_limits): its energy,
/// its gradient added to g and its Hessian to hss when given, both in the tangent at s (the chain chart: a planar
/// joint's x and y move by R(theta) delta_xy, so its (x, y) block is turned; every other block is diagonal).
double jointLimitPenalty(const PdSkeletons& sk, const VecX& s, VecX* g, MatX* hss);
/// The same in the step's unknown at the displacement ds (s = s0 (+) ds): with free, ball or planar joints A^T g and
/// A^T H A (A = displacementInverseJacobian(ds); exact, the map being affine on the joints that have limits).
double jointLimitPenaltyInStep(const PdSkeletons& sk, const VecX& s, const VecX& ds, VecX* g, MatX* hss);

/// For the adjoint ws (nv) of the coupled step in ad (its s0, u0, s): the cotangents -ws^T d(grad G)/d(theta) of
/// the skeletons' own parameters into ad.grad_inertia, grad_damping, grad_stiffness, grad_armature and
/// grad_limit_stiffness (pd_skeleton_parameters.cpp). Overwrites the kinematics in ad.data.
void pdSkeletonParameterCotangents(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const VecX& ws);

/// invalid_argument naming the joint unless every joint is revolute, prismatic, translational, free, ball or planar.
void checkSkeletonJoints(const Model& model);

/// The joints' unknown t of a step (nv) as a configuration: moveState(s0, t) (integrate(s0, t, Motion::Step), planar
/// joints on R^2 x SO(2)) with free, ball or planar joints, t itself otherwise (pd_floating_base.cpp).
VecX pdSkeletonConfiguration(const PdSkeletons& sk, const VecX& s0, const VecX& t);
/// The joints' unknown t as the displacement ds from s0 (t with free, ball or planar joints, t - s0 otherwise).
VecX pdSkeletonDisplacement(const PdSkeletons& sk, const VecX& s0, const VecX& t);

/// The signed distance of the point p (box frame) to a box of half extents `half` centred at the origin, with the
/// outward normal and the distance field's Hessian (zero inside, where the field is the nearest face's plane).
double boxDistance(const Vec3& half, const Vec3& p, Vec3* normal, Mat3* curvature);

/// The chain's point (v_c + w_c x x) and angular (w_c) Jacobian columns (3 x nv each) of joint j's link at the
/// world point x, from the joint Jacobians in data.
void chainJacobians(const Model& model, const Data& data, int j, const Vec3& x, MatX& J, MatX& W);

/// out(i, j) += scale n . (w_j x a_i) for i <= j (i an ancestor: the lower dof index), or scale n . (w_i x a_j)
/// when ancestor_turns, symmetrised: the terms of the Hessian that the links' turning brings (A = J).
void addTurningTerms(const MatX& A, const MatX& W, const Vec3& n, double scale, bool ancestor_turns, MatX& out);

/// The lagged friction term mu lambda f0(|P (x - p(s))|) of a point x against the material point p = pose local
/// of joint j's link (P = I - n n^T, n the lagged normal), at the kinematics in data: its energy, its gradient
/// added to gx (3) and gs (nv) when given, and when hss is given its Hessian (the joints' block added to hss, the
/// point's blocks into block when given).
double linkFrictionTerm(const PdModel& model, const PdSkeletons& sk, const Data& data, int j, const Vec3& local,
                        const Vec3& normal, double lambda, const Vec3& x, Vec3* gx, VecX* gs, MatX* hss,
                        PdCouplingBlock* block);

/// The derivatives of w^T grad(term) for linkFrictionTerm's term and the adjoint (zx on the point x, ws on the
/// joints): with respect to the lagged lambda, normal and material point (joint frame), and to x; per_mu is the
/// cotangent of the friction coefficient, -w^T d(grad term)/d(mu).
struct LinkFrictionCotangent {
  double per_mu = 0.0, lambda = 0.0;
  Vec3 normal = Vec3::Zero(), local = Vec3::Zero(), point = Vec3::Zero();
};
LinkFrictionCotangent linkFrictionCotangent(const PdModel& model, const PdSkeletons& sk, const Data& data, int j,
                                            const Vec3& local, const Vec3& normal, double lambda, const Vec3& x,
                                            const Vec3& zx, const VecX& ws);

/// The link shapes against the obstacles (pd_link_obstacles.cpp): C_o(s) = sum k/2 d^2 over the link points
/// inside a plane or a box and the balls inside a link shape at the joint coordinates whose kinematics ad.data
/// holds, plus the lagged friction of ad.obstacle_friction; its gradient added to gs and its Hessian to hss when
/// given. Returns the energy; contacts (if not null) receives the number of penetrating pairs.
double linkObstacleCoupling(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, VecX* gs, MatX* hss,
                            int* contacts = nullptr);

/// The lagged friction of the link shapes on the obstacles at the start s0 (its kinematics computed into ad.data)
/// into ad.obstacle_friction (none without friction unless always).
void linkObstacleFrictionContacts(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const VecX& s0,
                                  bool always);

/// For the adjoint ws (nv) of the step whose solution's kinematics ad.data holds: adds the cotangents of the start's
/// joints (gs0) and the obstacles' poses (grad_obstacles, 6 per obstacle) through the link-obstacle penalty and the
/// lagged friction of `lagged` (built with always = true), and returns (the contact stiffness's, mu's) cotangents.
std::pair<double, double> linkObstacleCotangents(const PdModel& model, const PdSkeletons& sk, const PdSkeletonData& ad,
                                                 const PdSkeletonData& lagged, const VecX& ws, VecX& gs0,
                                                 VecX& grad_obstacles);

/// A contact term on four material points (pd_link_edges.cpp): the ends of an edge of link a's shape (x0, x1) and of
/// link b's or a box obstacle's (x2, x3; joint 0) whose lines' closest points are interior to both edges; d < 0 the
/// lines' signed distance minus the radii, with its gradient g and Hessian H over the four world points, a's
/// closest-point parameter t_a and radius, and the unit normal n (from b to a).
struct PdEdgeTerm {
  std::array<int, 4> joints{};
  int shape_a = 0, obstacle = -1;
  std::array<Vec3, 4> x;
  double d = 0.0, t_a = 0.0, radius_a = 0.0;
  Vec3 n = Vec3::UnitZ();
  Eigen::Matrix<double, 12, 1> g;
  Eigen::Matrix<double, 12, 12> H;
};
/// An edge of a shape: its ends and its two faces' outward normals (zero for a capsule's axis).
struct PdShapeEdge {
  Vec3 p0, p1, f0, f1;
};
/// A box's 12 edges (its frame).
std::vector<PdShapeEdge> boxEdges(const Vec3& half);
/// A link shape's edges in its joint's frame: a box's 12, a hull's sharp ones, a capsule's axis; none for a sphere.
std::vector<PdShapeEdge> linkShapeEdges(const PdLinkShape& shape);
/// The edge crossings of link shapes a and b at the kinematics in data (pd_link_edges.cpp's rule) into out.
void linkEdgeCrossings(const PdSkeletons& sk, const Data& data, int a, int b, std::vector<PdEdgeTerm>& out);
/// The edge crossings of link shape `shape` and box obstacle `obstacle` (model's obstacle index) into out.
void boxEdgeCrossings(const PdModel& model, const PdSkeletons& sk, const Data& data, int shape, int obstacle,
                      std::vector<PdEdgeTerm>& out);
/// k/2 d^2's gradient added to gs and Hessian to hss (exact, the points' turning included), when given.
void addEdgeTerm(const PdSkeletons& sk, const Data& data, const PdEdgeTerm& t, double k, VecX* gs, MatX* hss);
/// The four points' motions J_i ws (12).
Eigen::Matrix<double, 12, 1> edgeTermMotion(const PdSkeletons& sk, const Data& data, const PdEdgeTerm& t,
                                            const VecX& ws);
/// The derivatives of d, n and the contact point (a's surface point over the crossing) along the points' motion dx.
struct EdgeTermLagged {
  double d = 0.0;
  Vec3 n, p0;
};
EdgeTermLagged edgeTermLagged(const PdEdgeTerm& t, const Eigen::Matrix<double, 12, 1>& dx);
/// a's surface point over the crossing: its friction contact point.
Vec3 edgeTermContact(const PdEdgeTerm& t);
/// The derivatives of a contact's depth d, normal n and contact point p0 along basis direction e (twistBasis).
using ContactDerivative = std::function<void(int e, double* dd, Vec3* dn, Vec3* dp0)>;
/// The lagged friction of a contact between links a and b (joints) at the kinematics in data: depth d < 0, normal
/// n, contact point p0, lambda = -k d; its lagged rows from `derivative` along a's and b's twists.
PdLinkLinkFriction linkLinkFrictionAt(const PdSkeletons& sk, const Data& data, int joint_a, int joint_b, double k,
                                      double d, const Vec3& n, const Vec3& p0, const ContactDerivative& derivative);
/// The lagged friction of a links' term at the step's start, lambda = -k d.
PdLinkLinkFriction edgeTermFriction(const PdSkeletons& sk, const Data& data, const PdEdgeTerm& t, double k);

/// The radius of a ball about the shape frame's origin that holds the shape.
double linkShapeBoundingRadius(const PdLinkShape& shape);

/// Whether two link shapes touch each other (PdLinkShape's rule, the barrier world's).
bool linkShapesPair(const PdLinkShape& a, const PdLinkShape& b);

/// A shape's probe points in its joint's frame with their radius (pd_link_obstacles.cpp, pd_link_links.cpp): a
/// sphere's centre (its radius), a capsule's two end-sphere centres (its radius), a box's or a hull's corners (0).
std::vector<Vec3> linkProbePoints(const PdLinkShape& shape, double* radius);

/// Basis direction e (0..11) of the perturbations of two rigid motions (v1, w1, v2, w2): each a twist in world axes
/// (linear at the origin, then angular), or an obstacle's translation and rotation about its position.
std::array<Vec3, 4> twistBasis(int e);

/// Corner c (0..7: the bits of c pick + or - along x, y, z) of a box of half extents `half` centred at the origin.
Vec3 boxCorner(const Vec3& half, int c);

/// The link shapes against each other (pd_link_links.cpp): C_l(s) = sum k/2 d^2 over the probes inside another
/// link's shape that pairs with theirs, plus the lagged friction of ad.link_friction, at the kinematics (and joint
/// Jacobians) in ad.data; its gradient added to gs and its Hessian to hss when given. Returns the energy; contacts
/// (if not null) receives the number of penetrating probes.
double linkLinkCoupling(const PdModel& model, const PdSkeletons& sk, const PdSkeletonData& ad, VecX* gs, MatX* hss,
                        int* contacts = nullptr);

/// The lagged friction of the link shapes on each other at the start s0 (its kinematics computed into ad.data) into
/// ad.link_friction (none without friction unless always).
void linkLinkFrictionContacts(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const VecX& s0,
                              bool always);

/// For the adjoint ws (nv, in the chain chart) of the step whose solution's kinematics ad.data holds: adds the
/// cotangents of the start's joints (gs0) through the link-link friction of `lagged` (built with always = true) and
/// returns (the contact stiffness's, mu's) cotangents of linkLinkCoupling's terms.
std::pair<double, double> linkLinkCotangents(const PdModel& model, const PdSkeletons& sk, const PdSkeletonData& ad,
                                             const PdSkeletonData& lagged, const VecX& ws, VecX& gs0);

/// Signed distance of the world point x to shape k of the skeletons posed by the kinematics in data (oMi), with
/// the outward normal and the distance field's Hessian (world frame). A distance of at least `reach` may be
/// reported as any value >= reach without its normal and Hessian (a hull's far points skip the exact search).
double linkShapeDistance(const PdSkeletons& sk, const Data& data, int k, const Vec3& x, Vec3* normal, Mat3* curvature,
                         double reach = std::numeric_limits<double>::infinity());

/// Every contact of a free surface vertex of X (n x 3) inside a link shape at the joint coordinates s, with
/// point Jacobians (computes the kinematics and joint Jacobians at s into ad.data).
void linkContacts(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& X, const VecX& s,
                  std::vector<PdLinkContact>& out);

/// The lagged friction contacts of the step from (q, s0) into ad.friction (none without friction unless always).
void linkFrictionContacts(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& q,
                          const VecX& s0, bool always);

/// C(x, s): the link penalty and friction of the step in ad (its friction contacts), with its gradient added to
/// gx (n x 3) and gs (nv) when given, and its Hessian blocks (ad.blocks; the joints' part added to hss) when
/// hessian is true.
double linkCoupling(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& X, const VecX& s,
                    Points* gx, VecX* gs, MatX* hss, bool hessian);

/// For the adjoint (Z: n x 3, ws: nv) of the step whose solution is (X, s) and whose friction contacts are
/// ad.friction (all of them, built with always = true): adds the cotangents of the start's vertices (gq, n x 3)
/// and joints (gs0, nv) through the friction's normal forces, normals and material points, and returns
/// -Z^T d(grad C)/d(mu), the cotangent of the friction coefficient. Needs the kinematics at s in ad.data.
double linkFrictionCotangents(const PdModel& model, const PdSkeletons& sk, const PdSkeletonData& ad, const Points& X,
                              const Points& Z, const VecX& ws, Points& gq, VecX& gs0);

/// The Hessian of G at (X, t) over the stacked vector (the free vertices stacked as in pdSolve, then the joints'
/// unknown t: s, or the displacement ds with free or ball joints, where the link contacts' terms are carried into
/// ds by chainChartHessianToDisplacement): the
/// deformable part into data.hessian, the coupling blocks into ad.blocks, the joints' block into ad.hss, and the
/// preconditioner of its products, blockdiag(A^-1, the joints' block^-1) (their own terms M / h^2 + D / h + K
/// where the whole is not positive definite).
void pdSkeletonHessianBuild(const PdModel& model, PdData& data, const PdSkeletons& sk, PdSkeletonData& ad,
                            const Points& X, const VecX& t);
/// The product of the Hessian last built with zv (3 free_count + nv), its vertex part projected off the
/// complementarity's held normals if `project`; Z is n x 3 scratch.
VecX pdSkeletonHessianProduct(const PdModel& model, const PdData& data, const PdSkeletonData& ad, const VecX& zv,
                              Points& Z, bool project = true);
/// The preconditioner applied to g (3 free_count + nv): the constrained A^-1 on the vertices.
VecX pdSkeletonPrecondition(const PdModel& model, const PdData& data, const PdSkeletonData& ad, const VecX& g);

/// The step's constants of the joints from their start (ad.s0, ad.u0): ad.u_step and ad.spring0; with free or ball
/// joints, invalid_argument for a quaternion of s0 off unit norm or a predicted turn h |w| of pi or more.
void pdSkeletonStart(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad);

/// With free or ball joints, for the adjoint (Z: n x 3, ws: nv in ds) of the step whose solution ad holds (X its
/// vertices): adds to gs0 (the start's joints, in the tangent at s0) what s0 gives through s = s0 (+) ds at a
/// fixed ds: the link contacts' second derivatives across s (their chain-chart Hessian and the curvature of the
/// step's charts) and the output s' itself (its cotangent gs_next). Overwrites ad.blocks and the kinematics in
/// ad.data (pd_floating_base_vjp.cpp).
void pdFloatingStartCotangents(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& X,
                               const Points& Z, const VecX& ws, const VecX& gs_next, VecX& gs0);

/// One coupled step from the vertices (q, v, f: n x 3) and the joints (s0: nq, u0, tau: nv) into (q', v', s', u').
void pdSkeletonStep(const PdModel& model, PdData& data, const PdSkeletons& sk, PdSkeletonData& ad, const Points& q,
                    const Points& v, const Points& f, const VecX& s0, const VecX& u0, const VecX& tau, Points& q_next,
                    Points& v_next, VecX& s_next, VecX& u_next);

/// The adjoint of the coupled step just taken: the cotangents of the vertices (gq, gv, gf), the joints (gs,
/// gu; the joint forces' in ad.grad_tau) and the parameters (gE, gnu and data's) from those of the next state.
void pdSkeletonStepVjp(const PdModel& model, PdData& data, const PdSkeletons& sk, PdSkeletonData& ad,
                       const Points& gq_next, const Points& gv_next, const VecX& gs_next, const VecX& gu_next,
                       Points& gq, Points& gv, Points& gf, VecX& gs, VecX& gu, VecX& gE, VecX& gnu);

/// The cotangents of a step's inputs and parameters for the adjoint Z (n x 3, zero on fixed vertices) of its
/// solution in data, b (n x 3) the cotangent of x' (b = dL/dq' + dL/dv' / h): what pdStepVjp computes after its
/// solve, shared with the coupled step.
void pdStepCotangents(const PdModel& model, PdData& data, const Points& Z, const Points& b, const Points& gv_next,
                      Points& gq, Points& gv, Points& gf, VecX& gE, VecX& gnu);

}  // namespace deformable
}  // namespace rigidiff
