"""Per-joint drive and friction columns that stand beside the rigid-body regressor.

Each term adds one parameter per joint, acting on that joint's row only:

=================  ======  ==================================================  ==============
term               symbol  column entry on joint j's row                        parameter unit
=================  ======  ==================================================  ==============
``rotor_inertia``  Ia      rotor acceleration θ̈_j [rad/s², link units]          kg·m²
``offset``         tau0    1                                                    N·m
``coulomb``        Fc      sign(velocity_j)                                     N·m
``viscous``        Fv      velocity_j [rad/s]                                   N·m·s/rad
=================  ======  ==================================================  ==============

The velocity is the link velocity q̇, or the rotor velocity θ̇ where the friction sits on the motor
side (thesis ch.5 eq. (P2-15)); the caller chooses. Richer friction models live in
:mod:`dynid.friction`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dynid.errors import InputError

#: Known per-joint terms and the symbol of their parameters.
JOINT_TERM_SYMBOLS = {'rotor_inertia': 'Ia', 'offset': 'tau0', 'coulomb': 'Fc', 'viscous': 'Fv'}


def check_terms(terms: Sequence[str]) -> tuple[str, ...]:
    """Validate term names (unique, known) and return them as a tuple."""
    terms = tuple(terms)
    unknown = [t for t in terms if t not in JOINT_TERM_SYMBOLS]
    if unknown:
        raise InputError(f'unknown joint terms {unknown}; known: {sorted(JOINT_TERM_SYMBOLS)}')
    if len(set(terms)) != len(terms):
        raise InputError(f'joint terms repeat: {list(terms)}')
    return terms


def per_joint_names(symbols: Sequence[str], n_joints: int) -> list[str]:
    """Names of per-joint parameters, grouped by symbol then joint (from 1): ``Fc_1``, …, ``Fc_n``, ``Fv_1``, …"""
    return [f'{symbol}_{j + 1}' for symbol in symbols for j in range(n_joints)]


def per_joint_columns(features: Sequence[np.ndarray]) -> np.ndarray:
    """Block columns of per-joint features, rows grouped sample by sample like the rigid-body regressor.

    Args:
        features: k arrays of shape (N, n); feature t of joint j multiplies parameter t·n + j and
            acts on joint j's row only.

    Returns:
        (N·n, k·n) array, columns named by :func:`per_joint_names`.
    """
    first = np.atleast_2d(np.asarray(features[0], dtype=float))
    n_samples, n = first.shape
    out = np.zeros((n_samples, n, len(features) * n))
    joints = np.arange(n)
    for t, value in enumerate(features):
        out[:, joints, t * n + joints] = value
    return out.reshape(n_samples * n, len(features) * n)


def joint_term_names(terms: Sequence[str], n_joints: int) -> list[str]:
    """Parameter names, grouped by term then joint, joints numbered from 1: ``Fc_1``, …, ``Fc_n``."""
    return per_joint_names([JOINT_TERM_SYMBOLS[t] for t in check_terms(terms)], n_joints)


def joint_term_regressor(
    terms: Sequence[str],
    velocity: np.ndarray,
    acceleration: np.ndarray | None = None,
) -> np.ndarray:
    """Columns of the per-joint terms, rows grouped sample by sample like the rigid-body regressor.

    Args:
        terms: term names from :data:`JOINT_TERM_SYMBOLS`.
        velocity: (N, n) velocity [rad/s] at which friction acts (link or rotor side).
        acceleration: (N, n) rotor acceleration [rad/s², link units]; needed for ``rotor_inertia``.

    Returns:
        (N·n, len(terms)·n) array.
    """
    terms = check_terms(terms)
    velocity = np.atleast_2d(np.asarray(velocity, dtype=float))
    values = []
    for term in terms:
        if term == 'rotor_inertia':
            if acceleration is None:
                raise InputError('the rotor_inertia term needs the rotor acceleration')
            a = np.atleast_2d(np.asarray(acceleration, dtype=float))
            if a.shape != velocity.shape:
                raise InputError(f'acceleration shape {a.shape} differs from velocity shape {velocity.shape}')
            values.append(a)
        elif term == 'offset':
            values.append(np.ones_like(velocity))
        elif term == 'coulomb':
            values.append(np.sign(velocity))
        else:
            values.append(velocity)
    return per_joint_columns(values)
