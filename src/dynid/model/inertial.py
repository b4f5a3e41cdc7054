"""Inertial parameters of rigid bodies: ordering, names, frame changes, shapes and payloads.

A body's ten **standard inertial parameters** follow pinocchio's order (``Inertia.toDynamicParameters``)::

    [m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]

with m the mass [kg], (mx, my, mz) = m·c the first moments [kg·m] of the centre of mass c, and the
inertia tensor [kg·m²] taken **about the origin of the body frame** (not about the centre of
mass), all expressed in that frame. Taken about the frame origin, the dynamics are linear in these
parameters (thesis ch.5 eq. (P2-4), (P2-5)). The thesis writes the same quantities as
XX, XY, XZ, YY, YZ, ZZ, mX, mY, mZ, m (in another order).

The same ten numbers as a 4×4 **pseudo-inertia** J (:func:`pseudo_inertia`) say whether a body is
physical: J ⪰ 0 exactly when some non-negative mass density has these moments (Wensing, Kim and
Slotine 2017, Theorem 1); :func:`describe_link` gives the readable view (mass, CoM, principal moments,
triangle inequalities) that the identification's report and the URDF export share.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from dynid.errors import InputError, checked_choice

#: Names of the ten standard inertial parameters of one body, in pinocchio's order.
INERTIAL_PARAMETER_NAMES = ('m', 'mx', 'my', 'mz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')

_SYMMETRIC_INDEX = ((4, 5, 7), (5, 6, 8), (7, 8, 9))  # tensor entry -> parameter index


def _skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def split_parameters(phi: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Split a 10-vector into mass [kg], first moment m·c [kg·m] and inertia about the origin [kg·m²]."""
    phi = np.asarray(phi, dtype=float)
    inertia = np.array([[phi[i] for i in row] for row in _SYMMETRIC_INDEX])
    return float(phi[0]), phi[1:4].copy(), inertia


def join_parameters(mass: float, first_moment: np.ndarray, inertia_origin: np.ndarray) -> np.ndarray:
    """Inverse of :func:`split_parameters`."""
    i = np.asarray(inertia_origin, dtype=float)
    return np.array([mass, *first_moment, i[0, 0], i[0, 1], i[1, 1], i[0, 2], i[1, 2], i[2, 2]])


def parameters_from_com(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """Standard parameters of a body from its mass [kg], centre of mass [m] and inertia about the CoM.

    Parallel-axis theorem (thesis ch.5 eq. (P2-4)): I_origin = I_com + m·(cᵀc·E₃ − c·cᵀ).
    """
    c = np.asarray(com, dtype=float)
    inertia_origin = np.asarray(inertia_com, dtype=float) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return join_parameters(mass, mass * c, inertia_origin)


def transform_parameters(phi: np.ndarray, rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """Express the parameters of a body given in frame F in frame J, where x_J = R·x_F + p.

    With h = m·c: m' = m, h' = R·h + m·p and, about the origin of J,
    I' = R·I·Rᵀ − m·[p]ₓ² − [p]ₓ[R·h]ₓ − [R·h]ₓ[p]ₓ. The map is linear in phi, so it also
    transforms regressor columns (see :func:`parameter_transform_matrix`).
    """
    mass, first_moment, inertia = split_parameters(phi)
    r = np.asarray(rotation, dtype=float)
    p = np.asarray(translation, dtype=float)
    h = r @ first_moment
    sp, sh = _skew(p), _skew(h)
    inertia_j = r @ inertia @ r.T - mass * sp @ sp - sp @ sh - sh @ sp
    return join_parameters(mass, h + mass * p, inertia_j)


def parameter_transform_matrix(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """10×10 matrix A with phi_J = A·phi_F for the frame change of :func:`transform_parameters`."""
    return np.column_stack([transform_parameters(e, rotation, translation) for e in np.eye(10)])


def to_pinocchio_inertia(phi: np.ndarray) -> pin.Inertia:
    """pinocchio.Inertia from 10 standard parameters; a body of zero mass must have all zeros."""
    phi = np.asarray(phi, dtype=float)
    if phi[0] == 0.0:
        if np.any(phi[1:]):
            raise InputError('a body of zero mass must have zero first moments and inertia')
        return pin.Inertia.Zero()
    return pin.Inertia.FromDynamicParameters(phi)


def pseudo_inertia(phi: np.ndarray) -> np.ndarray:
    """4×4 pseudo-inertia J = [[½tr(I)E − I, h], [hᵀ, m]] of 10 standard parameters (Wensing 2017 eq. (8))."""
    mass, h, inertia = split_parameters(phi)
    j = np.empty((4, 4))
    j[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    j[:3, 3] = j[3, :3] = h
    j[3, 3] = mass
    return j


#: (16, 10): vec(J) = PSEUDO_INERTIA_MAP @ φ (row-major vec; J is linear in the standard parameters φ).
PSEUDO_INERTIA_MAP = np.column_stack([pseudo_inertia(e).reshape(-1) for e in np.eye(10)])


def parameters_of_pseudo_inertia(j: np.ndarray) -> np.ndarray:
    """Inverse of :func:`pseudo_inertia`: I = tr(Σ)·E − Σ."""
    sigma = j[:3, :3]
    inertia = np.trace(sigma) * np.eye(3) - sigma
    return np.array([j[3, 3], *j[:3, 3], inertia[0, 0], inertia[0, 1], inertia[1, 1], inertia[0, 2],
                     inertia[1, 2], inertia[2, 2]])


def describe_link(phi: np.ndarray) -> dict:
    """Mass [kg], centre of mass [m], inertia about the CoM [kg·m²] (joint frame axes), principal moments and
    the triangle inequalities (each principal moment ≤ the sum of the other two) of 10 standard parameters."""
    mass, h, inertia = split_parameters(phi)
    com = h / mass if mass > 0 else np.zeros(3)
    inertia_com = inertia - mass * (com @ com * np.eye(3) - np.outer(com, com))
    moments = np.linalg.eigvalsh(0.5 * (inertia_com + inertia_com.T))
    tolerance = 1e-9 * max(1.0, float(np.abs(moments).max()))
    triangle = bool(all(moments[k] <= moments.sum() - moments[k] + tolerance for k in range(3)))
    smallest = float(np.linalg.eigvalsh(pseudo_inertia(phi))[0])
    return {'mass': mass, 'com': com, 'inertia_com': inertia_com, 'principal_moments': moments,
            'triangle_inequalities': triangle, 'min_pseudo_eigenvalue': smallest}


def cylinder_inertia(mass: float, radius: float, length: float, axis: str = 'z') -> np.ndarray:
    """Inertia tensor [kg·m²] about the centre of a uniform solid cylinder, axis along x, y or z."""
    checked_choice('cylinder axis', axis, ('x', 'y', 'z'))
    if mass < 0 or radius < 0 or length < 0:
        raise InputError('cylinder mass, radius and length must be non-negative')
    along = mass * radius**2 / 2.0
    across = mass * (3.0 * radius**2 + length**2) / 12.0
    diagonal = [across, across, across]
    diagonal['xyz'.index(axis)] = along
    return np.diag(diagonal)


def check_inertia(inertia: np.ndarray, what: str) -> np.ndarray:
    """Return a 3×3 inertia tensor after checking it is finite, symmetric and positive semidefinite."""
    i = np.asarray(inertia, dtype=float)
    if i.shape != (3, 3) or not np.all(np.isfinite(i)):
        raise InputError(f'{what}: inertia must be a finite 3x3 matrix, got shape {i.shape}')
    scale = max(1.0, float(np.abs(i).max()))
    if not np.allclose(i, i.T, atol=1e-12 * scale):
        raise InputError(f'{what}: inertia matrix is not symmetric')
    if np.linalg.eigvalsh(i).min() < -1e-12 * scale:
        raise InputError(f'{what}: inertia matrix is not positive semidefinite')
    return i


@dataclass(frozen=True)
class Payload:
    """A rigid payload fixed to the robot's flange frame.

    Attributes:
        mass: mass [kg], >= 0.
        com: centre of mass [m] in the flange frame.
        inertia: inertia tensor [kg·m²] about the centre of mass, flange-frame axes.
    """

    mass: float
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))

    def __post_init__(self) -> None:
        mass = float(self.mass)
        if not np.isfinite(mass) or mass < 0:
            raise InputError(f'payload mass must be a finite non-negative number of kg, got {self.mass!r}')
        com = np.asarray(self.com, dtype=float).reshape(-1)
        if com.shape != (3,) or not np.all(np.isfinite(com)):
            raise InputError(f'payload centre of mass must be 3 finite numbers [m], got {self.com!r}')
        object.__setattr__(self, 'mass', mass)
        object.__setattr__(self, 'com', com)
        object.__setattr__(self, 'inertia', check_inertia(self.inertia, 'payload'))

    def parameters(self) -> np.ndarray:
        """The payload's 10 standard inertial parameters about the flange-frame origin."""
        return parameters_from_com(self.mass, self.com, self.inertia)

    @classmethod
    def from_parameters(cls, phi: np.ndarray) -> Payload:
        """Payload from 10 standard parameters about the flange origin (mass must be > 0 if moments are)."""
        mass, first_moment, inertia_origin = split_parameters(phi)
        if mass <= 0:
            if np.any(first_moment) or np.any(inertia_origin):
                raise InputError('payload parameters with zero mass must all be zero')
            return cls(0.0)
        com = first_moment / mass
        inertia_com = inertia_origin - mass * (com @ com * np.eye(3) - np.outer(com, com))
        return cls(mass, com, inertia_com)
