"""The robot file's links as the prior and the consistency constraint see them.

A robot file's link whose pseudo-inertia is not positive definite (negative or zero mass, an inertia about the
centre of mass that violates a triangle inequality or is not positive semidefinite) is no physical body (Wensing,
Kim and Slotine 2017, Theorem 1). It is named, left out of the prior (:mod:`dynid.identify.solve.prior`), and only its
nearest consistent pseudo-inertia serves as the scale of the consistency constraint
(:mod:`dynid.identify.solve.physical`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from dynid.model.inertial import describe_link, pseudo_inertia


@dataclass(frozen=True)
class RobotFileLink:
    """One link of the robot file: the body the joint moves (``link``, as :func:`link_names` names it, and
    ``inertial``, the URDF link(s) holding its inertial), its 10 standard parameters, what makes it impossible
    (None: a physical body; 'no inertia' for a massless link), and the pseudo-inertia that scales its terms."""

    joint: str
    link: str
    inertial: str
    parameters: np.ndarray
    problem: str | None
    reference: np.ndarray  # 4×4, positive definite: J̄ itself, or the nearest consistent one

    @property
    def in_prior(self) -> bool:
        return self.problem is None

    def line(self) -> str:
        """One line for people naming the link and what is wrong with it."""
        return f'robot file link {self.inertial!r} (joint {self.joint}): {self.problem}'


def link_names(robot) -> list[str]:
    """The body (URDF link) each joint moves: the first body frame attached to the joint."""
    model = robot.pinocchio_model
    names = []
    for j in range(1, model.njoints):
        frames = [f.name for f in model.frames if f.parentJoint == j and f.type == pin.FrameType.BODY]
        names.append(frames[0] if frames else model.names[j])
    return names


def _inertial_links(robot) -> set[str]:
    """The URDF links with an ``<inertial>`` of non-zero mass (empty for a robot not read from a URDF)."""
    from xml.etree import ElementTree

    if not robot.urdf:
        return set()
    try:
        text = robot.urdf.strip()
        root = ElementTree.fromstring(text) if text.startswith('<') else ElementTree.parse(robot.urdf).getroot()
    except (ElementTree.ParseError, OSError):
        return set()
    held = set()
    for link in root.iter('link'):
        mass = link.find('inertial/mass')
        try:
            if mass is not None and float(mass.get('value', '0')) != 0.0:
                held.add(link.get('name'))
        except ValueError:
            continue
    return held


def _body_links(robot) -> list[str]:
    """Per joint, the name of the link whose inertia the joint moves: the URDF link(s) holding the inertial of
    the joint's body (links rigidly attached are one body, joined by ' + '), else :func:`link_names`."""
    held = _inertial_links(robot)
    model = robot.pinocchio_model
    names = []
    for j, fallback in enumerate(link_names(robot), start=1):
        holders = [f.name for f in model.frames if f.parentJoint == j and f.type == pin.FrameType.BODY
                   and f.name in held]
        names.append(' + '.join(holders) if holders else fallback)
    return names


def _inertia_problem(phi: np.ndarray) -> str | None:
    """Why 10 standard parameters are no physical body, in words; None when they are one."""
    if not np.all(np.isfinite(phi)):
        return 'inertial parameters are not finite'
    if not np.any(phi):
        return 'no inertia (massless)'
    link = describe_link(phi)
    if link['mass'] <= 0:
        return f'mass {link["mass"]:.4g} kg is not positive'
    moments = link['principal_moments']
    if moments[0] < 0:
        return (f'inertia about the centre of mass is not positive semidefinite (principal moment {moments[0]:.3g} '
                f'kg·m²)')
    if not link['triangle_inequalities']:
        return (f'inertia about the centre of mass violates the triangle inequality (principal moments '
                f'{moments[0]:.4g}, {moments[1]:.4g}, {moments[2]:.4g} kg·m²: {moments[2]:.4g} > '
                f'{moments[0]:.4g} + {moments[1]:.4g})')
    if link['min_pseudo_eigenvalue'] <= 0:
        return f'pseudo-inertia is not positive definite (least eigenvalue {link["min_pseudo_eigenvalue"]:.3g})'
    return None


def _nearest_consistent(j: np.ndarray, floor: float) -> np.ndarray:
    """The symmetric matrix nearest to ``j`` (Frobenius) with every eigenvalue ≥ ``floor``."""
    values, vectors = np.linalg.eigh(0.5 * (j + j.T))
    return vectors @ np.diag(np.maximum(values, floor)) @ vectors.T


def robot_file_links(robot) -> list[RobotFileLink]:
    """The robot file's link inertias checked one by one (module docstring, "Impossible links")."""
    standard = robot.standard_parameters
    pseudo = [pseudo_inertia(standard[10 * i:10 * i + 10]) for i in range(robot.n)]
    problems = [_inertia_problem(standard[10 * i:10 * i + 10]) for i in range(robot.n)]
    sizes = [np.trace(j) for j, problem in zip(pseudo, problems, strict=True) if problem is None]
    typical = float(np.mean(sizes)) if sizes else 1.0
    links = []
    holders = _body_links(robot)
    for i, (joint, link) in enumerate(zip(robot.joint_names, link_names(robot), strict=True)):
        j = pseudo[i]
        if problems[i] is None:  # positive definite already (a point mass or a flat body has a problem); a hair
            # of every direction bounds the inverse square root the prior scales by for a nearly flat body
            reference = j + 1e-6 * max(np.trace(j), 1e-6) * np.eye(4)
        else:
            reference = _nearest_consistent(j, 1e-6 * max(np.trace(np.abs(j)), typical))
        links.append(RobotFileLink(joint, link, holders[i], standard[10 * i:10 * i + 10].copy(), problems[i],
                                   reference))
    return links
