"""Draws the pictures of docs/images/ from the examples that show them, so that they stay true to the code.

Each picture is the frame strip (``rd.viz.frame_strip``) an example writes next to its plots: the example runs
as a user would run it, into a temporary folder, and its strip is copied to docs/images/. The soft quadruped
optimises its gait first: the whole run takes about ten minutes on two cores.

    python docs/make_pictures.py                      # every picture
    python docs/make_pictures.py soft_ball_drop       # the pictures of the examples named
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"

#: {example (examples/<name>.py): the frame strip it writes}; each is copied to docs/images/<name>.png
PICTURES = {
    "affine_bodies_fall": "affine_bodies_fall_frames.png",
    "arm_sweeps_a_stack": "arm_sweeps_a_stack_frames.png",
    "chain_folds_onto_itself": "chain_folds_onto_itself_frames.png",
    "rigid_boxes_on_a_soft_pad": "rigid_boxes_on_a_soft_pad_frames.png",
    "soft_ball_drop": "soft_ball_drop_frames.png",
    "soft_ball_gripper": "soft_ball_gripper_frames.png",
    "soft_block_pushed_by_a_box": "soft_block_pushed_by_a_box_frames.png",
    "soft_quadruped_walk": "soft_quadruped_walk_frames.png",
}


def draw(name: str, out: Path) -> Path:
    """Runs examples/<name>.py into out and copies its frame strip to docs/images/<name>.png."""
    subprocess.run([sys.executable, str(ROOT / "examples" / f"{name}.py"), "--out", str(out)], check=True,
                   cwd=ROOT)
    dest = IMAGES / f"{name}.png"
    shutil.copyfile(out / PICTURES[name], dest)
    return dest


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help=f"examples to draw (default: all of {sorted(PICTURES)})")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(PICTURES))
    if unknown:
        parser.error(f"no picture comes from {unknown}; known: {sorted(PICTURES)}")
    IMAGES.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names or sorted(PICTURES):
            print(f"wrote {draw(name, Path(tmp)).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
