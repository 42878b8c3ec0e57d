// Which closed form realises a point–edge, point–triangle or edge–edge squared distance, and the
// fixed-size vectors and matrices their derivatives live in. The codes are those of IPC Toolkit, so the
// two libraries' classifications compare one to one.
#pragma once

#include <Eigen/Core>

namespace rigidiff {

using Vec9 = Eigen::Matrix<double, 9, 1>;
using Vec12 = Eigen::Matrix<double, 12, 1>;
using Mat9 = Eigen::Matrix<double, 9, 9>;
using Mat12 = Eigen::Matrix<double, 12, 12>;

/// Point p against edge (e0, e1): the closest point is e0, e1, or inside the edge (point–line).
enum class PointEdgeDistanceType { P_E0 = 0, P_E1 = 1, P_E = 2, Auto = 3 };

/// Point p against triangle (t0, t1, t2): a vertex, an edge (E0 = t0t1, E1 = t1t2, E2 = t2t0) or the
/// inside of the face (point–plane).
enum class PointTriangleDistanceType { P_T0 = 0, P_T1 = 1, P_T2 = 2, P_E0 = 3, P_E1 = 4, P_E2 = 5, P_T = 6, Auto = 7 };

/// Edge A = (ea0, ea1) against edge B = (eb0, eb1): a vertex of each (EA0_EB1: ea0 against eb1), a
/// vertex against the other edge (EA_EB0: eb0 against edge A, EA1_EB: ea1 against edge B), or the two
/// insides (line–line).
enum class EdgeEdgeDistanceType {
  EA0_EB0 = 0,
  EA0_EB1 = 1,
  EA1_EB0 = 2,
  EA1_EB1 = 3,
  EA_EB0 = 4,
  EA_EB1 = 5,
  EA0_EB = 6,
  EA1_EB = 7,
  EA_EB = 8,
  Auto = 9
};

}  // namespace rigidiff
