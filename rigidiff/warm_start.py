"""The contact warm start of a World as a value: ``world.warm_start()`` takes it out of the world,
``world.set_warm_start(ws)`` puts it back, ``world.clear_warm_start()`` empties it (docs/contact.md,
"The constraint solve")."""

from __future__ import annotations

import numpy as np

__all__ = ["WarmStart"]


def _frozen(x, dtype) -> np.ndarray:
    out = np.array(x, dtype=dtype, copy=True).reshape(-1)
    out.flags.writeable = False
    return out


class WarmStart:
    """The warm-start cache of a World's single steps (``step``, ``step_jacobians``, ``step_vjp``, ...), as
    returned by ``World.warm_start()``.

    It holds what the core keeps after a constrained step: the constraint rows of that step (as keys
    naming each row's two shapes, contact and direction, or its joint) with their LCP classes and
    impulses, and the step's end state (q_next, v_next). A step that starts bitwise at that end state
    tries those classes and impulses first; any other step solves cold. ``World.set_warm_start(ws)``
    restores it, so that the next step from that state is solved as it would have been right after the
    step that left it, whatever was called in between.

    Treat it as opaque: it is immutable, compares equal to a cache with the same content, pickles and
    copies, and belongs to worlds with the model of the world that made it (``set_warm_start`` raises
    ValueError for another one). ``len(ws)`` is its number of rows (0 when empty).
    """

    __slots__ = ("_keys", "_classes", "_state", "_model", "_impulses")

    def __init__(self, keys, classes, state, model: str, impulses=None):
        self._keys = _frozen(keys, np.int64)
        self._classes = _frozen(classes, np.int32)
        self._state = None if state is None else _frozen(state, np.float64)
        self._model = str(model)
        # the rows' impulses seed the next solve with the classes (None: classes only)
        self._impulses = None if impulses is None else _frozen(impulses, np.float64)
        if len(self._keys) != len(self._classes):
            raise ValueError(f"a WarmStart needs one class per row key, got {len(self._keys)} keys and "
                             f"{len(self._classes)} classes")
        if self._impulses is not None and len(self._impulses) != len(self._keys):
            raise ValueError(f"a WarmStart needs one impulse per row key, got {len(self._keys)} keys and "
                             f"{len(self._impulses)} impulses")

    def __len__(self) -> int:
        return len(self._keys)

    def __eq__(self, other) -> bool:
        if not isinstance(other, WarmStart):
            return NotImplemented
        def same(a, b):
            return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))

        return (self._model == other._model and same(self._state, other._state)
                and same(self._impulses, other._impulses) and np.array_equal(self._keys, other._keys)
                and np.array_equal(self._classes, other._classes))

    __hash__ = None  # compared by content (arrays), so not hashable

    def __reduce__(self):
        return WarmStart, (self._keys, self._classes, self._state, self._model, self._impulses)

    def __repr__(self) -> str:
        start = "no step to continue" if self._state is None else "continues the step it was taken after"
        return f"WarmStart({len(self)} rows, {start})"
