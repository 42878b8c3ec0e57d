// The squared-distance primitives (collision/distance/) as seen by Cython: n configurations at once,
// each a row of the stacked point coordinates.
#pragma once

namespace rigidiff {
namespace bind {

/// Primitive codes, with the points of one configuration in brackets:
/// 0 point–point [p0, p1], 1 point–line [p, e0, e1], 2 point–edge [p, e0, e1], 3 point–plane [p, t0, t1, t2],
/// 4 point–triangle [p, t0, t1, t2], 5 line–line [ea0, ea1, eb0, eb1], 6 edge–edge [ea0, ea1, eb0, eb1],
/// 7 edge–edge mollifier [ea0, ea1, eb0, eb1] (eps_x per configuration), 8 mollifier threshold
/// [ea0, ea1, eb0, eb1].
constexpr int kPrimitiveCount = 9;
/// Points per configuration of a primitive (invalid_argument for an unknown code).
int primitivePointCount(int primitive);

/// points: n x 3K row-major (K = primitivePointCount). type: the distance type code of point–edge,
/// point–triangle and edge–edge (distance_types.hpp; its Auto code classifies), ignored otherwise.
/// eps_x: n thresholds for the mollifier, else unused (may be null). Writes value (n), and for order >= 1
/// gradient (n x 3K), for order 2 hessian (n x 3K x 3K). A configuration whose value is not finite (a
/// zero-length edge under point–line, parallel lines, a flat triangle) throws invalid_argument naming it.
void primitiveDistances(int primitive, int type, int n, const double* points, const double* eps_x, int order,
                        double* value, double* gradient, double* hessian);

/// Distance type codes (n) of point–edge (2), point–triangle (4) or edge–edge (6) configurations.
void primitiveDistanceTypes(int primitive, int n, const double* points, int* types);

}  // namespace bind
}  // namespace rigidiff
