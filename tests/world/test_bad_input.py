"""Bad input (docs/architecture.md, Errors): a ValueError naming the argument and its expected shape, IndexError for
unknown names, RuntimeError for failures, never a crash and never a silent NaN."""

import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rdsupport import world_of

import rigidiff as rd


def build_world():
    """Free base, a revolute arm and a ball joint: nq = 12, nv = 10, 3 bodies."""
    sk = rd.Skeleton("bad")
    base = sk.add_body("base", joint=rd.FreeJoint("root"),
                       inertia=rd.Inertia(2.0, (0.1, 0.0, 0.0), np.diag([0.1, 0.2, 0.25])))
    arm = sk.add_body("arm", joint=rd.RevoluteJoint("elbow", axis=(0, 1, 0)), parent=base,
                      joint_origin=rd.Transform((0, 0, 0.3)),
                      inertia=rd.Inertia(1.0, (0, 0, 0.2), np.diag([0.01, 0.01, 0.005])))
    sk.add_body("hand", joint=rd.BallJoint("wrist"), parent=arm, joint_origin=rd.Transform((0, 0, 0.4)),
                inertia=rd.Inertia(0.5, (0, 0, 0.05), np.diag([0.002, 0.002, 0.001])))
    return world_of(sk)


WORLD = build_world()
NQ, NV, NB = WORLD.nq, WORLD.nv, WORLD.nbodies
Q0 = WORLD.random_configuration(0)
V0 = np.linspace(-1.0, 1.0, NV)


@pytest.fixture
def world():
    return WORLD


# every array argument of the functional API: (call, argument name, expected shape, where it goes)
def calls():
    q, v, F = Q0, V0, np.zeros((NB, 6))
    T = np.zeros((3, NV))
    return {
        "inverse_dynamics": (lambda w, **k: w.inverse_dynamics(k.get("q", q), k.get("v", v), k.get("a", v),
                                                               k.get("f_ext", F)), ["q", "v", "a", "f_ext"]),
        "forward_dynamics": (lambda w, **k: w.forward_dynamics(k.get("q", q), k.get("v", v), k.get("tau", v),
                                                               k.get("f_ext", F)), ["q", "v", "tau", "f_ext"]),
        "step": (lambda w, **k: w.step(k.get("q", q), k.get("v", v), k.get("tau", v), k.get("f_ext", F)),
                 ["q", "v", "tau", "f_ext"]),
        "rollout": (lambda w, **k: w.rollout(k.get("q0", q), k.get("v0", v), k.get("taus", T)), ["q0", "v0", "taus"]),
        "step_batch": (lambda w, **k: w.step_batch(k.get("Q", np.tile(q, (3, 1))), k.get("V", T), k.get("TAU", T)),
                       ["Q", "V", "TAU"]),
        "mass_matrix": (lambda w, **k: w.mass_matrix(k.get("q", q)), ["q"]),
        "mass_matrix_inverse": (lambda w, **k: w.mass_matrix_inverse(k.get("q", q)), ["q"]),
        "bias_forces": (lambda w, **k: w.bias_forces(k.get("q", q), k.get("v", v)), ["q", "v"]),
        "gravity_forces": (lambda w, **k: w.gravity_forces(k.get("q", q)), ["q"]),
        "body_poses": (lambda w, **k: w.body_poses(k.get("q", q)), ["q"]),
        "body_velocities": (lambda w, **k: w.body_velocities(k.get("q", q), k.get("v", v)), ["q", "v"]),
        "body_accelerations": (lambda w, **k: w.body_accelerations(k.get("q", q), k.get("v", v), k.get("a", v)),
                               ["q", "v", "a"]),
        "body_jacobian": (lambda w, **k: w.body_jacobian(k.get("q", q), "arm"), ["q"]),
        "body_jacobian_time_variation": (lambda w, **k: w.body_jacobian_time_variation(k.get("q", q), k.get("v", v),
                                                                                       "arm"), ["q", "v"]),
        "center_of_mass": (lambda w, **k: w.center_of_mass(k.get("q", q)), ["q"]),
        "center_of_mass_jacobian": (lambda w, **k: w.center_of_mass_jacobian(k.get("q", q)), ["q"]),
        "kinetic_energy": (lambda w, **k: w.kinetic_energy(k.get("q", q), k.get("v", v)), ["q", "v"]),
        "potential_energy": (lambda w, **k: w.potential_energy(k.get("q", q)), ["q"]),
        "integrate": (lambda w, **k: w.integrate(k.get("q", q), k.get("dv", v)), ["q", "dv"]),
        "difference": (lambda w, **k: w.difference(k.get("q0", q), k.get("q1", q)), ["q0", "q1"]),
        "normalize": (lambda w, **k: w.normalize(k.get("q", q)), ["q"]),
    }


CALLS = calls()
ARGS = [(fn, arg) for fn, (_, args) in CALLS.items() for arg in args]
SHAPES = {"q": (NQ,), "q0": (NQ,), "q1": (NQ,), "v": (NV,), "v0": (NV,), "a": (NV,), "tau": (NV,), "dv": (NV,),
          "f_ext": (NB, 6), "taus": (-1, NV), "Q": (-1, NQ), "V": (3, NV), "TAU": (3, NV)}


def good(arg):
    shape = SHAPES[arg]
    if arg in ("q", "q0", "q1"):
        return Q0.copy()
    if arg == "Q":
        return np.tile(Q0, (3, 1))
    return np.zeros(tuple(3 if s == -1 else s for s in shape))


def shape_text(shape):
    inner = ", ".join("N" if s == -1 else str(s) for s in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def wrong_shapes(arg):
    shape = tuple(3 if s == -1 else s for s in SHAPES[arg])
    out = [shape[:-1] + (shape[-1] + 1,), shape[:-1] + (shape[-1] - 1,), (1,) + shape, (0,)]
    if len(shape) == 2:
        out += [(shape[0] * shape[1],), (shape[1], shape[0]) if shape[0] != shape[1] else (shape[0], 1)]
    return out


def call(fn, **kwargs):
    f, _ = CALLS[fn]
    return f(WORLD, **kwargs)


def test_the_good_calls_work():
    for fn in CALLS:
        call(fn)


@pytest.mark.parametrize("fn,arg", ARGS, ids=[f"{f}-{a}" for f, a in ARGS])
def test_wrong_shape_names_the_argument_and_the_expected_shape(fn, arg):
    for shape in wrong_shapes(arg):
        with pytest.raises(ValueError) as err:
            call(fn, **{arg: np.zeros(shape)})
        msg = str(err.value)
        assert re.search(rf"\b{arg}\b", msg), msg
        assert shape_text(SHAPES[arg]) in msg, msg  # the expected shape


@pytest.mark.parametrize("bad", ["abc", None, object(), {"a": 1}, {1.0, 2.0}, [1.0, "x"], [[1.0], [2.0, 3.0]],
                                 lambda: 0],
                         ids=["str", "None", "object", "dict", "set", "mixed", "ragged", "function"])
@pytest.mark.parametrize("fn,arg", ARGS, ids=[f"{f}-{a}" for f, a in ARGS])
def test_wrong_types_raise_value_error(fn, arg, bad):
    if arg == "f_ext" and (bad is None or isinstance(bad, dict)):
        pytest.skip("None means no wrenches and a dict maps body names to wrenches")
    with pytest.raises(ValueError, match=rf"\b{arg}\b"):
        call(fn, **{arg: bad})


@pytest.mark.parametrize("fn,arg", [("inverse_dynamics", "v"), ("step", "tau"), ("integrate", "q")])
def test_complex_arrays_raise_value_error(fn, arg):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=arg):
            call(fn, **{arg: good(arg).astype(complex) + 1j})


@pytest.mark.parametrize("bad", [np.array(["0.5"] * NV), np.array([b"1"] * NV),
                                 np.zeros(NV, dtype="timedelta64[s]")], ids=["str-array", "bytes-array", "timedelta"])
def test_numeric_strings_and_times_raise_value_error(bad):
    with pytest.raises(ValueError, match="tau"):
        WORLD.step(Q0, V0, bad)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("fn,arg", ARGS, ids=[f"{f}-{a}" for f, a in ARGS])
def test_non_finite_values_raise_value_error(fn, arg, value):
    x = good(arg)
    x.flat[x.size // 2 + (1 if arg in ("q", "q0", "q1") else 0)] = value
    with pytest.raises(ValueError) as err:
        call(fn, **{arg: x})
    assert arg.lower().rstrip("01") in str(err.value).lower() or "not finite" in str(err.value), str(err.value)


@pytest.mark.parametrize("index,name", [(slice(3, 7), "root"), (slice(8, 12), "wrist")], ids=["free", "ball"])
def test_non_unit_quaternions_raise_value_error(world, index, name):
    for scale in (0.0, 0.5, 1.01, 10.0):
        q = Q0.copy()
        q[index] *= scale
        for f in (world.mass_matrix, lambda x: world.step(x, V0, V0), lambda x: world.integrate(x, V0),
                  lambda x: world.difference(Q0, x), world.body_poses):
            with pytest.raises(ValueError, match="quaternion"):
                f(q)
    q = Q0.copy()
    q[index] *= 1.0 + 1e-12  # round-off is tolerated
    world.mass_matrix(q)
    q[index] *= 0.0
    with pytest.raises(ValueError, match="has norm 0"):
        world.normalize(q)
    q[index] = [0.0, 0.0, 0.0, 1e-12]  # a tiny quaternion is named by its norm, not called zero
    with pytest.raises(ValueError, match=rf"{name}'.*has norm 1e-12: too small"):
        world.normalize(q)
    with pytest.raises(ValueError, match="quaternion"):
        world.q = np.concatenate([Q0[:3], 2 * Q0[3:7], Q0[7:]])


def test_unknown_names_raise_index_error(world):
    for body in ("nope", "", -1, NB, 2.0, True, None, ["arm"], "bad/nope"):
        with pytest.raises(IndexError):
            world.body_jacobian(Q0, body)
        with pytest.raises(IndexError):
            world.body_jacobian_time_variation(Q0, V0, body)
        with pytest.raises(IndexError):
            world.body_pose(Q0, body)
    for joint in ("nope", 0, None):
        with pytest.raises(IndexError):
            world.joint(joint)
    other = rd.Skeleton("other")
    stranger = other.add_body("arm", joint=rd.FixedJoint("f"))
    with pytest.raises(IndexError):
        world.body_index(stranger)  # a body of another skeleton, with a name this world knows
    with pytest.raises(IndexError):
        world.inverse_dynamics(Q0, V0, V0, {"nope": np.zeros(6)})
    with pytest.raises(IndexError):
        rd.Skeleton("s").body("nope")
    with pytest.raises(IndexError):
        rd.Skeleton("s").joint("nope")
    # the qualified and plain names both work
    assert world.body_index("bad/arm") == world.body_index("arm") == 1
    fresh = build_world()  # not compiled yet: body() compiles it first
    assert fresh.body("arm").name == "arm"


def test_every_unknown_name_raises_one_type_that_names_it(world):
    """Bodies, joints, parameters, models, gradient entries and sysid unknowns: one UnknownNameError,
    which every except clause a user may have written (IndexError, KeyError, ValueError) catches."""
    q, v = Q0, V0
    grads = world.step_vjp(q, v, np.zeros(NV), np.ones(NV), np.ones(NV), wrt="inertia")
    lookups = [
        lambda: world.body("nowhere"), lambda: world.joint("nowhere"), lambda: world.body_index("nowhere"),
        lambda: rd.Skeleton("s").body("nowhere"), lambda: rd.Skeleton("s").joint("nowhere"),
        lambda: rd.models.path("nowhere"), lambda: world.parameters()["nowhere"],
        lambda: world.set_parameters({"nowhere": 1.0}), lambda: world.step_jacobians(q, v, v, wrt=["nowhere"]),
        lambda: grads.parameter("nowhere"),
        lambda: rd.sysid.fit(world, np.stack([q, q]), np.stack([v, v]), np.zeros((1, NV)), ["nowhere"]),
    ]
    for lookup in lookups:
        with pytest.raises(rd.UnknownNameError, match="nowhere") as info:
            lookup()
        assert isinstance(info.value, IndexError) and isinstance(info.value, KeyError)
        assert isinstance(info.value, ValueError)
        assert str(info.value) == info.value.args[0]  # the message reads as text, not as a quoted key


@pytest.mark.parametrize("frame", ["LOCAL", "World", "", None, 0, ["world"], "local_world_aligned"])
def test_bad_frame_strings_raise_value_error(world, frame):
    for f in (lambda: world.body_jacobian(Q0, "arm", frame),
              lambda: world.body_jacobian_time_variation(Q0, V0, "arm", frame),
              lambda: world.body_velocities(Q0, V0, frame),
              lambda: world.body_accelerations(Q0, V0, V0, frame)):
        with pytest.raises(ValueError, match="frame"):
            f()


def test_bad_external_wrenches(world):
    for F in (np.zeros((NB, 5)), np.zeros((NB + 1, 6)), np.zeros(6 * NB), np.zeros((NB, 6, 1)), "abc"):
        for f in (world.inverse_dynamics, world.forward_dynamics):
            with pytest.raises(ValueError, match="f_ext"):
                f(Q0, V0, V0, F)
        with pytest.raises(ValueError, match="f_ext"):
            world.step(Q0, V0, V0, F)
    with pytest.raises(ValueError, match="arm"):
        world.inverse_dynamics(Q0, V0, V0, {"arm": np.zeros(5)})
    with pytest.raises(ValueError, match="arm"):
        world.step(Q0, V0, V0, {"arm": [0, 0, np.nan, 0, 0, 0]})


@pytest.mark.parametrize("kwargs", [dict(mass=-1.0), dict(mass=np.nan), dict(mass=np.inf), dict(mass="1"),
                                    dict(mass=1.0, rotational_inertia=np.diag([1.0, 1.0, -1.0])),
                                    dict(mass=1.0, rotational_inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]),
                                    dict(mass=1.0, rotational_inertia=np.diag([1.0, 1.0, 3.0])),
                                    dict(mass=1.0, rotational_inertia=np.eye(2)),
                                    dict(mass=1.0, com=(np.nan, 0, 0)), dict(mass=1.0, com=(0, 0))],
                         ids=["negative", "nan", "inf", "str", "not-psd", "not-symmetric", "triangle",
                              "shape", "com-nan", "com-shape"])
def test_bad_inertia_raises_value_error(kwargs):
    with pytest.raises(ValueError, match="mass|inertia|com"):
        rd.Inertia(**kwargs)


@pytest.mark.parametrize("make", [
    lambda: rd.RevoluteJoint("j", axis=(0, 0, 0)),
    lambda: rd.PrismaticJoint("j", axis=(0, 0, 0)),
    lambda: rd.PlanarJoint("j", normal=(0, 0, 0)),
    lambda: rd.UniversalJoint("j", axis1=(0, 0, 0)),
    lambda: rd.UniversalJoint("j", axis2=(0, 0, 0)),
    lambda: rd.UniversalJoint("j", axis1=(1, 0, 0), axis2=(-2, 0, 0)),
    lambda: rd.RevoluteJoint("j", axis=(np.nan, 0, 1)),
    lambda: rd.RevoluteJoint("j", axis=(1, 0)),
    lambda: rd.RevoluteJoint("j", damping=-1.0),
    lambda: rd.PrismaticJoint("j", stiffness=-1.0),
    lambda: rd.RevoluteJoint("j", armature=np.inf),
    lambda: rd.RevoluteJoint("j", effort_limit=-1.0),
    lambda: rd.RevoluteJoint("j", lower=1.0, upper=0.0),
    lambda: rd.RevoluteJoint("j", lower=np.nan),
    lambda: rd.BallJoint("j", rest_position=(0, 0, 1)),
    lambda: rd.PrismaticJoint("j", rest_position=np.nan),
    lambda: rd.RevoluteJoint(""),
], ids=["zero-axis", "zero-prismatic-axis", "zero-normal", "zero-axis1", "zero-axis2", "parallel", "nan-axis",
        "axis-shape", "negative-damping", "negative-stiffness", "inf-armature", "negative-effort", "lower>upper",
        "nan-limit", "rest-shape", "nan-rest", "empty-name"])
def test_bad_joints_raise_value_error(make):
    with pytest.raises(ValueError):
        make()


def test_zero_rest_quaternion_raises_value_error():
    sk = rd.Skeleton("x")
    with pytest.raises(ValueError, match="rest"):
        sk.add_body("a", joint=rd.BallJoint("f", rest_position=[0, 0, 0, 0], stiffness=1.0),
                    inertia=rd.Inertia(1.0, rotational_inertia=0.1 * np.eye(3)))
        w = world_of(sk)
        w.step(w.neutral_configuration(), np.zeros(3), np.zeros(3))


@pytest.mark.parametrize("dt", [-1e-3, 0.0, np.nan, np.inf, "0.1", None, [1e-3]])
def test_bad_time_steps_raise_value_error(dt):
    with pytest.raises(ValueError, match="dt"):
        rd.World(dt=dt)
    w = build_world()
    with pytest.raises(ValueError, match="dt"):
        w.dt = dt
    assert w.dt == 1e-3  # unchanged
    w.step(Q0, V0, V0)


@pytest.mark.parametrize("gravity", [(0, 0), (0, 0, np.nan), "down", None])
def test_bad_gravity_raises_value_error(gravity):
    with pytest.raises(ValueError, match="gravity"):
        rd.World(gravity=gravity)
    w = build_world()
    with pytest.raises(ValueError, match="gravity"):
        w.gravity = gravity


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "2", "all"])
def test_bad_thread_counts_raise_value_error(world, threads):
    with pytest.raises(ValueError, match="threads"):
        world.step_batch(np.tile(Q0, (2, 1)), np.zeros((2, NV)), np.zeros((2, NV)), threads=threads)


def test_huge_thread_count_raises_value_error(world):
    with pytest.raises(ValueError, match="threads"):
        world.step_batch(np.tile(Q0, (2, 1)), np.zeros((2, NV)), np.zeros((2, NV)), threads=2**40)


def test_step_batch_rejects_a_bad_row(world):
    Q = np.tile(Q0, (4, 1))
    V = np.zeros((4, NV))
    V[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"V\[2\]"):
        world.step_batch(Q, V, np.zeros((4, NV)))
    Q[3, 3:7] *= 2.0
    with pytest.raises(ValueError, match=r"Q\[3\].*quaternion"):
        world.step_batch(Q, np.zeros((4, NV)), np.zeros((4, NV)))


def test_structural_errors(world):
    sk = rd.Skeleton("x")
    sk.add_body("a", joint=rd.FixedJoint("f"))
    with pytest.raises(ValueError):
        sk.add_body("a", joint=rd.FixedJoint("g"))  # duplicate body
    with pytest.raises(ValueError):
        sk.add_body("b", joint=rd.FixedJoint("f"))  # duplicate joint name
    with pytest.raises(ValueError, match="joint must be"):
        sk.add_body("c", joint="revolute")  # not a joint (None welds: see test_world_layout)
    with pytest.raises(IndexError):
        sk.add_body("d", joint=rd.FixedJoint("h"), parent="nope")
    with pytest.raises(ValueError):
        sk.add_body("e", joint=rd.FixedJoint("i"), inertia="heavy")
    with pytest.raises(ValueError):
        sk.add_body("e", joint=rd.FixedJoint("i"), joint_origin=np.eye(4))
    with pytest.raises(ValueError):
        rd.World().add_skeleton("robot")
    with pytest.raises(ValueError):
        rd.World().add_skeleton(rd.Skeleton("empty"))
    w = rd.World()
    w.add_skeleton(sk)
    with pytest.raises(ValueError):
        w.add_skeleton(sk)  # twice
    with pytest.raises(RuntimeError):
        rd.World().step(np.zeros(0), np.zeros(0), np.zeros(0))  # no skeleton yet
    with pytest.raises(ValueError, match="n_steps"):
        build_world().advance(n_steps=0)


def test_states_too_large_for_double_precision_say_so():
    world = build_world()
    q = Q0.copy()
    q[0] = 1e300  # the free base 1e300 m away: its inertia about the world origin overflows
    with pytest.raises(RuntimeError, match="too large for double precision"):
        world.forward_dynamics(q, V0, np.zeros(NV))


def test_massless_moving_bodies_raise_runtime_error():
    sk = rd.Skeleton("ghost")
    sk.add_body("b", joint=rd.PrismaticJoint("p", axis=(1, 0, 0)), inertia=rd.Inertia(1.0))
    sk.add_body("c", joint=rd.RevoluteJoint("spin", axis=(0, 0, 1)), parent="b")  # nothing to spin
    w = world_of(sk)
    q, v = np.array([0.1, 0.2]), np.zeros(2)
    for f in (lambda: w.forward_dynamics(q, v, v), lambda: w.step(q, v, v), lambda: w.mass_matrix_inverse(q),
              lambda: w.rollout(q, v, np.zeros((3, 2))), lambda: w.step_batch(q[None], v[None], v[None])):
        with pytest.raises(RuntimeError, match="spin"):
            f()
    assert w.mass_matrix(q)[1, 1] == 0.0  # the rigid-body quantities themselves are fine
    assert w.inverse_dynamics(q, v, np.ones(2))[0] == pytest.approx(1.0)


@pytest.mark.parametrize("fn", ["inverse_dynamics", "forward_dynamics", "kinetic_energy", "integrate", "difference"])
def test_overflow_is_reported_not_returned_as_nan(fn):
    huge = np.full(NV, 1e300)
    far = Q0.copy()
    far[:3] = [-1e308, 0, 0]
    far2 = Q0.copy()
    far2[:3] = [1e308, 0, 0]
    f = {"inverse_dynamics": lambda: WORLD.inverse_dynamics(Q0, huge, V0),
         "forward_dynamics": lambda: WORLD.forward_dynamics(Q0, huge, V0),
         "kinetic_energy": lambda: WORLD.kinetic_energy(Q0, huge),
         "integrate": lambda: WORLD.integrate(Q0, np.full(NV, 1e200)),
         "difference": lambda: WORLD.difference(far, far2)}[fn]
    try:
        out = f()
    except (ValueError, RuntimeError):
        return
    assert np.all(np.isfinite(out)), out


# ------------------------------------------------------------------------------------------ hypothesis
FLOATS = st.one_of(st.floats(-10, 10), st.sampled_from([np.nan, np.inf, -np.inf, 1e300, -1e300, 1e-300, 0.0]),
                   st.floats(allow_nan=True, allow_infinity=True))
JUNK = st.sampled_from([None, "abc", "1.0", object(), {"a": 1}, [1.0, "x"], b"\x00", 3 + 4j, [[1.0], [2.0, 3.0]]])


@st.composite
def arrays(draw, shape):
    """An array of the right shape with wild values, an array of a random shape, or junk."""
    kind = draw(st.sampled_from(["right", "right", "shape", "junk", "complex"]))
    if kind == "junk":
        return draw(JUNK)
    if kind == "shape":
        shape = tuple(draw(st.lists(st.integers(0, 14), min_size=0, max_size=3)))
    n = int(np.prod(shape)) if shape else 1
    values = np.array(draw(st.lists(FLOATS, min_size=n, max_size=n)), dtype=float).reshape(shape)
    return values.astype(complex) if kind == "complex" else values


@st.composite
def configurations(draw):
    """Mostly valid configurations (random, or with huge / tiny translations and angles), sometimes wild."""
    kind = draw(st.sampled_from(["valid", "valid", "scaled", "wild"]))
    if kind == "wild":
        return draw(arrays((NQ,)))
    q = WORLD.random_configuration(draw(st.integers(0, 2**32 - 1)))
    if kind == "scaled":
        k = draw(st.sampled_from([0, 1, 2, 7]))  # translations and the revolute angle
        q[k] = draw(st.sampled_from([1e300, -1e300, 1e-300, 1e20, np.nan]))
    return q


BODIES = st.one_of(st.sampled_from(["base", "arm", "hand", "bad/hand", "nope", ""]), st.integers(-5, 8),
                   st.sampled_from([None, 1.5, ["arm"]]))
FRAMES = st.sampled_from(["world", "local", "LOCAL", "", None])
ALLOWED = (ValueError, IndexError, RuntimeError)


@st.composite
def fuzzed_calls(draw):
    """(name, bound method, arguments) of one of the fuzzed entry points."""
    fn = draw(st.sampled_from(["inverse_dynamics", "forward_dynamics", "step", "rollout", "body_jacobian",
                               "integrate"]))
    q = draw(configurations())
    if fn in ("inverse_dynamics", "forward_dynamics", "step"):
        args = (q, draw(arrays((NV,))), draw(arrays((NV,))))
    elif fn == "rollout":
        args = (q, draw(arrays((NV,))), draw(arrays((draw(st.integers(0, 4)), NV))))
    elif fn == "body_jacobian":
        args = (q, draw(BODIES), draw(FRAMES))
    else:
        args = (q, draw(arrays((NV,))))
    return fn, getattr(WORLD, fn), args


def _outputs(result):
    return [np.asarray(r) for r in (result if isinstance(result, tuple) else (result,))]


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(fuzzed_calls())
@example(("inverse_dynamics", WORLD.inverse_dynamics, (Q0, np.full(NV, 1e300), V0)))
def test_fuzzed_calls_raise_only_documented_errors_or_return_finite_arrays(fc):
    """Random shapes, NaN, inf, huge values and wrong types: a documented exception or float64 arrays of
    finite values, never a crash, another exception type or a NaN (one call checked for both)."""
    fn, f, args = fc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ComplexWarning: see test_complex_arrays_raise_value_error
        try:
            result = f(*args)
        except ALLOWED:
            return
    for out in _outputs(result):
        assert out.dtype == np.float64, f"{fn} returned {out.dtype}"
        assert np.all(np.isfinite(out)), f"{fn} returned non-finite values"
