"""The projective world's functions that take arrays (step, step_vjp, rollout, rollout_backward, energy,
add_sphere, set_parameters with a skeleton in its joint limit) and the deformable constructors (ProjectiveMaterial, TetMesh) called with every hostile variant of
each argument in a child process: the float64 answer bit for bit, or a ValueError/TypeError naming the
argument; never a crash or a silent NaN."""

from fuzz_groups import FAST_PASSES, FAST_RANDOM_CALLS, check_report, systematic_calls


def test_projective_world_functions_keep_their_promises_for_hostile_arguments(fast_reports):
    check_report(fast_reports["projective"], FAST_PASSES * systematic_calls("projective") + FAST_RANDOM_CALLS)
