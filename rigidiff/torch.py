"""PyTorch adapter: the step and rollouts of a World as differentiable torch functions.

    import torch, rigidiff as rd, rigidiff.torch as rdt
    q_next, v_next = rdt.step(world, q, v, tau)                 # float64 tensors, (nq,) or (B, nq), ...
    Q, V = rdt.rollout(world, q0, v0, taus)                     # taus (T, nv) or (B, T, nv)
    Q, V = rdt.rollout(world, q0, v0, taus, params=p, names=["link3/mass"])   # gradients reach p too

Gradients come from the analytic reverse mode (World.step_vjp, Trajectory.backward), never from
finite differences. The functions are pure: they compute on a private copy of the world (one per
thread, made again when the world changes), so the world's parameters, state, warm-start cache and
last contacts are never touched. Each row of a step is solved as by a new world, without the warm
start (``contact_options(warm_start=...)``) from earlier steps or other rows, so that its backward
pass differentiates the contact mode its forward pass solved; a rollout warm-starts within itself as
World.rollout does. Quaternions of q are normalised inside the graph, so a gradient with respect
to q is that of f(q / |q|). Install with ``pip install rigidiff[torch]``; rigidiff itself never
imports torch.
"""

from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager

import numpy as np
import torch

__all__ = ["step", "rollout"]


def _check_tensor(x, name: str, last: int, ndim: tuple, why: str = "") -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype != torch.float64:
        raise ValueError(f"{name} must be a float64 tensor (rigidiff computes in double precision), got {x.dtype}")
    if x.dim() not in ndim or x.shape[-1] != last:
        raise ValueError(f"{name} must have {' or '.join(str(d) for d in ndim)} dimensions{why} with last size "
                         f"{last}, got shape {tuple(x.shape)}")
    if 0 in x.shape[:-1]:
        raise ValueError(f"{name} has shape {tuple(x.shape)}: its batch (and horizon) must not be empty")
    return x


def _check_world(world) -> None:
    """The adapter differentiates an rd.World's (the LCP solver's) step: other worlds raise a TypeError saying so."""
    from rigidiff.world import World

    if not isinstance(world, World) or not hasattr(world, "_quaternion_slices"):
        raise TypeError(f"world must be an rd.World with the default solver (solver='lcp'), got "
                        f"{type(world).__name__}: rigidiff.torch does not differentiate barrier or projective worlds")


def _normalized(world, q: torch.Tensor) -> torch.Tensor:
    """q with its quaternions divided by their norms, differentiably."""
    slices = world._quaternion_slices()
    if not slices:
        return q
    parts, start = [], 0
    for a, b in slices:
        parts.append(q[..., start:a])
        quat = q[..., a:b]
        parts.append(quat / torch.linalg.vector_norm(quat, dim=-1, keepdim=True))
        start = b
    parts.append(q[..., start:])
    return torch.cat(parts, dim=-1)


def _resolve_params(world, params, names):
    if params is None:
        if names is not None:
            raise ValueError("names were given without params")
        return None, None
    all_names = world.parameters().names
    names = list(all_names) if names is None else [names] if isinstance(names, str) else list(names)
    for n in names:
        if n not in all_names:
            world._resolve_wrt(n)  # raises ValueError naming close matches
            raise ValueError(f"{n!r} is a group or a prefix; give single parameter names")
    if len(set(names)) != len(names):
        raise ValueError(f"names must not repeat, got {names}")
    params = _check_tensor(params, "params", len(names), (1,))
    return params, tuple(names)


_copies = threading.local()  # per thread: {world: (its change count, its private copy)}


def _private_world(world):
    """This thread's copy of world, made again when the world changed since (World._changed). Steps on
    it solve every contact problem cold (warm_start=False): a step is then a pure function of its
    inputs, and its backward pass re-solves the mode its forward pass found."""
    table = getattr(_copies, "table", None)
    if table is None:
        table = _copies.table = weakref.WeakKeyDictionary()
    entry = table.get(world)
    if entry is None or entry[0] != world._revision:
        work = world._copy()
        work.contact_options(warm_start=False)
        entry = table[world] = (world._revision, work)
    return entry[1]


@contextmanager
def _parameters_set(work, names, values):
    """Temporarily give the private copy these parameter values; put back the world's afterwards."""
    if names is None:
        yield
        return
    saved = work.parameters().values.copy()
    try:
        work.set_parameters(dict(zip(names, np.asarray(values, dtype=float).tolist())))
        yield
    finally:
        work.set_parameters(saved)


@contextmanager
def _warm_started_as(work, world):
    """The private copy warm-starts as the world does (for rollouts, whose steps warm-start within the
    rollout and whose backward pass re-solves each step in its recorded mode)."""
    warm = world.contact_options().warm_start
    if warm:
        work.contact_options(warm_start=True)
    try:
        yield
    finally:
        if warm:
            work.contact_options(warm_start=False)


def _np(x: torch.Tensor) -> np.ndarray:
    return x.detach().cpu().numpy().astype(np.float64, copy=False)


def _in_order(g, names) -> np.ndarray:
    """Parameter gradients of g (ordered as world.parameters().names) in the order of names."""
    return g.parameters[[g.parameter_names.index(n) for n in names]]


def _world_state(world) -> int:
    """The world's change count: dt, gravity, parameters, contact options or the model (World._changed)."""
    return world._revision


def _check_unchanged(world, saved: int) -> None:
    if _world_state(world) != saved:
        raise RuntimeError("the world (its dt, parameters, options or model) changed between this step's forward "
                           "and backward passes: its gradients would be those of another step; run the step again")


class _Step(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, v, tau, params, world, names):
        Q, V, TAU = (np.atleast_2d(_np(x)) for x in (q, v, tau))
        pv = None if params is None else _np(params)
        work = _private_world(world)
        with _parameters_set(work, names, pv):
            out = [work.step(Q[b], V[b], TAU[b]) for b in range(Q.shape[0])]
        ctx.world_state = _world_state(world)
        qn = np.stack([o[0] for o in out])
        vn = np.stack([o[1] for o in out])
        ctx.world, ctx.work, ctx.names, ctx.batched = world, work, names, q.dim() == 2
        ctx.save_for_backward(q, v, tau, params if params is not None else torch.zeros(0, dtype=torch.float64))
        if not ctx.batched:
            qn, vn = qn[0], vn[0]
        return torch.from_numpy(qn), torch.from_numpy(vn)

    @staticmethod
    def backward(ctx, gq, gv):
        q, v, tau, params = ctx.saved_tensors
        work, names = ctx.work, ctx.names
        Q, V, TAU = (np.atleast_2d(_np(x)) for x in (q, v, tau))
        GQ, GV = (np.atleast_2d(_np(g)) for g in (gq, gv))
        gqs, gvs, gts = np.empty_like(Q), np.empty_like(V), np.empty_like(TAU)
        gp = np.zeros(len(names)) if names is not None else None
        _check_unchanged(ctx.world, ctx.world_state)
        with _parameters_set(work, names, None if names is None else _np(params)):
            for b in range(Q.shape[0]):
                g = work.step_vjp(Q[b], V[b], TAU[b], GQ[b], GV[b], wrt=names, coordinates=True)
                gqs[b], gvs[b], gts[b] = g.q, g.v, g.tau
                if gp is not None:
                    gp += _in_order(g, names)
        shape = (lambda a: a) if ctx.batched else (lambda a: a[0])
        return (torch.from_numpy(shape(gqs)), torch.from_numpy(shape(gvs)), torch.from_numpy(shape(gts)),
                None if gp is None else torch.from_numpy(gp), None, None)


class _Rollout(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q0, v0, taus, params, world, names):
        batched = q0.dim() == 2
        Q0, V0 = np.atleast_2d(_np(q0)), np.atleast_2d(_np(v0))
        TAUS = _np(taus) if batched else _np(taus)[None]
        pv = None if params is None else _np(params)
        work = _private_world(world)
        with _parameters_set(work, names, pv), _warm_started_as(work, world):
            trajs = [work.rollout(Q0[b], V0[b], TAUS[b], record=True) for b in range(Q0.shape[0])]
        ctx.work, ctx.names, ctx.batched, ctx.trajs = work, names, batched, trajs
        ctx.save_for_backward(params if params is not None else torch.zeros(0, dtype=torch.float64))
        Qs = np.stack([t.q for t in trajs])
        Vs = np.stack([t.v for t in trajs])
        if not batched:
            Qs, Vs = Qs[0], Vs[0]
        return torch.from_numpy(Qs), torch.from_numpy(Vs)

    @staticmethod
    def backward(ctx, gQ, gV):
        (params,) = ctx.saved_tensors
        work, names, trajs = ctx.work, ctx.names, ctx.trajs
        GQ = _np(gQ) if ctx.batched else _np(gQ)[None]
        GV = _np(gV) if ctx.batched else _np(gV)[None]
        gq0, gv0, gts = [], [], []
        gp = np.zeros(len(names)) if names is not None else None
        with _parameters_set(work, names, None if names is None else _np(params)):
            for b, traj in enumerate(trajs):
                g = traj.backward(GQ[b], GV[b], wrt=names, coordinates=True)
                gq0.append(g.q)
                gv0.append(g.v)
                gts.append(g.tau)
                if gp is not None:
                    gp += _in_order(g, names)
        pick = (lambda xs: np.stack(xs)) if ctx.batched else (lambda xs: xs[0])
        return (torch.from_numpy(pick(gq0)), torch.from_numpy(pick(gv0)), torch.from_numpy(pick(gts)),
                None if gp is None else torch.from_numpy(gp), None, None)


def step(world, q, v, tau, params=None, names=None):
    """One world step as a differentiable torch function.

    Args:
        world: a rigidiff.World.
        q: (nq,) or (B, nq) float64 tensor; v, tau: (nv,) or (B, nv).
        params: optional (len(names),) float64 tensor of parameter values used for this call (shared by
            the batch); gradients reach it. names: the parameters it holds (default: all of
            world.parameters().names, in that order).
    Returns:
        (q_next, v_next), shaped like q and v: each row as world.step gives it on a new world (the rows
        run on a private copy of the world, without the warm start from earlier steps or other rows).
    """
    _check_world(world)
    nq, nv = world.nq, world.nv
    q = _check_tensor(q, "q", nq, (1, 2))
    v = _check_tensor(v, "v", nv, (q.dim(),), " (as many as q)")
    tau = _check_tensor(tau, "tau", nv, (q.dim(),), " (as many as q)")
    if q.dim() == 2 and not (q.shape[0] == v.shape[0] == tau.shape[0]):
        raise ValueError(f"q, v and tau must share the batch size, got {q.shape[0]}, {v.shape[0]}, {tau.shape[0]}")
    params, names = _resolve_params(world, params, names)
    return _Step.apply(_normalized(world, q), v, tau, params, world, names)


def rollout(world, q0, v0, taus, params=None, names=None):
    """A rollout of T steps as a differentiable torch function (reverse pass in one C++ call per batch item).

    Args:
        world: a rigidiff.World.
        q0: (nq,) or (B, nq) float64 tensor; v0: (nv,) or (B, nv); taus: (T, nv) or (B, T, nv).
        params, names: as in step().
    Returns:
        (Q, V): (T+1, nq) and (T+1, nv), or with a leading batch dimension.
    """
    _check_world(world)
    nq, nv = world.nq, world.nv
    q0 = _check_tensor(q0, "q0", nq, (1, 2))
    v0 = _check_tensor(v0, "v0", nv, (q0.dim(),), " (as many as q0)")
    taus = _check_tensor(taus, "taus", nv, (q0.dim() + 1,), " (one more than q0)")
    if q0.dim() == 2 and not (q0.shape[0] == v0.shape[0] == taus.shape[0]):
        raise ValueError(f"q0, v0 and taus must share the batch size, got {q0.shape[0]}, {v0.shape[0]}, "
                         f"{taus.shape[0]}")
    params, names = _resolve_params(world, params, names)
    return _Rollout.apply(_normalized(world, q0), v0, taus, params, world, names)
