"""Worlds refuse pickling and copying with a message that says what to do instead: they hold compiled state
(the C++ model, its workspaces and caches), which Python's default protocols cannot reach."""

from __future__ import annotations


class NotCopyable:
    """Mixin of the worlds: pickle, copy.copy and copy.deepcopy raise TypeError naming the world's class."""

    _instead = "build the world again where it is needed (a function that returns it)"

    def _refuse(self, what: str):
        raise TypeError(f"a {type(self).__name__} cannot be {what}: it holds compiled state; {self._instead}")

    def __reduce_ex__(self, protocol):
        self._refuse("pickled (for multiprocessing too)")

    def __reduce__(self):
        self._refuse("pickled (for multiprocessing too)")

    def __copy__(self):
        self._refuse("copied")

    def __deepcopy__(self, memo):
        self._refuse("copied")
