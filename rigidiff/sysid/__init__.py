"""System identification: fit physical parameters of a World to recorded motion (docs/sysid.md).

    res = rigidiff.sysid.fit(world, q, v, tau, params=["link1/mass", "joint1/damping"])
    res.values, res.world, res.residual     # fitted values, a fitted copy of the world, RMS residual

"regressor": least squares on the residual of the discrete equations of motion (the step's own
accelerations, implicit damping and springs), exact on data stepped by rigidiff; steps without
constraints only. "rollout": least squares on the state errors of short shots simulated from recorded
states, with the exact Jacobian of the shots; works through contacts and fits friction and restitution.
"""

from .fit import METHODS, FitResult, fit

__all__ = ["fit", "FitResult", "METHODS"]
