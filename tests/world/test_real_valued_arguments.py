"""Every array the Python layer converts itself is read as the compiled bindings read theirs: only real
numbers (bool, integers, floats) convert. A complex value, whose imaginary part numpy's float conversion
drops with a warning, a numeric string or a time raises a ValueError naming the argument instead of
being used as a float."""

import warnings

import numpy as np
import pytest
import trimesh

import rigidiff as rd

W = rd.World(gravity=(0.0, 0.0, -9.81))
W.add_skeleton(rd.models.load("cartpole"))
TETRA = trimesh.Trimesh(vertices=np.eye(4, 3), faces=[[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]], process=False)


def _call(name, x):
    return {
        "gravity": lambda: rd.World(gravity=x),
        "translation": lambda: rd.Transform(translation=x),
        "rotation": lambda: rd.Transform(rotation=x),
        "rpy": lambda: rd.Transform(rpy=x),
        "points": lambda: rd.Transform().apply(x),
        "Box size": lambda: rd.Box(x),
        "Plane normal": lambda: rd.Plane(normal=x),
        "Mesh scale": lambda: rd.Mesh(TETRA, scale=x),
        "com": lambda: rd.Inertia(1.0, com=x),
        "rotational_inertia": lambda: rd.Inertia(1.0, rotational_inertia=x),
        "positions": lambda: rd.World().add_particles(x),
        "parameter values": lambda: W.set_parameters(x),
        "v": lambda: W.step_acceleration(x, np.zeros(2)),
        "v_next": lambda: W.step_acceleration(np.zeros(2), x),
        "R": lambda: rd.transform.matrix_to_rpy(x),
        "lower": lambda: rd.trajopt.Problem(W, 3, [0.0, 0.0]).set_control_bounds(x, 10.0),
        "v_upper": lambda: rd.trajopt.Problem(W, 3, [0.0, 0.0]).set_state_bounds(v_upper=x),
        "tau": lambda: rd.trajopt.Problem(W, 3, [0.0, 0.0]).set_initial_guess(x),
        "q_weight": lambda: rd.trajopt.Problem(W, 3, [0.0, 0.0]).add_state_cost(q_target=[0.0, 0.0], q_weight=x),
        "tau_target": lambda: rd.trajopt.Problem(W, 3, [0.0, 0.0]).add_control_cost(tau_target=x),
        "g": lambda: rd.trajopt.box_qp(np.eye(2), x, -1.0, 1.0),
        "q": lambda: rd.sysid.fit(W, x, np.zeros((4, 2)), np.zeros((3, 2)), ["cart/mass"]),
    }[name]()


GOOD = {"gravity": [0.0, 0.0, -9.81], "translation": [0.1, 0.2, 0.3], "rotation": [0.0, 0.0, 0.0, 1.0],
        "rpy": [0.1, 0.2, 0.3], "points": [0.1, 0.2, 0.3], "Box size": [0.1, 0.2, 0.3],
        "Plane normal": [0.0, 0.0, 1.0], "Mesh scale": [1.0, 2.0, 3.0], "com": [0.1, 0.2, 0.3],
        "rotational_inertia": np.diag([0.1, 0.2, 0.25]), "positions": [[0.0, 0.0, 1.0]],
        "parameter values": W.parameters().values, "v": [0.1, 0.2], "v_next": [0.1, 0.2], "R": np.eye(3),
        "lower": [-1.0, -2.0], "v_upper": [1.0, 2.0], "tau": np.zeros((3, 2)), "q_weight": [1.0, 2.0],
        "tau_target": [0.1, 0.2], "g": [1.0, -1.0], "q": np.zeros((4, 2))}


@pytest.mark.parametrize("name", sorted(GOOD))
@pytest.mark.parametrize("bad", ["complex", "string", "datetime", "object"])
def test_values_that_are_not_real_numbers_are_refused_naming_the_argument(name, bad):
    good = np.asarray(GOOD[name], dtype=np.float64)
    x = {"complex": good + 1e-3j, "string": good.astype(str), "datetime": np.zeros(good.shape, "datetime64[s]"),
         "object": good.astype(object)}[bad]
    with pytest.raises(ValueError, match=rf"{name} must be .*real-valued"):
        _call(name, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sysid's zero data identify nothing, and say so
        _call(name, good)  # the same values as floats are accepted


def test_set_parameters_refuses_a_numeric_string_in_a_dict():
    with pytest.raises(ValueError, match="parameter 'cart/mass' must be a real number"):
        W.set_parameters({"cart/mass": "2.0"})


def test_a_complex_lcp_at_an_extreme_scale_is_refused_not_solved_on_its_real_part():
    A = np.array([[2.0, 0.5], [0.5, 1.0]]) * 1e101 + 1e100j
    with pytest.raises(ValueError, match="A must be a real-valued array"):
        rd.lcp.solve_boxed_lcp(A, [-1e101, 1e101], [0.0, 0.0], [np.inf, np.inf])
