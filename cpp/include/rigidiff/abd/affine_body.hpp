// Affine bodies (Affine Body Dynamics, Lan et al. 2022): a body's 12 coordinates q = (p, a1, a2, a3) hold
// the translation p and the three ROWS a_k of a 3 x 3 matrix A, and a point of rest (body) coordinates
// xbar sits at x = A xbar + p, i.e. x_k = p_k + a_k . xbar. The map is linear in q with the constant
// Jacobian J(xbar) = [I3 | I3 (x) xbar^T] (3 x 12), so the mass matrix M = int rho J^T J dV is constant:
// it needs only the solid's volume integrals, computed once from its closed surface mesh.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "rigidiff/collision/distance/distance_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

using AffineJacobian = Eigen::Matrix<double, 3, 12>;

/// Integrals over the solid bounded by a closed mesh, at unit density: volume V = int 1, first moment
/// int xbar (3), second moment int xbar xbar^T (3 x 3).
struct VolumeIntegrals {
  double volume = 0.0;
  Vec3 first = Vec3::Zero();
  Mat3 second = Mat3::Zero();
};

/// The volume integrals of the solid bounded by the triangles faces (m x 3 indices into points, n x 3),
/// by the divergence theorem: a sum over the tetrahedra (origin, face). Exact for any closed mesh; faces
/// wound counter-clockwise seen from outside give V > 0.
VolumeIntegrals meshVolumeIntegrals(const Vec3* points, int n, const std::array<int, 3>* faces, int m);

/// invalid_argument unless the faces close a surface: every index in [0, n), no degenerate face, and each
/// edge used by exactly two faces in opposite directions (a consistently oriented, closed 2-manifold).
void checkClosedMesh(int n, const std::array<int, 3>* faces, int m);

/// An affine body: its rest surface, material and the constants derived from them.
struct AffineBody {
  std::string name;
  std::vector<Vec3> rest;                  ///< surface vertices in body coordinates xbar
  std::vector<std::array<int, 3>> faces;   ///< outward (counter-clockwise) triangles
  std::vector<std::array<int, 2>> edges;   ///< each surface edge once (smaller index first)
  /// a closed, consistently wound surface: "inside" is defined (an affine body's always is; a link's surface
  /// may be open, and the intersection check then cannot test one body wholly inside it)
  bool closed = true;
  double density = 0.0;                    ///< kg / m^3
  double stiffness = 0.0;                  ///< kappa of the orthogonality energy, Pa
  VolumeIntegrals integrals;               ///< at unit density
  double mass = 0.0;                       ///< density * volume
  Mat12 mass_matrix = Mat12::Zero();       ///< int rho J^T J dV
  bool fixed = false;                      ///< a static participant: steps keep its coordinates where they are
};

/// The body of the closed mesh (points n x 3, faces m x 3, row-major) with the given density and
/// orthogonality stiffness. invalid_argument for density or stiffness <= 0 (or not finite), a non-finite
/// point, an open or inconsistently wound mesh, or an inverted one (volume <= 0).
AffineBody makeAffineBody(const std::string& name, const double* points, int n, const int* faces, int m,
                          double density, double stiffness);

/// The massless surface of a skeleton's link (points n x 3, faces m x 3, row-major): IPC's distances are
/// unsigned, so the mesh may be open, non-manifold or inconsistently wound, as robots' collision meshes often
/// are. Faces that repeat a vertex or have no area (a height below 1e-9 of their longest edge; their edges
/// belong to their neighbours or to no surface) are left out; `closed` says whether what is left is closed
/// and consistently wound. invalid_argument for an index outside [0, n), a non-finite point, or no face left.
AffineBody makeSurfaceBody(const std::string& name, const double* points, int n, const int* faces, int m);

/// The 12 x 12 mass matrix of density rho over the solid of integrals I: blocks (p, p) = m I3,
/// (p_k, a_k) = rho first^T, (a_k, a_k) = rho second, zero between different rows of A.
Mat12 affineMassMatrix(const VolumeIntegrals& integrals, double density);

/// x = A xbar + p for the body coordinates q (12).
inline Vec3 affinePoint(const double* q, const Vec3& xbar) {
  return Vec3(q[0] + q[3] * xbar[0] + q[4] * xbar[1] + q[5] * xbar[2],
              q[1] + q[6] * xbar[0] + q[7] * xbar[1] + q[8] * xbar[2],
              q[2] + q[9] * xbar[0] + q[10] * xbar[1] + q[11] * xbar[2]);
}

/// J(xbar) = dx/dq (3 x 12), the same for every q.
AffineJacobian affineJacobian(const Vec3& xbar);

/// The generalised force (12) of the uniform acceleration g on the body: J^T-integrated rho g, i.e.
/// m g on p and g_k rho first on a_k. Minus the gradient of the gravity potential.
Vec12 affineGravityForce(const AffineBody& body, const Vec3& g);

}  // namespace rigidiff
