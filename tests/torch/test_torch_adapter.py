"""The PyTorch adapter: gradcheck of step and rollout (state, torques and parameters), batching,
purity and input checks."""

import numpy as np
import pytest
from rdsupport import hinge_chain, sliding_box_world, tree_world, with_passive_terms, world_of

torch = pytest.importorskip("torch")
import rigidiff.torch as rdt  # noqa: E402


def tensors(*arrays):
    return [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]


@pytest.fixture
def tree():
    world = tree_world(3, dt=5e-3)
    rng = np.random.default_rng(3)
    q = world.random_configuration(rng)
    v, tau = 0.5 * rng.normal(size=(2, world.nv))
    return world, q, v, tau


def test_step_matches_world_step_and_gradcheck_passes(tree):
    world, q, v, tau = tree
    qt, vt, tt = tensors(q, v, tau)
    qn, vn = rdt.step(world, qt, vt, tt)
    q_ref, v_ref = world.step(q, v, tau)
    np.testing.assert_allclose(qn.detach().numpy(), q_ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(vn.detach().numpy(), v_ref)
    assert torch.autograd.gradcheck(lambda a, b, c: rdt.step(world, a, b, c), (qt, vt, tt), eps=1e-6, atol=1e-6,
                                    rtol=1e-5)


def test_step_gradcheck_with_parameters_and_purity(tree):
    world, q, v, tau = tree
    names = ["tip/mass", "arm/com_y", "head_joint/damping_1", "gravity_z", "slider_joint/armature"]
    before = world.parameters().values.copy()
    p = torch.tensor([world.parameters()[n] for n in names], dtype=torch.float64, requires_grad=True)
    qt, vt, tt = tensors(q, v, tau)
    assert torch.autograd.gradcheck(lambda a, b, c, d: rdt.step(world, a, b, c, params=d, names=names),
                                    (qt, vt, tt, p), eps=1e-6, atol=1e-6, rtol=1e-5)
    np.testing.assert_array_equal(world.parameters().values, before)
    # other values of the parameters change the result, and the world forgets them afterwards
    heavier = p.detach().clone()
    heavier[0] *= 2.0
    v_heavy = rdt.step(world, qt, vt, tt, params=heavier, names=names)[1]
    assert not np.allclose(v_heavy.detach().numpy(), world.step(q, v, tau)[1])
    np.testing.assert_array_equal(world.parameters().values, before)


def test_batched_step_equals_single_steps(tree):
    world, _, _, _ = tree
    rng = np.random.default_rng(0)
    Q = np.stack([world.random_configuration(rng) for _ in range(3)])
    V, T = rng.normal(size=(2, 3, world.nv))
    qt, vt, tt = tensors(Q, V, T)
    qn, vn = rdt.step(world, qt, vt, tt)
    assert qn.shape == (3, world.nq)
    (qn.sum() + (vn**2).sum()).backward()
    for b in range(3):
        qs, vs, ts = tensors(Q[b], V[b], T[b])
        q1, v1 = rdt.step(world, qs, vs, ts)
        (q1.sum() + (v1**2).sum()).backward()
        np.testing.assert_allclose(qt.grad[b].numpy(), qs.grad.numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(tt.grad[b].numpy(), ts.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_rollout_gradcheck_with_parameters():
    world = with_passive_terms(world_of(hinge_chain(3)), seed=1)
    rng = np.random.default_rng(1)
    q0, v0 = world.random_configuration(rng), 0.3 * rng.normal(size=world.nv)
    taus = 0.3 * rng.normal(size=(15, world.nv))
    names = ["link1/mass", "link2/com_z", "j0/damping", "j2/stiffness"]
    p = torch.tensor([world.parameters()[n] for n in names], dtype=torch.float64, requires_grad=True)
    args = tensors(q0, v0, taus) + [p]
    assert torch.autograd.gradcheck(lambda a, b, c, d: rdt.rollout(world, a, b, c, params=d, names=names), args,
                                    eps=1e-6, atol=1e-6, rtol=1e-5)


def test_rollout_on_floating_tree_and_batch(tree):
    world, q, v, _ = tree
    rng = np.random.default_rng(2)
    taus = 0.2 * rng.normal(size=(2, 8, world.nv))
    q0 = np.stack([q, world.random_configuration(rng)])
    v0 = np.stack([v, v])
    args = tensors(q0, v0, taus)
    Q, V = rdt.rollout(world, *args)
    assert Q.shape == (2, 9, world.nq) and V.shape == (2, 9, world.nv)
    np.testing.assert_array_equal(V[1].detach().numpy(), world.rollout(q0[1], v0[1], taus[1])[1])
    assert torch.autograd.gradcheck(lambda a, b, c: rdt.rollout(world, a, b, c), args, eps=1e-6, atol=1e-6,
                                    rtol=1e-5)


def test_bad_input(tree):
    world, q, v, tau = tree
    qt, vt, tt = tensors(q, v, tau)
    with pytest.raises(ValueError, match="float64"):
        rdt.step(world, qt.float(), vt, tt)
    with pytest.raises(ValueError, match="q must have 1 or 2 dimensions with last size"):
        rdt.step(world, qt[:-1], vt, tt)
    with pytest.raises(ValueError, match="torch.Tensor"):
        rdt.step(world, q, vt, tt)
    with pytest.raises(ValueError, match="no parameter named 'tip/mas'"):
        rdt.step(world, qt, vt, tt, params=torch.zeros(1, dtype=torch.float64), names=["tip/mas"])
    with pytest.raises(ValueError, match="names were given without params"):
        rdt.step(world, qt, vt, tt, names=["tip/mass"])
    with pytest.raises(ValueError, match=r"taus must have 2 dimensions \(one more than q0\)"):
        rdt.rollout(world, qt, vt, tt)
    with pytest.raises(ValueError, match=r"v must have 2 dimensions \(as many as q\)"):  # q is a batch of one
        rdt.step(world, qt[None], vt, tt[None])
    with pytest.raises(ValueError, match=r"v0 must have 1 dimensions \(as many as q0\)"):
        rdt.rollout(world, qt, vt[None], tt[None])
    with pytest.raises(ValueError, match=r"q has shape \(0, \d+\): its batch .* must not be empty"):
        rdt.step(world, qt[None][:0], vt[None][:0], tt[None][:0])
    with pytest.raises(ValueError, match="taus has shape .* must not be empty"):
        rdt.rollout(world, qt, vt, tt[None][:0])


def test_a_world_changed_between_forward_and_backward_is_refused(tree):
    """dt or parameters changed after the forward pass would give the gradients of another step."""
    world, q, v, tau = tree
    for change in (lambda: setattr(world, "dt", 2 * world.dt),
                   lambda: world.set_parameters({world.parameters().names[0]: 3.0})):
        qt, vt, tt = tensors(q, v, tau)
        saved_dt, saved = world.dt, world.parameters().values.copy()
        _, vn = rdt.step(world, qt, vt, tt)
        change()
        with pytest.raises(RuntimeError, match="changed between this step's forward and backward"):
            vn.sum().backward()
        world.dt = saved_dt
        world.set_parameters(saved)
        _, vn = rdt.step(world, qt, vt, tt)
        vn.sum().backward()  # unchanged: fine
        assert qt.grad is not None


def mode_changing_states(mu=0.8):
    """A box sliding, turning and slowing down on four corners, stepped until a state where the
    previous step's contact mode (the warm start) is a valid mode of the next step but not the one a
    new world solves: (the state before it, that state)."""
    world, q, v = sliding_box_world(mu=mu)
    cold = sliding_box_world(mu=mu)[0]
    cold.contact_options(warm_start=False)
    tau, before = np.zeros(6), None
    for _ in range(400):
        qn, vn = world.step(q, v, tau)
        cold.step(q, v, tau)
        if before is not None and world.last_contacts().row_classes != cold.last_contacts().row_classes:
            return before, (q, v)
        before, (q, v) = (q, v), (qn, vn)
    pytest.fail("no state where the warm start changes the contact mode")


def test_each_row_of_a_batch_differentiates_its_own_contact_mode_and_the_world_is_left_alone():
    """Rows in several contact modes (in the air, sliding, coming to rest where the previous row's mode
    would also be valid): each row's gradients are those of a new world's step_jacobians at that row,
    whatever the rows before it or the world's own history; the world's parameters, change count and
    last contacts are untouched (its parameters are never set, not even for a while)."""
    world, q_slide, v_slide = sliding_box_world(mu=0.8)
    (q_before, v_before), (q_mode, v_mode) = mode_changing_states()
    q_air = q_slide.copy()
    q_air[2] += 0.3
    Q = np.stack([q_air, q_before, q_mode, q_slide, q_before, q_mode])
    V = np.stack([v_slide, v_before, v_mode, v_slide, v_before, v_mode])
    TAU = np.zeros_like(V)
    names = ["box/mass", "box/shape0/friction"]
    values = np.array([1.5, 0.8])
    world.step(q_slide, v_slide, np.zeros(6))  # the world's own history: a sliding step
    contacts_before = world.last_contacts()
    revision, parameters = world._revision, world.parameters().values.copy()
    world.set_parameters = None  # the adapter must not set the world's parameters
    rng = np.random.default_rng(5)
    w_q, w_v = rng.normal(size=(len(Q), world.nq)), rng.normal(size=(len(Q), world.nv))
    qt, vt, tt = tensors(Q, V, TAU)
    p = torch.tensor(values, requires_grad=True)
    qn, vn = rdt.step(world, qt, vt, tt, params=p, names=names)
    ((qn * torch.from_numpy(w_q)).sum() + (vn * torch.from_numpy(w_v)).sum()).backward()
    del world.set_parameters
    assert world._revision == revision
    np.testing.assert_array_equal(world.parameters().values, parameters)
    assert world.last_contacts().row_classes == contacts_before.row_classes
    np.testing.assert_array_equal(world.last_contacts().normal_impulses, contacts_before.normal_impulses)
    grad_p = np.zeros(len(names))
    modes = set()
    for b in range(len(Q)):
        fresh = sliding_box_world(mu=0.8)[0]
        fresh.set_parameters(dict(zip(names, values)))
        jac = fresh.step_jacobians(Q[b], V[b], TAU[b], wrt=names)
        modes.add(tuple(jac.contacts.row_classes))
        np.testing.assert_array_equal(vn[b].detach().numpy(), jac.v_next)
        g = fresh.step_vjp(Q[b], V[b], TAU[b], w_q[b], w_v[b], wrt=names, coordinates=True)
        np.testing.assert_allclose(qt.grad[b].numpy(), g.q, rtol=1e-10, atol=1e-12)
        gq = fresh._core_tangent_gradients(jac.q_next[None], w_q[b][None])[0]
        gv = jac.dq_dv.T @ gq + jac.dv_dv.T @ w_v[b]
        gtau = jac.dq_dtau.T @ gq + jac.dv_dtau.T @ w_v[b]
        np.testing.assert_allclose(vt.grad[b].numpy(), gv, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(tt.grad[b].numpy(), gtau, rtol=1e-9, atol=1e-12)
        grad_p += jac.dq_dp.T @ gq + jac.dv_dp.T @ w_v[b]
    np.testing.assert_allclose(p.grad.numpy(), grad_p, rtol=1e-9, atol=1e-12)
    assert len(modes) >= 3  # no contact, sliding, and the modes of the slowing box


def test_a_rollout_with_parameters_leaves_the_world_alone():
    """A rollout through contact with its own parameter values: the world's parameters are never set,
    the result is that of a world holding those values (warm-started within the rollout, as
    World.rollout), and the gradients reach the values."""
    world, q, v = sliding_box_world(mu=0.8)
    names, values = ["box/mass", "box/shape0/friction"], [1.6, 0.5]
    taus = np.tile([0.2, 0.0, 0.0, 0.0, 0.0, 0.01], (20, 1))
    revision = world._revision
    world.set_parameters = None
    p = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    Q, V = rdt.rollout(world, *tensors(q, v, taus), params=p, names=names)
    V[-1].sum().backward()
    del world.set_parameters
    assert world._revision == revision
    reference = sliding_box_world(mu=0.8)[0]
    reference.set_parameters(dict(zip(names, values)))
    traj = reference.rollout(q, v, taus, record=True)
    np.testing.assert_array_equal(V.detach().numpy(), traj.v)
    GV = np.zeros_like(traj.v)
    GV[-1] = 1.0
    np.testing.assert_allclose(p.grad.numpy(), traj.backward(None, GV, wrt=names).parameters, rtol=1e-12)


def test_particles_through_torch():
    """A particle sliding on the ground under a pushing force: gradients with respect to the state, the
    force and the particle's mass and friction pass torch's gradcheck."""
    import rigidiff as rd

    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.5)
    world.add_particles([[0.0, 0.0, 0.05]], masses=0.2, radius=0.05, friction=0.4)
    q = torch.tensor(world.neutral_configuration(), dtype=torch.float64, requires_grad=True)
    v = torch.tensor([0.3, 0.1, 0.0], dtype=torch.float64, requires_grad=True)
    tau = torch.tensor([1.5, 0.0, 0.0], dtype=torch.float64, requires_grad=True)
    names = ["p0/mass", "p0/friction"]
    p = torch.tensor([0.2, 0.4], dtype=torch.float64, requires_grad=True)
    qn, vn = rdt.step(world, q, v, tau, params=p, names=names)
    assert vn[0].item() > 0.3 and abs(qn[2].item() - 0.05) < 1e-9  # pushed harder than friction holds, on the ground
    assert torch.autograd.gradcheck(lambda a, b, c, d: rdt.step(world, a, b, c, params=d, names=names),
                                    (q, v, tau, p), eps=1e-7, atol=1e-6, rtol=1e-5)
