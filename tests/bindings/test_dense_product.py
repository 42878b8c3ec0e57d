"""The dense products of the derivative code (linalg/dense_product.hpp): the AVX2/FMA kernel chosen at run
time, or Eigen's, against numpy on every remainder of its 8 x 4 tiles."""

import numpy as np
import pytest

from rigidiff import _core, _testing

SIZES = [0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 38]


@pytest.mark.parametrize("m", SIZES)
def test_product_matches_numpy(m):
    rng = np.random.default_rng(m)
    for k in (0, 1, 3, 8, 21, 38):
        for n in (0, 1, 3, 4, 5, 9, 76):
            A, B, C = rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n))
            scale = 1.0 + np.abs(A).sum() * np.abs(B).max(initial=0.0)
            np.testing.assert_allclose(_testing.dense_product(A, B), A @ B, rtol=0, atol=1e-14 * scale)
            np.testing.assert_allclose(_testing.dense_product(A, B, C), C + A @ B, rtol=0, atol=1e-14 * scale)
            np.testing.assert_allclose(_testing.dense_product(A.T.copy(), B, transposed_a=True), A @ B, rtol=0,
                                       atol=1e-14 * scale)


def test_product_propagates_non_finite_values():
    A, B = np.ones((9, 5)), np.ones((5, 6))
    A[3, 2] = np.nan
    out = _testing.dense_product(A, B)
    assert np.isnan(out[3]).all() and np.isfinite(np.delete(out, 3, axis=0)).all()


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match="do not chain"):
        _testing.dense_product(np.ones((3, 4)), np.ones((5, 2)))
    with pytest.raises(ValueError, match=r"C must be \(3, 2\)"):
        _testing.dense_product(np.ones((3, 4)), np.ones((4, 2)), np.ones((2, 2)))


def test_show_config_names_the_kernel():
    import io

    import rigidiff as rd

    info = rd.show_config(file=io.StringIO())
    expected = "avx2+fma (chosen at run time)" if _core._dense_product_uses_avx2() else "eigen"
    assert info["dense_kernel"] == expected


def test_portable_path_on_request(tmp_path):
    """RIGIDIFF_DENSE_KERNEL=eigen keeps Eigen's products (the path of CPUs without AVX2): contact
    Jacobians through it agree with those of the kernel."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import json, numpy as np, rigidiff as rd\n"
        "from rigidiff import _core\n"
        "w = rd.World(dt=1e-3); w.add_ground(friction=0.5)\n"
        "sk = rd.Skeleton('box')\n"
        "box = rd.Box((0.2, 0.3, 0.1))\n"
        "b = sk.add_body('b', joint=rd.FreeJoint('root'), inertia=rd.Inertia.from_shape(box, mass=1.0))\n"
        "b.add_shape(box)\n"
        "w.add_skeleton(sk)\n"
        "q = np.array([0.01, 0.02, 0.0499, 0.0, 0.0, 0.0, 1.0]); v = np.array([0.3, 0.0, -0.1, 0.0, 0.0, 0.2])\n"
        "j = w.step_jacobians(q, v, np.zeros(6))\n"
        "assert 'clamping' in j.contacts.row_classes\n"
        "print(_core._dense_product_uses_avx2()); print(json.dumps(np.hstack([j.A, j.B]).tolist()))\n"
    )
    import rigidiff as rd

    runs = {}
    for kernel in ("eigen", "default"):
        # the rigidiff this test imports, run outside the source tree (whose package has no extension)
        env = dict(os.environ, PYTHONPATH=str(Path(rd.__file__).resolve().parents[1]))
        if kernel == "eigen":
            env["RIGIDIFF_DENSE_KERNEL"] = "eigen"
        else:
            env.pop("RIGIDIFF_DENSE_KERNEL", None)
        out = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        flag, jac = out.stdout.strip().splitlines()
        runs[kernel] = (flag, np.array(json.loads(jac)))
    assert runs["eigen"][0] == "False"
    assert runs["default"][0] == str(_core._dense_product_uses_avx2())
    np.testing.assert_allclose(runs["eigen"][1], runs["default"][1], rtol=1e-9, atol=1e-9)
