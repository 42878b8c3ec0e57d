"""Derivatives of a feature contact with respect to the world points of its features' stencils, the form the
contact layer chains through each side's point map (a link's twist, a particle's translation): against
central differences that move every point on its own (stretching and shearing the stencils, which no rigid
motion does), and against IPC Toolkit's distance gradients for the pairs it has."""

import ipctk
import numpy as np
import pytest

from feature_cases import (CIRCLE, EDGE_CUT, FACE, PAIRS, POINT, SEGMENT, circle_contact, edge_cut_contact,
                           random_contact, unit)
from rigidiff import _testing

RTOL = 1e-8  # of the largest entry of each block
IDENTITY = np.concatenate([np.eye(3).ravel(), np.zeros(3)])


def point_derivatives(c):
    """(point, normal, distance, points_a, points_b, dpoint, dnormal, ddistance) of contact c."""
    return _testing.feature_point_derivatives(c["kind_a"], c["p_a"], c["d_a"], c["margin_a"], c["pose_a"],
                                              c["kind_b"], c["p_b"], c["d_b"], c["margin_b"], c["pose_b"],
                                              c["fallback"], c.get("radius_a", 0.0), c.get("angle_a", 0.0),
                                              c.get("side_p", np.zeros(3)), c.get("side_n", np.array([1.0, 0, 0])))


def feature_from_points(kind, x):
    """(p, d) of a feature in world axes from its stencil points x (k, 3), and the side plane it carries."""
    if kind == POINT:
        return x[0], np.array([0.0, 0.0, 1.0]), None
    if kind in (SEGMENT, EDGE_CUT, CIRCLE):
        return x[0], unit(x[1] - x[0]), None
    normal = unit(np.cross(x[1] - x[0], x[2] - x[0]))
    side = (x[3], unit(np.cross(x[4] - x[3], x[5] - x[3]))) if len(x) == 6 else None
    return x[0], normal, side


def values_at(c, points_a, points_b):
    """(point, normal, distance) of contact c with its features carried by the given world points."""
    p_a, d_a, side_a = feature_from_points(c["kind_a"], points_a)
    p_b, d_b, side_b = feature_from_points(c["kind_b"], points_b)
    side = side_a or side_b or (np.zeros(3), np.array([1.0, 0.0, 0.0]))
    point, normal, distance, *_ = _testing.feature_derivatives(
        c["kind_a"], p_a, d_a, c["margin_a"], IDENTITY, c["kind_b"], p_b, d_b, c["margin_b"], IDENTITY,
        c["fallback"], c.get("radius_a", 0.0), c.get("angle_a", 0.0), side[0], side[1])
    return np.concatenate([point, normal, [distance]])


def finite_differences(c, points_a, points_b, h=1e-5):
    """(7 x 3 (na + nb)) central differences, one point coordinate at a time, with one Richardson step."""
    x = np.vstack([points_a, points_b]).ravel()
    na = len(points_a)

    def at(y):
        y = y.reshape(-1, 3)
        return values_at(c, y[:na], y[na:])

    J = np.empty((7, x.size))
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = h
        d_h = (at(x + e) - at(x - e)) / (2.0 * h)
        d_h2 = (at(x + e / 2) - at(x - e / 2)) / h
        J[:, j] = (4.0 * d_h2 - d_h) / 3.0
    return J


def check_against_differences(c):
    point, normal, distance, xa, xb, dpoint, dnormal, ddistance = point_derivatives(c)
    # the stencils carry the contact: evaluated from their points alone, it is the same
    np.testing.assert_allclose(values_at(c, xa, xb), np.concatenate([point, normal, [distance]]), atol=1e-12)
    J, Jfd = np.vstack([dpoint, dnormal, ddistance[None, :]]), finite_differences(c, xa, xb)
    for rows, name in ((slice(0, 3), "point"), (slice(3, 6), "normal"), (slice(6, 7), "distance")):
        scale = np.abs(J[rows]).max()
        err = np.abs(J[rows] - Jfd[rows]).max()
        assert err <= RTOL * max(scale, 1.0), f"d{name}: error {err:.3e}, scale {scale:.3e}"
    np.testing.assert_allclose(normal @ dnormal, 0.0, atol=1e-12)
    return xa, xb, J


STENCIL_SIZES = {POINT: 1, SEGMENT: 2, FACE: 3}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("penetrating", [True, False], ids=["penetrating", "separated"])
@pytest.mark.parametrize("pair", list(PAIRS))
def test_matches_differences_of_free_points(pair, penetrating, seed):
    c = random_contact(pair, seed, penetrating)
    xa, xb, J = check_against_differences(c)
    assert (len(xa), len(xb)) == (STENCIL_SIZES[c["kind_a"]], STENCIL_SIZES[c["kind_b"]])
    # the points past B's first carry its direction or normal: moving one alone turns it, which moves the
    # normal or the distance
    if c["kind_b"] in (SEGMENT, FACE):
        assert np.abs(J[3:7, 3 * len(xa) + 3:]).max() > 1e-3


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("angle", [0.0, 0.7, np.pi])
def test_circle_matches_differences_of_free_points(seed, angle):
    c = circle_contact(seed, angle)
    xa, xb, J = check_against_differences(c)
    assert (len(xa), len(xb)) == (3, 3)
    # off flat, the rim point ignores the stand-in direction (point 2 of A)
    assert np.abs(J[:, 6:9]).max() < 1e-12


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("face_first", [True, False], ids=["face_edge", "edge_face"])
def test_edge_cut_matches_differences_of_free_points(seed, face_first):
    c = edge_cut_contact(seed, face_first)
    xa, xb, J = check_against_differences(c)
    face_points = xa if face_first else xb
    assert len(face_points) == 6  # the face carries the side plane that cuts the edge
    side_cols = slice(9, 18) if face_first else slice(3 * len(xa) + 9, 3 * len(xa) + 18)
    assert np.abs(J[:3, side_cols]).max() > 1e-3  # the cut point slides as the side plane moves


def test_flat_circle_follows_its_stand_in_direction():
    """A circle lying flat on a face has no support direction: its rim point turns with the stencil's third
    point, made orthogonal to the axis."""
    c = dict(kind_a=CIRCLE, p_a=np.zeros(3), d_a=np.array([0.0, 0.0, 1.0]), margin_a=0.0, radius_a=0.3,
             angle_a=0.4, pose_a=IDENTITY + np.concatenate([np.zeros(9), [0.1, -0.2, 0.5]]), kind_b=FACE,
             p_b=np.zeros(3), d_b=np.array([0.0, 0.0, 1.0]), margin_b=0.0, pose_b=IDENTITY,
             fallback=np.array([0.0, 0.0, 1.0]))
    point, normal, distance, xa, xb, dpoint, dnormal, ddistance = point_derivatives(c)
    assert distance == pytest.approx(0.5)
    # x = c + r (cos t e + sin t (a x e)), e the normalised part of x2 - x0 orthogonal to the axis a: a
    # sideways move of x2 by dy (orthogonal to e and a) turns e by dy; the contact point is the rim point's
    # projection halfway to the face, so it moves within the plane
    e = unit(xa[2] - xa[0])
    side = np.cross(np.array([0.0, 0.0, 1.0]), e)
    expected = 0.3 * (np.cos(0.4) * side + np.sin(0.4) * np.cross([0.0, 0.0, 1.0], side))
    np.testing.assert_allclose(dpoint[:2, 6:9] @ side, expected[:2], atol=1e-12)


def ipc(x):
    return [np.asarray(p, dtype=float) for p in x]


@pytest.mark.parametrize("seed", range(4))
def test_point_face_matches_ipc_toolkit(seed):
    """Vertex on a face: the signed distance and its 12-gradient are IPC Toolkit's point-plane ones,
    shifted by the margins."""
    c = random_contact("point_face", seed, penetrating=bool(seed % 2))
    _, _, distance, xa, xb, _, _, ddistance = point_derivatives(c)
    p, t0, t1, t2 = ipc([xa[0], *xb])
    margins = c["margin_a"] + c["margin_b"]
    assert distance + margins == pytest.approx(ipctk.point_plane_signed_distance(p, t0, t1, t2), abs=1e-12)
    np.testing.assert_allclose(ddistance, np.ravel(ipctk.point_plane_signed_distance_gradient(p, t0, t1, t2)),
                               atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_face_point_matches_ipc_toolkit(seed):
    """Face of A on a vertex of B: the distance is B's point above A's plane, so IPC Toolkit's gradient
    with the point first is ours with A's three points first."""
    c = random_contact("face_point", seed, penetrating=bool(seed % 2))
    _, _, distance, xa, xb, _, _, ddistance = point_derivatives(c)
    p, t0, t1, t2 = ipc([xb[0], *xa])
    margins = c["margin_a"] + c["margin_b"]
    assert distance + margins == pytest.approx(ipctk.point_plane_signed_distance(p, t0, t1, t2), abs=1e-12)
    g = np.ravel(ipctk.point_plane_signed_distance_gradient(p, t0, t1, t2))
    np.testing.assert_allclose(ddistance, np.concatenate([g[3:], g[:3]]), atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_crossing_lines_match_ipc_toolkit(seed):
    """Edge against edge: the distance along the common perpendicular, IPC Toolkit's line-line signed
    distance up to its orientation."""
    c = random_contact("segment_segment", seed, penetrating=bool(seed % 2))
    _, _, distance, xa, xb, _, _, ddistance = point_derivatives(c)
    ea0, ea1, eb0, eb1 = ipc([*xa, *xb])
    theirs = ipctk.line_line_signed_distance(ea0, ea1, eb0, eb1)
    sign = np.sign(theirs) * np.sign(distance + c["margin_a"] + c["margin_b"])
    assert distance + c["margin_a"] + c["margin_b"] == pytest.approx(sign * theirs, abs=1e-12)
    g = np.ravel(ipctk.line_line_signed_distance_gradient(ea0, ea1, eb0, eb1))
    np.testing.assert_allclose(ddistance, sign * g, atol=1e-12)


@pytest.mark.parametrize("pair", ["point_point", "point_segment", "segment_point"])
@pytest.mark.parametrize("seed", range(3))
def test_unsigned_pairs_match_ipc_toolkit(pair, seed):
    """Point against point or line: IPC Toolkit gives the squared distance D; our gap is sqrt(D) minus the
    margins, so its gradient is grad D / (2 sqrt(D))."""
    c = random_contact(pair, seed, penetrating=bool(seed % 2))
    _, _, distance, xa, xb, _, _, ddistance = point_derivatives(c)
    if pair == "point_point":
        D = ipctk.point_point_distance(*ipc([xa[0], xb[0]]))
        g = np.ravel(ipctk.point_point_distance_gradient(*ipc([xa[0], xb[0]])))
    elif pair == "point_segment":
        D = ipctk.point_line_distance(*ipc([xa[0], *xb]))
        g = np.ravel(ipctk.point_line_distance_gradient(*ipc([xa[0], *xb])))
    else:  # the line is A's: IPC Toolkit's point comes first
        D = ipctk.point_line_distance(*ipc([xb[0], *xa]))
        g = np.ravel(ipctk.point_line_distance_gradient(*ipc([xb[0], *xa])))
        g = np.concatenate([g[3:], g[:3]])
    gap = np.sqrt(D)
    assert distance + c["margin_a"] + c["margin_b"] == pytest.approx(gap, abs=1e-12)
    np.testing.assert_allclose(ddistance, g / (2.0 * gap), atol=1e-12)
