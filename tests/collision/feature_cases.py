"""Feature contacts shared by the tests of their derivatives: random pairs of every kind, well away from
degenerate configurations, and the binding that evaluates them."""

import numpy as np
from scipy.spatial.transform import Rotation

from rigidiff import _testing

POINT, SEGMENT, FACE, CIRCLE, EDGE_CUT = 0, 1, 2, 3, 4
PAIRS = {
    "point_face": (POINT, FACE),
    "face_point": (FACE, POINT),
    "point_point": (POINT, POINT),
    "point_segment": (POINT, SEGMENT),
    "segment_point": (SEGMENT, POINT),
    "segment_segment": (SEGMENT, SEGMENT),
}


def unit(x):
    x = np.asarray(x, dtype=float)
    return x / np.linalg.norm(x)


def pose12(R, p):
    return np.concatenate([np.asarray(R).ravel(), p])


def evaluate(c, pose_a=None, pose_b=None):
    """(point, normal, distance, dpoint, dnormal, ddistance) of contact c, optionally at other poses."""
    return _testing.feature_derivatives(c["kind_a"], c["p_a"], c["d_a"], c["margin_a"],
                                        c["pose_a"] if pose_a is None else pose_a, c["kind_b"], c["p_b"], c["d_b"],
                                        c["margin_b"], c["pose_b"] if pose_b is None else pose_b, c["fallback"],
                                        c.get("radius_a", 0.0), c.get("angle_a", 0.0), c.get("side_p", np.zeros(3)),
                                        c.get("side_n", np.array([1.0, 0.0, 0.0])))


def random_feature(rng):
    return rng.normal(scale=0.5, size=3), unit(rng.normal(size=3))


def random_pose(rng):
    return pose12(Rotation.random(random_state=rng).as_matrix(), rng.normal(scale=0.7, size=3))


def random_contact(pair, seed, penetrating):
    """Random features and placements of `pair`, well away from degenerate configurations, with margins
    chosen so the signed distance is -0.3 (penetrating) or +0.3 (separated) times the centre gap."""
    rng = np.random.default_rng(seed)
    kind_a, kind_b = PAIRS[pair]
    while True:
        p_a, d_a = random_feature(rng)
        p_b, d_b = random_feature(rng)
        c = dict(kind_a=kind_a, p_a=p_a, d_a=d_a, margin_a=0.0, pose_a=random_pose(rng), kind_b=kind_b, p_b=p_b,
                 d_b=d_b, margin_b=0.0, pose_b=random_pose(rng), fallback=unit(rng.normal(size=3)))
        if kind_a == kind_b == SEGMENT:
            ua, ub = c["pose_a"][:9].reshape(3, 3) @ d_a, c["pose_b"][:9].reshape(3, 3) @ d_b
            if abs(ua @ ub) > 0.9:  # nearly parallel lines: closest points far away
                continue
        _, normal, gap, *_ = evaluate(c)
        if abs(gap) < 0.1:
            continue
        if gap < 0.0 and FACE not in (kind_a, kind_b):
            c["fallback"] = -normal  # the other side of the common perpendicular: a positive gap
            _, normal, gap, *_ = evaluate(c)
        if gap < 0.0:  # a point behind a face: move it in front, along the face normal
            continue
        # faces have no margin (polytopes, planes); points and segments share the rest
        total = (1.3 if penetrating else 0.7) * gap
        share = rng.uniform(0.2, 0.8) if FACE not in (kind_a, kind_b) else (1.0 if kind_a != FACE else 0.0)
        c["margin_a"], c["margin_b"] = share * total, (1.0 - share) * total
        return c


def circle_contact(seed, angle):
    """A circle of A (a cylinder's rim: centre, axis, radius 0.3) against a face of B, tilted at random."""
    rng = np.random.default_rng(seed)
    p_b, d_b = random_feature(rng)
    return dict(kind_a=CIRCLE, p_a=rng.normal(scale=0.3, size=3), d_a=unit(rng.normal(size=3)), margin_a=0.0,
                radius_a=0.3, angle_a=angle, pose_a=random_pose(rng), kind_b=FACE, p_b=p_b, d_b=d_b, margin_b=0.0,
                pose_b=random_pose(rng), fallback=unit(rng.normal(size=3)))


def edge_cut_contact(seed, face_first):
    """An edge of one body crossing the side plane of the other's face (a face clipping it): the edge runs
    below the face, across the side plane, at random angles; the face is A (face_edge) or B (edge_face)."""
    rng = np.random.default_rng(seed)
    while True:
        pose_f, pose_e = random_pose(rng), random_pose(rng)
        Rf, tf, Re, te = pose_f[:9].reshape(3, 3), pose_f[9:], pose_e[:9].reshape(3, 3), pose_e[9:]
        face_p, face_n = random_feature(rng)
        side_n = unit(np.cross(face_n, rng.normal(size=3)))  # a side plane orthogonal to the face
        side_p = face_p + rng.normal(scale=0.3) * unit(np.cross(face_n, side_n))
        # the edge: through a point below the face near the side plane, turned away from both planes
        n_w, s_w = Rf @ face_n, Rf @ side_n
        x = Rf @ side_p + tf - 0.2 * n_w + rng.normal(scale=0.2) * np.cross(n_w, s_w)
        u = unit(s_w + rng.normal(scale=0.5, size=3))
        if abs(u @ s_w) < 0.4 or abs(u @ n_w) > 0.6:
            continue
        c_w = x - rng.uniform(-0.3, 0.3) * u
        edge = dict(kind=EDGE_CUT, p=Re.T @ (c_w - te), d=Re.T @ u, margin=0.0, pose=pose_e)
        face = dict(kind=FACE, p=face_p, d=face_n, margin=0.0, pose=pose_f)
        a, b = (face, edge) if face_first else (edge, face)
        return dict(kind_a=a["kind"], p_a=a["p"], d_a=a["d"], margin_a=0.0, pose_a=a["pose"], kind_b=b["kind"],
                    p_b=b["p"], d_b=b["d"], margin_b=0.0, pose_b=b["pose"], fallback=unit(rng.normal(size=3)),
                    side_p=side_p, side_n=side_n)
