"""Derivatives of a feature contact (point, normal, distance) with respect to world twists of A and B,
against central finite differences under rigid motions, for every feature pair; rigid common motions,
the coupling of two lines, degenerate pairs and bad input."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from feature_cases import (CIRCLE, EDGE_CUT, FACE, PAIRS, POINT, SEGMENT, circle_contact, edge_cut_contact, evaluate,
                           pose12, random_contact, unit)

RTOL = 1e-9  # of the largest entry of each block (observed: about 3e-11)


def values(c, pose_a=None, pose_b=None):
    point, normal, distance, *_ = evaluate(c, pose_a, pose_b)
    return np.concatenate([point, normal, [distance]])


def moved(pose, xi, eps):
    """pose after the world twist eps * xi = (v, w): x -> exp(eps w^) x + eps v, composed on the left."""
    Re = Rotation.from_rotvec(eps * np.asarray(xi[3:])).as_matrix()
    R, p = pose[:9].reshape(3, 3), pose[9:]
    return pose12(Re @ R, Re @ p + eps * np.asarray(xi[:3]))


def perturbed_values(c, column, eps):
    """values(c) after moving A (columns 0-5) or B (6-11) by eps times the unit twist of that column."""
    xi = np.zeros(6)
    xi[column % 6] = 1.0
    if column < 6:
        return values(c, pose_a=moved(c["pose_a"], xi, eps))
    return values(c, pose_b=moved(c["pose_b"], xi, eps))


def finite_differences(c, h=1e-4):
    """(7 x 12) derivative of (point, normal, distance): central differences with one Richardson step."""
    J = np.empty((7, 12))
    for j in range(12):
        d_h = (perturbed_values(c, j, h) - perturbed_values(c, j, -h)) / (2.0 * h)
        d_h2 = (perturbed_values(c, j, h / 2) - perturbed_values(c, j, -h / 2)) / h
        J[:, j] = (4.0 * d_h2 - d_h) / 3.0
    return J


def analytic(c):
    _, _, _, dpoint, dnormal, ddistance = evaluate(c)
    return np.vstack([dpoint, dnormal, ddistance[None, :]])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("penetrating", [True, False], ids=["penetrating", "separated"])
@pytest.mark.parametrize("pair", list(PAIRS))
def test_matches_finite_differences(pair, penetrating, seed):
    c = random_contact(pair, seed, penetrating)
    _, normal, distance, *_ = evaluate(c)
    assert (distance < 0.0) == penetrating
    J, Jfd = analytic(c), finite_differences(c)
    for rows, name in ((slice(0, 3), "point"), (slice(3, 6), "normal"), (slice(6, 7), "distance")):
        scale = np.abs(J[rows]).max()
        assert scale > 1e-3, f"d{name} is zero"
        err = np.abs(J[rows] - Jfd[rows]).max()
        assert err <= RTOL * scale, f"d{name}: error {err:.3e}, scale {scale:.3e}"
    assert not np.array_equal(J, Jfd)
    # the normal stays unit: its derivative is orthogonal to it
    np.testing.assert_allclose(normal @ J[3:6], 0.0, atol=1e-13)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("angle", [0.0, np.pi / 2, np.pi, 1.5 * np.pi, 0.7])
def test_circle_point_slides_along_the_rim(seed, angle):
    """A rim point follows the circle's deepest point towards the face as either body turns: its value is
    the support point (angle 0: the deepest of a dense sampling of the rim) and its derivatives match
    finite differences, which a point fixed on the body would not."""
    c = circle_contact(seed, angle)
    point, normal, distance, *_ = evaluate(c)
    R_a = c["pose_a"][:9].reshape(3, 3)
    centre, axis = R_a @ c["p_a"] + c["pose_a"][9:], R_a @ c["d_a"]
    e1 = unit(np.cross(axis, [1.0, 0.0, 0.0]))
    t = np.linspace(0.0, 2.0 * np.pi, 20001)
    rim = centre + 0.3 * (np.cos(t)[:, None] * e1 + np.sin(t)[:, None] * np.cross(axis, e1))
    face_point = c["pose_b"][:9].reshape(3, 3) @ c["p_b"] + c["pose_b"][9:]
    heights = (rim - face_point) @ normal
    if angle == 0.0:
        assert distance == pytest.approx(heights.min(), abs=1e-8)
    assert heights.min() - 1e-8 <= distance <= heights.max() + 1e-8
    J, Jfd = analytic(c), finite_differences(c)
    for rows, name in ((slice(0, 3), "point"), (slice(3, 6), "normal"), (slice(6, 7), "distance")):
        scale = np.abs(J[rows]).max()
        err = np.abs(J[rows] - Jfd[rows]).max()
        assert err <= RTOL * scale, f"d{name}: error {err:.3e}, scale {scale:.3e}"
    fixed = dict(c, kind_a=POINT, p_a=R_a.T @ (evaluate_witness_a(c) - c["pose_a"][9:]))
    assert np.abs(analytic(fixed)[:3] - J[:3]).max() > 1e-3  # sliding differs from a body-fixed point


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("face_first", [True, False], ids=["face_edge", "edge_face"])
def test_edge_cut_point_slides_along_the_edge(seed, face_first):
    """A clipped edge's contact point lies on the edge and on the face's side plane, at the depth of that
    point below the face; its derivatives match finite differences, which the derivatives of a point
    fixed on the edge's body would not."""
    c = edge_cut_contact(seed, face_first)
    point, normal, distance, *_ = evaluate(c)
    face_pose, edge_pose = (c["pose_a"], c["pose_b"]) if face_first else (c["pose_b"], c["pose_a"])
    edge_p, edge_d = (c["p_b"], c["d_b"]) if face_first else (c["p_a"], c["d_a"])
    face_p, face_n = (c["p_a"], c["d_a"]) if face_first else (c["p_b"], c["d_b"])
    Rf, tf, Re, te = face_pose[:9].reshape(3, 3), face_pose[9:], edge_pose[:9].reshape(3, 3), edge_pose[9:]
    # the edge's witness: the contact point moved back by half the gap along the normal
    edge_witness = point + (-0.5 if face_first else 0.5) * distance * normal
    assert (Rf @ c["side_n"]) @ (edge_witness - Rf @ c["side_p"] - tf) == pytest.approx(0.0, abs=1e-12)
    u = Re @ edge_d
    off_line = edge_witness - (Re @ edge_p + te)
    np.testing.assert_allclose(off_line - (off_line @ u) * u, 0.0, atol=1e-12)
    assert distance == pytest.approx((Rf @ face_n) @ (edge_witness - Rf @ face_p - tf), abs=1e-12)
    assert distance < 0.0  # below the face
    J, Jfd = analytic(c), finite_differences(c)
    for rows, name in ((slice(0, 3), "point"), (slice(3, 6), "normal"), (slice(6, 7), "distance")):
        scale = np.abs(J[rows]).max()
        err = np.abs(J[rows] - Jfd[rows]).max()
        assert err <= RTOL * scale, f"d{name}: error {err:.3e}, scale {scale:.3e}"
    side = "b" if face_first else "a"
    fixed = dict(c, **{f"kind_{side}": POINT, f"p_{side}": Re.T @ (edge_witness - te)})
    assert np.abs(analytic(fixed)[:3] - J[:3]).max() > 1e-3  # sliding differs from a body-fixed point


def evaluate_witness_a(c):
    """A's witness point of a contact against a face: the contact point lifted back by half the gap."""
    point, normal, distance, *_ = evaluate(c)
    return point + 0.5 * distance * normal


@pytest.mark.parametrize("pair", list(PAIRS))
def test_common_rigid_motion(pair):
    """Moving A and B together by one twist keeps the distance, turns the normal and carries the point."""
    c = random_contact(pair, 11, penetrating=True)
    point, normal, _, dpoint, dnormal, ddistance = evaluate(c)
    rng = np.random.default_rng(5)
    for _ in range(3):
        xi = rng.normal(size=6)
        both = np.concatenate([xi, xi])
        v, w = xi[:3], xi[3:]
        assert abs(ddistance @ both) <= 1e-12 * np.abs(ddistance).sum()
        np.testing.assert_allclose(dnormal @ both, np.cross(w, normal), atol=1e-12)
        np.testing.assert_allclose(dpoint @ both, v + np.cross(w, point), atol=1e-12)


def crossing_lines(margin_a=0.0, margin_b=0.0):
    """Two skew lines at 60 degrees, A above B (fallback up), in rotated and shifted frames."""
    Ra = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
    Rb = Rotation.from_rotvec([-0.4, 0.1, 0.2]).as_matrix()
    pa_w, ua_w = np.array([0.2, -0.1, 0.5]), np.array([1.0, 0.0, 0.0])
    pb_w, ub_w = np.array([-0.3, 0.4, 0.0]), np.array([0.5, np.sqrt(3) / 2, 0.0])
    ta, tb = np.array([0.1, 0.2, -0.3]), np.array([-0.2, 0.0, 0.1])
    return dict(kind_a=SEGMENT, p_a=Ra.T @ (pa_w - ta), d_a=Ra.T @ ua_w, margin_a=margin_a, pose_a=pose12(Ra, ta),
                kind_b=SEGMENT, p_b=Rb.T @ (pb_w - tb), d_b=Rb.T @ ub_w, margin_b=margin_b, pose_b=pose12(Rb, tb),
                fallback=np.array([0.0, 0.0, 1.0]))


def test_crossing_lines_value():
    point, normal, distance, *_ = evaluate(crossing_lines(0.1, 0.15))
    np.testing.assert_allclose(normal, [0.0, 0.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(distance, 0.5 - 0.25, atol=1e-15)
    # the lines cross above and below (x, y) = (0.2 + s, -0.1) = (-0.3, 0.4) + t ub
    t = -0.5 / (np.sqrt(3) / 2)
    ca, cb = np.array([-0.3 + 0.5 * t, -0.1, 0.5]), np.array([-0.3 + 0.5 * t, -0.1, 0.0])
    np.testing.assert_allclose(point, 0.5 * (ca - 0.1 * normal + cb + 0.15 * normal), atol=1e-14)


def test_segment_segment_coupling():
    """Moving A's line sideways moves B's witness point along B's line; moving A along its own line or
    turning it about its own axis changes nothing."""
    c = crossing_lines()
    point, normal, distance, dpoint, dnormal, ddistance = evaluate(c)
    ua = np.array([1.0, 0.0, 0.0])
    ub = np.array([0.5, np.sqrt(3) / 2, 0.0])
    # witness of B: point - distance n / 2 (no margins)
    dpoint_b = dpoint - 0.5 * (np.outer(normal, ddistance) + distance * dnormal)
    sideways = np.concatenate([np.cross(normal, ua), np.zeros(3)])
    moved_b = dpoint_b[:, :6] @ sideways
    assert np.linalg.norm(moved_b) > 0.5
    np.testing.assert_allclose(np.cross(moved_b, ub), 0.0, atol=1e-14)
    # the crossing moves along B's line by 1/sin(60 deg) per unit sideways motion of A
    np.testing.assert_allclose(abs(moved_b @ ub), 1.0 / (np.sqrt(3) / 2), rtol=1e-14)
    pa_w = c["pose_a"][:9].reshape(3, 3) @ c["p_a"] + c["pose_a"][9:]
    along = np.concatenate([ua, np.zeros(3)])
    spin = np.concatenate([-np.cross(ua, pa_w), ua])  # w = ua about the axis through pa
    for xi in (along, spin):
        for block in (dpoint, dnormal, ddistance[None, :]):
            np.testing.assert_allclose(block[:, :6] @ xi, 0.0, atol=1e-14)
    # every column agrees with finite differences
    J, Jfd = analytic(c), finite_differences(c)
    assert np.abs(J - Jfd).max() <= RTOL * np.abs(J).max()


def test_edge_edge_normal_is_renormalised():
    """For lines that are not perpendicular, the unnormalised derivative of ub x ua (Nimble) is wrong;
    the exact one agrees with finite differences."""
    c = crossing_lines()
    _, normal, _, _, dnormal, _ = evaluate(c)
    Jfd = finite_differences(c)[3:6]
    Ra, Rb = c["pose_a"][:9].reshape(3, 3), c["pose_b"][:9].reshape(3, 3)
    ua, ub = Ra @ c["d_a"], Rb @ c["d_b"]
    sign = np.sign(normal @ np.cross(ua, ub))
    unnormalised = np.zeros((3, 12))
    for k in range(3):
        w = np.eye(3)[k]
        unnormalised[:, 3 + k] = sign * np.cross(np.cross(w, ua), ub)
        unnormalised[:, 9 + k] = sign * np.cross(ua, np.cross(w, ub))
    assert np.abs(unnormalised - Jfd).max() > 0.1
    assert np.abs(dnormal - Jfd).max() <= RTOL * np.abs(dnormal).max()


def degenerate(kind_a, kind_b, pa_w, ua_w, pb_w, ub_w, margins=(0.05, 0.07)):
    """A contact with the given world features, in rotated frames."""
    Ra = Rotation.from_rotvec([0.7, 0.1, -0.3]).as_matrix()
    Rb = Rotation.from_rotvec([-0.2, 0.6, 0.4]).as_matrix()
    ta, tb = np.array([0.3, -0.2, 0.1]), np.array([-0.1, 0.4, 0.2])
    return dict(kind_a=kind_a, p_a=Ra.T @ (np.asarray(pa_w) - ta), d_a=Ra.T @ unit(ua_w), margin_a=margins[0],
                pose_a=pose12(Ra, ta), kind_b=kind_b, p_b=Rb.T @ (np.asarray(pb_w) - tb), d_b=Rb.T @ unit(ub_w),
                margin_b=margins[1], pose_b=pose12(Rb, tb), fallback=unit([0.2, -0.3, 1.0]))


DEGENERATE = {
    "coincident_points": (POINT, POINT, [0.1, 0.2, 0.3], [1, 0, 0], [0.1, 0.2, 0.3], [1, 0, 0]),
    "point_on_line": (POINT, SEGMENT, [0.4, 0.2, 0.3], [1, 0, 0], [0.1, 0.2, 0.3], [1, 0, 0]),
    "line_through_point": (SEGMENT, POINT, [0.1, 0.2, 0.3], [1, 1, 0], [0.3, 0.4, 0.3], [1, 0, 0]),
    "coincident_lines": (SEGMENT, SEGMENT, [0.1, 0.2, 0.3], [1, 2, 0], [0.3, 0.6, 0.3], [-1, -2, 0]),
}


@pytest.mark.parametrize("case", list(DEGENERATE))
def test_fallback_normal_is_held_fixed(case):
    """With equal margins the midpoint does not depend on the normal, so it stays smooth through the
    degenerate configuration and its derivative still agrees with finite differences (except under
    rotations that make coincident lines cross: they leave the branch)."""
    c = degenerate(*DEGENERATE[case], margins=(0.06, 0.06))
    point, normal, distance, dpoint, dnormal, ddistance = evaluate(c)
    np.testing.assert_array_equal(normal, c["fallback"])
    assert distance == pytest.approx(-0.12, abs=1e-14)
    for x in (point, dpoint, ddistance):
        assert np.isfinite(x).all()
    np.testing.assert_array_equal(dnormal, 0.0)
    assert np.abs(dpoint).max() > 0.1
    columns = [0, 1, 2, 6, 7, 8] if case == "coincident_lines" else list(range(12))
    Jfd = finite_differences(c)[:3, columns]
    assert np.abs(dpoint[:, columns] - Jfd).max() <= RTOL * np.abs(dpoint).max()


def test_parallel_lines():
    """Parallel distinct lines: A's point against B's line. Translations keep them parallel, so those
    columns agree with finite differences; rotations leave the branch (no FD comparison)."""
    c = degenerate(SEGMENT, SEGMENT, [0.1, 0.2, 0.5], [1, 2, 0], [0.3, 0.6, 0.1], [-1, -2, 0])
    point, normal, distance, dpoint, dnormal, ddistance = evaluate(c)
    np.testing.assert_allclose(normal, [0.0, 0.0, 1.0], atol=1e-14)
    assert distance == pytest.approx(0.4 - 0.12, abs=1e-14)
    J = analytic(c)
    assert np.isfinite(J).all()
    np.testing.assert_allclose(normal @ dnormal, 0.0, atol=1e-14)
    Jfd = finite_differences(c)
    translations = [0, 1, 2, 6, 7, 8]
    assert np.abs(J[:, translations] - Jfd[:, translations]).max() <= RTOL * np.abs(J).max()


def test_touching_contact():
    """Zero signed distance is not degenerate: the derivatives are those of a nearby contact."""
    c = random_contact("point_face", 3, penetrating=True)
    _, _, gap_margins, *_ = evaluate(c)
    c["margin_a"] += gap_margins  # distance exactly zero
    _, _, distance, *_ = evaluate(c)
    assert abs(distance) < 1e-14
    J, Jfd = analytic(c), finite_differences(c)
    assert np.abs(J - Jfd).max() <= RTOL * np.abs(J).max()


def bad(**changes):
    c = crossing_lines()
    c.update(changes)
    return c


@pytest.mark.parametrize(
    "changes, message",
    [
        (dict(kind_a=5), "kind_a"),
        (dict(kind_a=EDGE_CUT, kind_b=SEGMENT), "contact type"),
        (dict(kind_a=FACE, kind_b=EDGE_CUT, side_n=[0.0, 2.0, 0.0]), "side_n"),
        (dict(kind_a=FACE, kind_b=EDGE_CUT, side_p=[0.0, np.nan, 0.0]), "side_p"),
        (dict(kind_b=CIRCLE), "circle"),
        (dict(kind_a=CIRCLE, kind_b=POINT), "contact type"),
        (dict(kind_a=CIRCLE, radius_a=-1.0), "radius_a"),
        (dict(kind_a=CIRCLE, angle_a=np.inf), "angle_a"),
        (dict(kind_b=-1), "kind_b"),
        (dict(kind_a=FACE, kind_b=FACE), "contact type"),
        (dict(kind_a=FACE), "contact type"),
        (dict(kind_b=FACE), "contact type"),
        (dict(p_a=[np.nan, 0.0, 0.0]), "p_a"),
        (dict(d_b=[0.0, np.inf, 0.0]), "d_b"),
        (dict(d_a=[1.0, 1.0, 0.0]), "unit"),
        (dict(d_b=[0.0, 0.0, 1.0 + 1e-6]), "unit"),
        (dict(margin_a=-0.1), "margin_a"),
        (dict(margin_b=np.nan), "margin_b"),
        (dict(pose_a=np.r_[np.eye(3).ravel(), 0.0, np.nan, 0.0]), "placement"),
        (dict(pose_b=np.r_[np.diag([1.0, 1.0, -1.0]).ravel(), 0.0, 0.0, 0.0]), "rotation"),
        (dict(pose_a=np.r_[(2.0 * np.eye(3)).ravel(), 0.0, 0.0, 0.0]), "rotation"),
        (dict(fallback=[0.0, 0.0, 2.0]), "fallback"),
        (dict(fallback=[0.0, np.nan, 1.0]), "fallback"),
        (dict(p_b=[0.0, 0.0]), "p_b"),
        (dict(pose_a=np.zeros(9)), "pose_a"),
        (dict(d_a=["x", "y", "z"]), "d_a"),
    ],
)
def test_bad_input(changes, message):
    with pytest.raises(ValueError, match=message):
        evaluate(bad(**changes))


def test_point_direction_is_unused_but_checked():
    c = degenerate(POINT, FACE, [0.1, 0.2, 0.5], [1, 0, 0], [0.0, 0.0, 0.0], [0, 0, 1])
    c["d_a"] = np.array([3.0, 0.0, 0.0])  # not unit: fine for a point
    _, normal, distance, *_ = evaluate(c)
    np.testing.assert_allclose(normal, [0.0, 0.0, 1.0], atol=1e-14)
    assert distance == pytest.approx(0.5 - 0.12, abs=1e-14)
    c["d_a"] = np.array([np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match="d_a"):
        evaluate(c)
