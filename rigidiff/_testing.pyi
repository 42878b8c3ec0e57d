"""Type stubs of the test-only extension rigidiff._testing (see rigidiff/_testing.pyx)."""

import numpy as np
from numpy.typing import ArrayLike, NDArray

_F = NDArray[np.float64]

def feature_derivatives(kind_a: int, p_a: ArrayLike, d_a: ArrayLike, margin_a: float, pose_a: ArrayLike,
                        kind_b: int, p_b: ArrayLike, d_b: ArrayLike, margin_b: float, pose_b: ArrayLike,
                        fallback: ArrayLike, radius_a: float = 0.0, angle_a: float = 0.0,
                        side_p: ArrayLike = ..., side_n: ArrayLike = ...) -> tuple[_F, _F, float, _F, _F, _F]: ...
def dense_product(A: ArrayLike, B: ArrayLike, C: ArrayLike | None = None, transposed_a: bool = False) -> _F: ...
