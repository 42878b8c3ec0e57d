"""The shape constructors (Box, Sphere, Capsule, Cylinder, Plane, Mesh), Transform and Inertia with hostile
arrays and scalars, their mass properties included (see test_world_fuzz.py)."""

from fuzz_groups import FAST_PASSES, FAST_RANDOM_CALLS, check_report, systematic_calls


def test_constructors_keep_their_promises_for_hostile_arguments(fast_reports):
    check_report(fast_reports["constructors"], FAST_PASSES * systematic_calls("constructors") + FAST_RANDOM_CALLS)
