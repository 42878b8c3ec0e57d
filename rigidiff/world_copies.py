"""Pickling and copying an lcp World: it is rebuilt from a recipe (its settings, copies of its skeletons and
particle sets, contact options, stored state, time and warm start) and steps bit for bit as the original."""

from __future__ import annotations

import copy
import dataclasses
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rigidiff.world import World


class WorldCopies:
    """Mixin of World: copy.copy, copy.deepcopy and pickle give an independent world; _copy one without the
    warm start (the working copies of system identification and the torch bridge)."""

    def _copy(self) -> World:
        """A new World with copies of this world's skeletons (which hold its parameters), dt, gravity,
        integrator, gyroscopic treatment, contact options and state: it computes what this world computes, and
        changing one of them leaves the other as it was."""
        return rebuilt_world(copy.deepcopy(self._recipe(with_warm_start=False)))

    def _recipe(self, with_warm_start: bool = True) -> dict:
        """What a world is rebuilt from (pickling, copies): its settings, its skeletons and particle sets (the
        caller copies them), its stored state and time, and its warm start when it is compiled."""
        warm = self.warm_start() if with_warm_start and self._core_is_ready() else None
        return {"settings": dict(dt=self.dt, gravity=tuple(self.gravity), integrator=self.integrator,
                                 gyroscopic=self.gyroscopic),
                "skeletons": self._skeletons, "particle_sets": self._particle_sets,
                "contacts": dataclasses.asdict(self.contact_options()), "q": self._q, "v": self._v,
                "time": self.time, "warm_start": warm}

    def __reduce__(self):
        return rebuilt_world, (self._recipe(),)

    def __reduce_ex__(self, protocol):
        return self.__reduce__()

    def __copy__(self) -> World:
        return rebuilt_world(copy.deepcopy(self._recipe()))

    def __deepcopy__(self, memo) -> World:
        return rebuilt_world(copy.deepcopy(self._recipe(), memo))


def rebuilt_world(recipe: dict) -> World:
    """The World of World._recipe (its skeletons and particle sets are used as given), with its contact
    options, stored state, time and warm start (compiled now if it has one, else at its first use)."""
    from rigidiff.world import World  # the module that defines World imports this one

    new = World(**recipe["settings"])
    new._skeletons, new._particle_sets = list(recipe["skeletons"]), list(recipe["particle_sets"])
    for skeleton in new._skeletons:
        skeleton._worlds.add(new)
    new.rebuild()
    new.contact_options(**recipe["contacts"])
    new._q, new._v = (None if x is None else np.array(x) for x in (recipe["q"], recipe["v"]))
    new.time = recipe["time"]
    if recipe["warm_start"] is not None:
        new.set_warm_start(recipe["warm_start"])
    return new
