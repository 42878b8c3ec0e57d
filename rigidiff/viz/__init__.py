"""Pictures of worlds, trajectories and optimisations, drawn with matplotlib (``pip install rigidiff[plot]``).

::

    import rigidiff as rd
    import rigidiff.viz

    Q, V = world.rollout(q0, v0, taus)
    rd.viz.render_trajectory(world, Q, "walk.gif", fps=30, stride=33)   # or "walk.mp4" (needs ffmpeg)
    rd.viz.frame_strip(world, Q, "walk.png", n_frames=6)
    ax = rd.viz.draw_state(world, Q[-1], camera=rd.viz.Camera(elevation=30, azimuth=-120))
    rd.viz.plot_costs({"total": costs, "effort": effort}, path="costs.png")
    rd.viz.plot_jacobian_error(world.step_jacobians(q, v, tau),
                               rd.testing.finite_difference_jacobians(world, q, v, tau), path="jac.png")

Bodies are drawn from their visual shapes (``ShapeInstance.visual``; a body with none shows its collision
shapes), posed by ``world.body_poses``, with flat shading; planes as a checkered patch around the scene.
Figures are drawn off screen by matplotlib's Agg canvas: no display is needed, and the pyplot backend is
left alone. Importing this module does not import matplotlib; the functions do. Tutorial: docs/viz.md.
"""

from rigidiff.viz._common import Camera
from rigidiff.viz._plots import plot_costs, plot_jacobian_error
from rigidiff.viz._render import draw_state, find_ffmpeg, frame_strip, render_trajectory

__all__ = ["Camera", "draw_state", "frame_strip", "render_trajectory", "plot_costs", "plot_jacobian_error",
           "find_ffmpeg"]
