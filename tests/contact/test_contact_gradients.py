"""One-step Jacobians of constrained steps (contacts, joint limits, joint friction) against mode-preserving
central finite differences: Nimble's DiffDART gradient scenes, moved to z up (contact_scenes.py).

Every test checks the six blocks of ``world.step_jacobians`` (dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv,
dv_dtau; q in the tangent space) column by column against central differences of ``world.step``. A
difference is used only when both perturbed steps keep the contact mode of the unperturbed one: the same
contacts (bodies, feature types, points within POINT_DRIFT) and the same class of every constraint row
(``last_contacts().row_classes``). Otherwise the step shrinks (1e-6, 1e-7, 1e-8) and, if no step keeps the
mode, the column is left out; most columns must be checked. Entries agree as in Nimble's ``equals``:
an absolute error of TOL where the finite difference is at most 1 in magnitude, relative above. Each test
also asserts the mode its scene is built for (clamping normals, sticking or sliding friction, ...).
"""

from __future__ import annotations

import numpy as np
import pytest
from contact_scenes import (
    GEOMETRY_PAIRS,
    PAIR_VARIANTS,
    arm_against_wall,
    block_on_ground,
    bouncing_block,
    box_on_offset_box,
    cartpole_on_ground,
    cylinder_on_ground,
    double_pendulum_limit_and_friction,
    geometry_pair,
    multigroup,
    pendulum_at_limit,
    pendulum_joint_friction,
    plank_over_edge,
    quadrupeds_on_ground,
    robot_on_ground,
    skeleton_dofs,
    sliding_reverse_pendulum,
    solo12_standing,
    sphere_stack,
    two_blocks,
)

TOL = 1e-7
EPS = (1e-6, 1e-7, 1e-8)  # finite-difference steps, tried in this order until the mode is kept
POINT_DRIFT = 1e-5  # m a contact point may move under a perturbation and still be the same contact
MIN_CHECKED = 0.8  # fraction of the 3 nv columns that must keep the mode
BLOCKS = ("dq_dq", "dq_dv", "dq_dtau", "dv_dq", "dv_dv", "dv_dtau")
BOUND = {"upper_bound", "lower_bound"}


# ------------------------------------------------------------------------------------------ helpers


def step_contacts(world, q, v, tau):
    """The StepContacts of the step from (q, v, tau)."""
    world.step(q, v, tau)
    return world.last_contacts()


def same_mode(contacts, ref, touching=1e-6) -> bool:
    """True if ``contacts`` are those of ``ref`` (same bodies, features and row classes, points close,
    no distance across ``touching``, contact_options().rest_depth / 50: a contact's row lets a larger gap
    close but holds a closer contact, so a contact at that distance is a tie between two targets)."""
    if len(contacts) != len(ref) or list(contacts.row_classes) != list(ref.row_classes):
        return False
    if (contacts.body_a, contacts.body_b, contacts.types) != (ref.body_a, ref.body_b, ref.types):
        return False
    if np.any((contacts.distances > touching) != (ref.distances > touching)):
        return False
    return len(ref) == 0 or float(np.max(np.abs(contacts.points - ref.points))) <= POINT_DRIFT


def rows_per_contact(contacts) -> int:
    """Constraint rows of each contact (1 frictionless, 3 with a four-sided pyramid), joint rows excluded."""
    n, m = len(contacts), len(contacts.row_classes)
    per = [k for k in (1, 3, 5) if n and n * k == m]
    assert per, f"cannot split {m} rows among {n} contacts"
    return per[0]


def normal_classes(contacts) -> list:
    return list(contacts.row_classes)[:: rows_per_contact(contacts)]


def friction_classes(contacts) -> list:
    k = rows_per_contact(contacts)
    rows = list(contacts.row_classes)
    return [rows[i] for i in range(len(rows)) if i % k]


def _perturbed(world, state, wrt, k, h):
    """(state with entry k of ``wrt`` moved by h, the step actually taken)."""
    q, v, tau = state
    if wrt == "q":
        d = np.zeros(world.nv)
        d[k] = h
        return (world.integrate(q, d), v, tau), h
    x = (v if wrt == "v" else tau).copy()
    x[k] += h
    taken = x[k] - (v if wrt == "v" else tau)[k]
    return ((q, x, tau) if wrt == "v" else (q, v, x)), taken


def _central_column(world, state, wrt, k, eps, q_ref, ref):
    """Central difference of (q_next, v_next) along entry k of ``wrt``, or None if a side changes the mode."""
    x = state[("q", "v", "tau").index(wrt)]
    h = eps if wrt == "q" else eps * max(1.0, abs(x[k]))
    sides = []
    for sign in (1.0, -1.0):
        moved, taken = _perturbed(world, state, wrt, k, sign * h)
        qn, vn = world.step(*moved)
        if not same_mode(world.last_contacts(), ref):
            return None
        sides.append((np.concatenate([world.difference(q_ref, qn), vn]), taken))
    (plus, hp), (minus, hm) = sides
    return (plus - minus) / (hp - hm)


def finite_difference_step(world, q, v, tau):
    """Mode-preserving central differences of one step: ({block: (nv, nv), NaN in excluded columns},
    [(input, column) excluded], the StepContacts of the unperturbed step)."""
    state = (np.asarray(q, dtype=float), np.asarray(v, dtype=float), np.asarray(tau, dtype=float))
    q_ref, _ = world.step(*state)
    ref = world.last_contacts()
    nv = world.nv
    fd = {name: np.full((nv, nv), np.nan) for name in BLOCKS}
    excluded = []
    for wrt in ("q", "v", "tau"):
        for k in range(nv):
            for eps in EPS:
                col = _central_column(world, state, wrt, k, eps, q_ref, ref)
                if col is not None:
                    fd[f"dq_d{wrt}"][:, k] = col[:nv]
                    fd[f"dv_d{wrt}"][:, k] = col[nv:]
                    break
            else:
                excluded.append((wrt, k))
    world.step(*state)  # leave the warm start as the unperturbed step has it
    return fd, excluded, ref


def block_errors(jac, fd, blocks=BLOCKS) -> dict:
    """{block: largest error of the checked entries} with Nimble's equals metric."""
    out = {}
    for name in blocks:
        a, e = getattr(jac, name), fd[name]
        checked = ~np.isnan(e)
        err = np.abs(a - np.where(checked, e, 0.0)) / np.maximum(1.0, np.abs(np.where(checked, e, 0.0)))
        out[name] = float(np.max(np.where(checked, err, 0.0), initial=0.0))
    return out


def assert_step_jacobians_match_fd(world, q, v, tau, blocks=BLOCKS, tol=TOL, min_checked=MIN_CHECKED):
    """world.step_jacobians(q, v, tau) against mode-preserving central differences of world.step.

    Checks that the Jacobians come with the step's q_next, v_next and contacts, that every block in
    ``blocks`` matches the finite differences to ``tol`` (Nimble's equals) on the columns that keep the
    mode, that at least ``min_checked`` of the columns do, and that the analytic blocks are not
    bit-identical to the differences (not the same computation). Returns (jac, fd, errors)."""
    jac = world.step_jacobians(q, v, tau)
    qn, vn = world.step(q, v, tau)
    contacts = world.last_contacts()
    np.testing.assert_allclose(jac.q_next, qn, rtol=0, atol=1e-12)
    np.testing.assert_allclose(jac.v_next, vn, rtol=0, atol=1e-12)
    assert len(jac.contacts) == len(contacts) and list(jac.contacts.row_classes) == list(contacts.row_classes)
    nv = world.nv
    for name in BLOCKS:
        block = getattr(jac, name)
        assert block.shape == (nv, nv), f"{name}: shape {block.shape}"
        assert np.all(np.isfinite(block)), f"{name}: non-finite entries"

    fd, excluded, ref = finite_difference_step(world, q, v, tau)
    assert list(ref.row_classes) == list(contacts.row_classes)
    assert len(excluded) <= (1.0 - min_checked) * 3 * nv, (
        f"{len(excluded)} of {3 * nv} columns change the contact mode under every step: {excluded}"
    )
    errors = block_errors(jac, fd, blocks)
    table = ", ".join(f"{k} {e:.1e}" for k, e in errors.items())
    assert max(errors.values()) <= tol, f"analytic vs finite differences (tol {tol:g}): {table}"
    # checked entries other than exact 0 and 1 come out rounded differently from another computation
    masks = {n: np.isfinite(fd[n]) & (fd[n] != 0.0) & (np.abs(fd[n]) != 1.0) for n in blocks}
    inexact = [(getattr(jac, n)[m], fd[n][m]) for n, m in masks.items()]
    if any(e.size for _, e in inexact):
        assert any(np.any(a != e) for a, e in inexact), "the analytic Jacobians are bit-identical to FD"
    return jac, fd, errors


# ------------------------------------------------------------------------------------------ 1, 9. blocks


@pytest.mark.parametrize("joint", ["translational", "planar"])
@pytest.mark.parametrize("friction", ["none", "static", "slipping"])
def test_block_on_ground(friction, joint):
    """A cube on the ground on a translational (x, y, z) or planar (x-z) joint: 4 redundant corner
    contacts (least-squares standardised) without friction, sticking (mu = 1) and sliding (mu = 0.2)."""
    world, q, v, tau = block_on_ground(friction, joint)
    c = step_contacts(world, q, v, tau)
    assert len(c) == 4 and set(c.types) == {"point_face"}
    assert normal_classes(c) == ["clamping"] * 4
    if friction == "none":
        assert rows_per_contact(c) == 1
    elif friction == "static":
        assert "clamping" in friction_classes(c) and not BOUND & set(c.row_classes)
    else:
        assert BOUND & set(friction_classes(c))
    assert_step_jacobians_match_fd(world, q, v, tau)


@pytest.mark.parametrize("mass", [2.0, 4.0])
def test_frictionless_block_of_other_masses(mass):
    """The frictionless translational block with masses 2 and 4 (Nimble's BLOCK_ON_GROUND_NO_FRICTION)."""
    world, q, v, tau = block_on_ground("none", "translational", mass=mass)
    assert normal_classes(step_contacts(world, q, v, tau)) == ["clamping"] * 4
    assert_step_jacobians_match_fd(world, q, v, tau)


@pytest.mark.parametrize("friction", ["none", "static", "slipping"])
def test_free_block_on_ground(friction):
    """A free-joint cube on the ground with a small yaw rate, frictionless, sticking and sliding: the
    rotation dofs and the quaternion tangent space enter the contact Jacobians."""
    world, q, v, tau = block_on_ground(friction, "free")
    c = step_contacts(world, q, v, tau)
    assert normal_classes(c) == ["clamping"] * 4
    if friction == "static":
        assert not BOUND & set(c.row_classes)
    elif friction == "slipping":
        assert BOUND & set(friction_classes(c))
    assert_step_jacobians_match_fd(world, q, v, tau)


@pytest.mark.parametrize("friction", ["none", "static", "slipping"])
@pytest.mark.parametrize("pose", ["lying", "tilted"])
def test_cylinder_rim_on_ground(pose, friction):
    """A cylinder's rim contacts slide along the rim as it turns (a rolling wheel touches the ground at
    its lowest point): their Jacobians include that (points fixed on the body get the turn about the
    axis wrong by 0.1-1 relative)."""
    world, q, v, tau = cylinder_on_ground(pose, friction)
    c = step_contacts(world, q, v, tau)
    assert len(c) == (2 if pose == "lying" else 1) and set(c.types) == {"point_face"}
    assert normal_classes(c) == ["clamping"] * len(c)
    assert_step_jacobians_match_fd(world, q, v, tau)


# ------------------------------------------------------------------------------------------ 2-5


def test_sphere_stack():
    """Two prismatic-z spheres, the top on the bottom and the bottom on the ground: two clamping normals
    coupling two movable bodies; the friction rows move nothing and are separating."""
    world, q, v, tau = sphere_stack()
    c = step_contacts(world, q, v, tau)
    assert len(c) == 2 and normal_classes(c) == ["clamping"] * 2
    assert set(friction_classes(c)) == {"separating"}
    assert_step_jacobians_match_fd(world, q, v, tau)


@pytest.mark.parametrize("masses", [(1.0, 1.0), (1.0, 2.0), (3.0, 5.0)], ids=lambda m: f"{m[0]:g}-{m[1]:g}")
def test_two_blocks_pushed_together(masses):
    """Two frictionless prismatic-x blocks pressed together face to face (4 redundant contacts): they
    leave the step with one common velocity."""
    world, q, v, tau = two_blocks(*masses)
    c = step_contacts(world, q, v, tau)
    assert len(c) == 4 and list(c.row_classes) == ["clamping"] * 4
    _, vn = world.step(q, v, tau)
    assert vn[0] == pytest.approx(vn[1], abs=1e-12)
    assert_step_jacobians_match_fd(world, q, v, tau)


@pytest.mark.parametrize("combine,e", [("max", 1.0), ("min", 0.5)])
def test_bouncing_block(combine, e):
    """A cube (restitution 0.5) hitting the ground (1.0) at 1 m/s: the restitution rule gives e, the
    corners clamp to the bounce target and the block leaves at e m/s. Without the bounce correction
    every block is the discrete step's; with it (the default) the velocity blocks still are, and the
    height after the step responds to the height before by -e, as a continuous-time bounce does."""
    world, q, v, tau = bouncing_block(combine)
    c = step_contacts(world, q, v, tau)
    assert normal_classes(c) == ["clamping"] * 4
    _, vn = world.step(q, v, tau)
    assert vn[2] == pytest.approx(e, abs=1e-9)
    jac = world.step_jacobians(q, v, tau)
    assert jac.dq_dq[2, 2] == pytest.approx(-e, abs=1e-9)
    assert_step_jacobians_match_fd(world, q, v, tau, blocks=("dv_dq", "dv_dv", "dv_dtau"))
    world.contact_options(bounce_correction=False)
    assert_step_jacobians_match_fd(world, q, v, tau)


def test_sliding_reverse_pendulum():
    """A frictionless sled on the ground carrying an inverted pole at 30 degrees, pushed along x and
    down: the pole's dynamics load the 4 sled contacts through the kinematic tree."""
    world, q, v, tau = sliding_reverse_pendulum()
    c = step_contacts(world, q, v, tau)
    assert len(c) == 4 and list(c.row_classes) == ["clamping"] * 4
    assert_step_jacobians_match_fd(world, q, v, tau)


# ------------------------------------------------------------------------------------------ 6. islands


@pytest.mark.parametrize("n_pairs", [2, 4])
def test_multigroup_islands_are_independent(n_pairs):
    """n box pairs side by side (each a bottom box sliding on the ground and a cube sticking on it): n
    islands. The Jacobians match finite differences and are block-diagonal over pairs, while the
    two boxes of one pair are coupled."""
    world, q, v, tau = multigroup(n_pairs)
    c = step_contacts(world, q, v, tau)
    assert len(c) == 8 * n_pairs and normal_classes(c) == ["clamping"] * (8 * n_pairs)
    for k in range(len(c)):  # the bottom boxes slide on the ground, the top cubes stick on them
        rows = set(c.row_classes[3 * k + 1 : 3 * k + 3])
        assert bool(rows & BOUND) == (c.body_b[k] == "ground" or c.body_a[k] == "ground")
    jac, _, _ = assert_step_jacobians_match_fd(world, q, v, tau)
    dofs = skeleton_dofs(world)
    pair_dofs = [np.r_[dofs[f"bottom{k}"], dofs[f"top{k}"]] for k in range(n_pairs)]
    for name in BLOCKS:
        J = getattr(jac, name)
        for i, rows in enumerate(pair_dofs):
            for j, cols in enumerate(pair_dofs):
                if i != j:  # zero up to round-off
                    cross = np.abs(J[np.ix_(rows, cols)]).max()
                    assert cross <= 1e-12, f"{name}: pair {i} depends on pair {j} ({cross:.1e})"
    for k in range(n_pairs):  # the top cube's push moves the bottom box
        assert np.abs(jac.dv_dtau[dofs[f"bottom{k}"], dofs[f"top{k}"]]).max() > 1e-6


# ------------------------------------------------------------------------------------------ 7. arms


@pytest.mark.parametrize(
    "n_links,angle,friction",
    [(3, 30.0, 1.0), (5, 40.0, 1.0), (3, 30.0, 0.02)],
    ids=["3-links-sticking", "5-links-sticking", "3-links-sliding"],
)
def test_arm_corner_on_wall(n_links, angle, friction):
    """A revolute arm (x-z plane, gravity held by its torques) pressing one corner of its rotated end
    cube on a welded wall: a vertex-face contact through a kinematic chain, sticking (mu = 1) or sliding
    (mu = 0.02). The friction row along y moves nothing (planar arm)."""
    world, q, v, tau = arm_against_wall(n_links, angle, friction=friction)
    c = step_contacts(world, q, v, tau)
    assert len(c) == 1 and c.types == ["point_face"] and c.body_b == ["wall"]
    assert c.row_classes[0] == "clamping"
    assert "separating" in c.row_classes[1:]
    if friction >= 1.0:
        assert "clamping" in c.row_classes[1:]
    else:
        assert BOUND & set(c.row_classes[1:])
    assert_step_jacobians_match_fd(world, q, v, tau)


# ------------------------------------------------------------------------------------------ 8. cartpole


@pytest.mark.parametrize("cart_speed", [0.0, 0.3], ids=["sticking", "sliding"])
def test_cartpole_on_ground(cart_speed):
    """A cart (planar joint: x, z and pitch) with a pole at 15 degrees, its box on the ground with
    friction 0.5, pushed along x: standing (sticking) or moving (sliding)."""
    world, q, v, tau = cartpole_on_ground(cart_speed=cart_speed)
    c = step_contacts(world, q, v, tau)
    assert len(c) == 4 and normal_classes(c) == ["clamping"] * 4
    if cart_speed:
        assert BOUND & set(c.row_classes)
    else:
        assert not BOUND & set(c.row_classes)
    assert_step_jacobians_match_fd(world, q, v, tau)


# ------------------------------------------------------------------------------------------ 10. geometry


SWAPPED_TYPE = {
    "point_face": "face_point",
    "face_point": "point_face",
    "point_segment": "segment_point",
    "segment_point": "point_segment",
    "point_point": "point_point",
    "segment_segment": "segment_segment",
}


@pytest.mark.parametrize("variant", PAIR_VARIANTS)
@pytest.mark.parametrize("kind", list(GEOMETRY_PAIRS))
def test_geometry_pair(kind, variant):
    """Each feature pair (vertex-face, edge-edge, face-face of boxes, sphere on a box face, edge and
    vertex, sphere-sphere, sphere on a capsule's end and side, crossing capsules, a capsule's end and
    side on a box) between two free bodies pressed together, sticking or sliding; as two skeletons, in
    swapped order, and as self-collision of siblings and of a grandparent and grandchild."""
    world, q, v, tau = geometry_pair(kind, variant)
    spec = GEOMETRY_PAIRS[kind]
    ctype, n, sliding = spec.ctype, spec.n_contacts, spec.sliding
    c = step_contacts(world, q, v, tau)
    assert len(c) == n
    assert {frozenset((a, b)) for a, b in zip(c.body_a, c.body_b)} == {frozenset(("A", "B"))}
    expected = ctype if c.body_a[0] == "A" else SWAPPED_TYPE[ctype]
    if kind == "box_face_face":  # two parallel faces: either may be the reference face of the clipping
        assert set(c.types) in ({ctype}, {SWAPPED_TYPE[ctype]})
    else:
        assert set(c.types) == {expected}
    assert normal_classes(c) == ["clamping"] * n
    if sliding:
        assert BOUND & set(friction_classes(c))
    else:
        assert not BOUND & set(c.row_classes)
    assert_step_jacobians_match_fd(world, q, v, tau)


@pytest.mark.parametrize("kind", list(GEOMETRY_PAIRS))
def test_swapped_skeleton_order_permutes_the_jacobians(kind):
    """Adding B's skeleton before A's (which swaps the contact's A and B) permutes the dofs: the step and
    its Jacobians agree after the permutation. Sliding contacts are the exception for the derivatives
    with respect to q: their friction pyramid turns with body B, so which body it follows is a property
    of the step (both orders agree with their own finite differences, test_geometry_pair)."""
    world, q, v, tau = geometry_pair(kind, "pair")
    world_s, q_s, v_s, tau_s = geometry_pair(kind, "swapped")
    jac, jac_s = world.step_jacobians(q, v, tau), world_s.step_jacobians(q_s, v_s, tau_s)
    perm = np.r_[6:12, 0:6]  # the swapped world's dofs in the order of the first one
    np.testing.assert_allclose(jac_s.v_next[perm], jac.v_next, rtol=0, atol=1e-12)
    sliding = GEOMETRY_PAIRS[kind].sliding
    for name in BLOCKS:
        if sliding and name in ("dq_dq", "dv_dq"):
            continue
        np.testing.assert_allclose(
            getattr(jac_s, name)[np.ix_(perm, perm)], getattr(jac, name), rtol=1e-9, atol=1e-9, err_msg=name
        )


# ------------------------------------------------------------------------------------------ 11. passive terms


@pytest.mark.parametrize("damping,stiffness", [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0)], ids=["D", "K", "DK"])
def test_damping_and_springs_arm(damping, stiffness):
    """The 3-link arm pressing its corner on the wall, with joint damping and/or springs (implicit in
    the step, so they enter the constraint's mass matrix M + dt D + dt^2 K)."""
    world, q, v, tau = arm_against_wall(3, 30.0, damping=damping, stiffness=stiffness)
    assert step_contacts(world, q, v, tau).row_classes[0] == "clamping"
    assert_step_jacobians_match_fd(world, q, v, tau)


@pytest.mark.parametrize("friction", ["static", "slipping"])
@pytest.mark.parametrize("damping,stiffness", [(1.0, 0.0), (0.0, 5.0), (1.0, 5.0)], ids=["D", "K", "DK"])
def test_damping_and_springs_block(friction, damping, stiffness):
    """The translational block on the ground with damping and/or springs (rest at the origin) on its
    three joint axes, sticking and sliding."""
    world, q, v, tau = block_on_ground(friction, "translational", damping=damping, stiffness=stiffness)
    c = step_contacts(world, q, v, tau)
    assert normal_classes(c) == ["clamping"] * 4
    assert bool(BOUND & set(c.row_classes)) == (friction == "slipping")
    assert_step_jacobians_match_fd(world, q, v, tau)


# ------------------------------------------------------------------------------------------ 12. joint constraints


def test_joint_limit():
    """A pendulum falling onto its upper limit: the limit row clamps (the gap closes within the step)."""
    world, q, v, tau = pendulum_at_limit()
    c = step_contacts(world, q, v, tau)
    assert len(c) == 0 and list(c.row_classes) == ["clamping"]
    qn, _ = world.step(q, v, tau)
    assert qn[0] == pytest.approx(0.5, abs=1e-12)
    assert_step_jacobians_match_fd(world, q, v, tau)


@pytest.mark.parametrize("sticking", [True, False], ids=["sticking", "slipping"])
def test_joint_coulomb_friction(sticking):
    """A horizontal pendulum whose hinge friction holds it (the friction row clamps) or does not (the
    row sits on its bound)."""
    world, q, v, tau = pendulum_joint_friction(sticking)
    c = step_contacts(world, q, v, tau)
    if sticking:
        assert list(c.row_classes) == ["clamping"]
        assert world.step(q, v, tau)[1][0] == pytest.approx(0.0, abs=1e-12)
    else:
        assert set(c.row_classes) <= BOUND and len(c.row_classes) == 1
    assert_step_jacobians_match_fd(world, q, v, tau)


def test_joint_limit_and_friction_together():
    """Two links: the first on its limit, the second slipping against its hinge friction (one island)."""
    world, q, v, tau = double_pendulum_limit_and_friction()
    c = step_contacts(world, q, v, tau)
    assert len(c.row_classes) == 2 and c.row_classes[0] == "clamping" and c.row_classes[1] in BOUND
    assert_step_jacobians_match_fd(world, q, v, tau)


# ------------------------------------------------------------------------------------------ 13. determinism


SCENES = {
    "block": lambda: block_on_ground("slipping", "free"),
    "arm": lambda: arm_against_wall(3, 30.0),
    "edge_edge_self": lambda: geometry_pair("box_edge_edge", "self_siblings"),
    "multigroup": lambda: multigroup(2),
}


@pytest.mark.parametrize("scene", list(SCENES))
def test_jacobians_are_deterministic(scene):
    """step_jacobians twice at one state gives bit-identical results, also after other steps in between
    (a warm start from elsewhere) and in a fresh world built the same way."""
    world, q, v, tau = SCENES[scene]()
    first = world.step_jacobians(q, v, tau)
    again = world.step_jacobians(q, v, tau)
    qs, vs = q, v
    for _ in range(20):  # move on: other contacts, other warm starts
        qs, vs = world.step(qs, vs, 3.0 * tau)
    world.step(world.integrate(q, np.full(world.nv, 1e-3)), v + 0.1, tau)
    after = world.step_jacobians(q, v, tau)
    fresh_world, *_ = SCENES[scene]()
    fresh = fresh_world.step_jacobians(q, v, tau)
    for name in ("q_next", "v_next", *BLOCKS):
        ref = getattr(first, name)
        for other, what in ((again, "again"), (after, "after other steps"), (fresh, "fresh world")):
            assert np.array_equal(getattr(other, name), ref), f"{name}: {what}"
    assert list(after.contacts.row_classes) == list(first.contacts.row_classes)


# ------------------------------------------------------------------------------------------ 14. robot


@pytest.mark.parametrize("names, slide", [(("anymal",), 0.3), (("solo12", "solo12"), 0.2)])
def test_quadrupeds_sliding_and_side_by_side(robots_dir, names, slide):
    """ANYmal sliding on its four feet, and two solo12s side by side (two islands, one clamping system
    each): the Jacobians through all their contacts against mode-preserving differences."""
    world, q, v, tau = quadrupeds_on_ground(robots_dir, names, slide)
    c = step_contacts(world, q, v, tau)
    loaded = {a for a, cls in zip(c.body_a, normal_classes(c)) if cls == "clamping"}
    assert len(loaded) >= 2
    if len(names) == 2:  # both robots bear load: body names are qualified by their skeleton
        assert {a.split("/")[0] for a in loaded} == {"solo120", "solo121"}
    assert_step_jacobians_match_fd(world, q, v, tau)


def test_plank_tipping_over_a_table_edge():
    """The contact points where the table's edge leaves the plank's face slide along the edge as the
    plank turns: their Jacobians include that sliding (a point fixed in either body gives dv/dq wrong
    by 0.8)."""
    world, q, v, tau = plank_over_edge()
    c = step_contacts(world, q, v, tau)
    assert c.types == ["face_edge", "face_edge"] and c.body_a == ["plank", "plank"]
    np.testing.assert_allclose(c.points[:, 0], 0.5, atol=1e-5)  # on the table's edge, within the depth
    assert normal_classes(c) == ["clamping", "clamping"]
    assert_step_jacobians_match_fd(world, q, v, tau)


def test_box_on_a_shifted_box():
    """Two equal cubes stacked with an offset touch on a square whose corners are a corner of the top
    box (on the lower box's face), a corner of the lower box (on the top box's face) and two edge
    crossings: each kind with its own derivatives (a corner of either face taken as the lower box's point
    gives dv/dq wrong by 1.8)."""
    world, q, v, tau = box_on_offset_box()
    c = step_contacts(world, q, v, tau)
    kinds = dict(zip(map(tuple, np.round(c.points[:, :2], 6)), c.types))
    assert kinds == {(-0.05, -0.05): "point_face", (0.1, 0.1): "face_point", (0.1, -0.05): "face_edge",
                     (-0.05, 0.1): "face_edge"}
    assert normal_classes(c).count("clamping") >= 2
    assert_step_jacobians_match_fd(world, q, v, tau)


@pytest.mark.parametrize(
    "rel_path, feet",
    [
        ("go1_description/urdf/go1.urdf", {"FL_foot", "FR_foot", "RL_foot", "RR_foot"}),
        ("b1_description/urdf/b1-z1.urdf", {"FL_foot", "FR_foot", "RL_foot", "RR_foot"}),
        ("g1_description/urdf/g1_29dof_rev_1_0.urdf", {"left_ankle_roll_link", "right_ankle_roll_link"}),
        ("icub_description/robots/icub_reduced.urdf", {"l_foot", "r_foot"}),
        ("bolt_description/robots/bolt.urdf", {"FL_FOOT", "FR_FOOT"}),
        ("allegro_hand_description/urdf/allegro_right_hand.urdf", {"palm_link", "link_15.0_tip"}),
    ],
    ids=["go1", "b1_z1", "g1", "icub", "bolt", "allegro"],
)
def test_robots_dropped_on_the_ground(robots_dir, rel_path, feet):
    """Quadrupeds (one carrying an arm), humanoids, a biped and a hand, with their collision meshes and
    boxes, dropped in their neutral posture and settled: they rest on the bodies they should, without
    sinking, and their Jacobians match mode-preserving differences."""
    if not (robots_dir / rel_path).exists():
        pytest.skip(f"this example-robot-data has no {rel_path}")
    world, q, v, tau = robot_on_ground(robots_dir, rel_path)
    c = step_contacts(world, q, v, tau)
    assert {a.split("/")[-1] for a, cls in zip(c.body_a, normal_classes(c)) if cls == "clamping"} == feet
    assert min(world.collide(q).distances) > -3e-4  # resting on the ground, not sinking through it
    assert_step_jacobians_match_fd(world, q, v, tau)


def test_solo12_standing(robots_dir):
    """Solo12 (collision meshes) standing on its four feet after settling under PD torques: every foot
    carries load."""
    world, q, v, tau = solo12_standing(robots_dir)
    c = step_contacts(world, q, v, tau)
    loaded = {a for a, cls in zip(c.body_a, normal_classes(c)) if cls == "clamping"}
    assert loaded == {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"}
    assert_step_jacobians_match_fd(world, q, v, tau)
