"""A particle resting on a corner or an edge of a convex mesh link (docs/contact.md, convex shapes): the
contact is the particle's centre against that vertex or edge, so its normal turns as either moves, and
the step Jacobians are those of the step (a normal held in the particle's frame missed the turn: the
Jacobian columns of the link's angle and the particle's position were off by up to 100 %)."""

import numpy as np
import pytest

import rigidiff as rd

trimesh = pytest.importorskip("trimesh")


def icosahedron():
    return trimesh.creation.icosahedron().apply_scale(0.1)  # a convex mesh: its vertices are corners


def link_with_particle(where: str, joint) -> rd.World:
    """A link holding the icosahedron, and a 1 cm particle 0.1 mm off its top corner or its edge."""
    mesh = icosahedron()
    vertices = mesh.vertices
    top = int(np.argmax(vertices[:, 2]))
    if where == "corner":
        anchor = vertices[top]
        out = anchor / np.linalg.norm(anchor) + [0.1, 0.05, 0.0]  # inside the corner's cone of normals
    else:
        other = next(j for e in mesh.edges_unique for i, j in (e, e[::-1]) if i == top)
        anchor = 0.5 * (vertices[top] + vertices[other])
        out = anchor.copy()  # from the centre through the edge's middle: in the edge's cone of normals
    world = rd.World(dt=2e-3)
    arm = rd.Skeleton("arm")
    body = arm.add_body("link", joint=joint, inertia=rd.Inertia(1.0, rotational_inertia=np.eye(3) * 0.01))
    body.add_shape(rd.Mesh(mesh))
    world.add_skeleton(arm)
    world.add_particles([anchor + 0.0099 * out / np.linalg.norm(out)], masses=0.05, radius=0.01)
    world.contact_options(tolerance=1e-12, bounce_correction=False)  # the discrete step's own derivatives
    return world


@pytest.mark.parametrize("where, contact_type", [("corner", "point_point"), ("edge", "segment_point")])
@pytest.mark.parametrize("joint", [rd.RevoluteJoint("hinge", axis=(0.0, 1.0, 0.0)), rd.FreeJoint("root")],
                         ids=["revolute", "free"])
def test_a_particle_on_a_corner_or_edge_has_the_step_jacobians(where, contact_type, joint):
    world = link_with_particle(where, joint)
    q, v = world.q, np.zeros(world.nv)
    v[-1] = -0.05  # pressing on the corner
    tau = np.zeros(world.nv)
    J = world.step_jacobians(q, v, tau)
    assert J.contacts.types == [contact_type] and J.contacts.row_classes[0] == "clamping"
    for wrt, (dq, dv) in {"q": (J.dq_dq, J.dv_dq), "v": (J.dq_dv, J.dv_dv)}.items():
        for k in range(world.nv):
            h = 1e-7
            e = np.zeros(world.nv)
            e[k] = h
            sides = []
            for s in (1.0, -1.0):
                start = (world.integrate(q, s * e), v) if wrt == "q" else (q, v + s * e)
                sides.append(world.step(*start, tau))
                assert world.last_contacts().row_classes == J.contacts.row_classes
            fd = np.r_[world.difference(sides[1][0], sides[0][0]), sides[0][1] - sides[1][1]] / (2 * h)
            np.testing.assert_allclose(np.r_[dq[:, k], dv[:, k]], fd, rtol=0, atol=1e-6 * max(np.abs(fd).max(), 1e-3))
