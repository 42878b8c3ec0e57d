"""rigidiff.torch.step and rigidiff.torch.rollout with hostile tensors: other dtypes, strided views, lists
and arrays instead of tensors, wrong shapes, NaN, inf and huge values. The adapter takes float64 tensors
only: any other input is refused with a ValueError naming the argument, a float64 tensor (contiguous or
strided) gives world.step's answer bit for bit."""

import pytest
from fuzz_groups import check_report, systematic_calls
from isolated import run_fuzz

pytest.importorskip("torch")


def test_the_torch_adapter_keeps_its_promises_for_hostile_tensors():
    check_report(run_fuzz("torch", "--systematic")["torch"], systematic_calls("torch"))
