"""FeedforwardContext: what a feedforward term may need beyond the desired motion (q, q̇, q̈).

Per-sample signals are (N, n) arrays for a batch of N samples or (n,) arrays (one sample, or one value
held over the whole batch), joints in model order. Everything is optional: a term that needs a signal
that is absent falls back to a documented default (e.g. the static friction's fallback temperature) or
computes it itself (the nominal joint torque).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from dynid.errors import InputError
from dynid.model.inertial import Payload

#: Context fields that hold one value per sample and joint.
SAMPLED_FIELDS = ('temperature', 'joint_torque', 'desired_joint_torque')


@dataclass
class FeedforwardContext:
    """Signals beside the desired motion (module docstring).

    Attributes:
        temperature: joint temperature T [°C]; None: the friction terms' fallback temperature.
        alpha: the latest adaptive friction estimate α̂ (n, 2) or (2,): α1 [-], α2 [N·m·s/rad]
            (:attr:`dynid.estimate.AdaptiveFrictionEstimator.alpha`); None: the term's own value.
        payload: the payload at the flange now; None: the rigid-body term's configured payload.
        joint_torque: measured joint torque τ_j [N·m, link side] (e.g. Franka's τ_J); the load of the
            friction terms configured with ``load: measured``.
        desired_joint_torque: nominal joint torque τ_J,d = M(q_d)q̈_d + C(q_d, q̇_d)q̇_d + g(q_d)
            [N·m, link side], payload included: the load torque of the load-dependent Coulomb friction
            (Madsen 2020, ch.6 eq. (29)) and the torque the joints deflect under (flexible joint).
            :class:`~dynid.control.Feedforward` fills it from its rigid-body model; a term evaluated on
            its own computes it when None.
    """

    temperature: np.ndarray | None = None
    alpha: np.ndarray | None = None
    payload: Payload | None = None
    joint_torque: np.ndarray | None = None
    desired_joint_torque: np.ndarray | None = None

    def checked(self, n_samples: int | None, n_joints: int) -> FeedforwardContext:
        """A copy with float arrays of valid shapes ((N, n) or (n,) per sample; α (n, 2)).

        ``n_samples`` None: one sample, the per-sample arrays must be (n,). Shapes that do not fit are
        refused with an :class:`InputError` (a programming error, not a fault of one sample).
        """
        changes = {}
        allowed = ((n_joints,),) if n_samples is None else ((n_joints,), (n_samples, n_joints))
        for name in SAMPLED_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            array = value if type(value) is np.ndarray and value.dtype == np.float64 else np.asarray(value, dtype=float)
            if array.shape not in allowed:
                raise InputError(f'context {name} must have shape {" or ".join(map(str, allowed))}, '
                                 f'got {array.shape}')
            if array is not value:
                changes[name] = array
        if self.alpha is not None:
            alpha = np.asarray(self.alpha, dtype=float)
            if alpha.shape not in ((2,), (n_joints, 2)):
                raise InputError(f'context alpha must have shape (2,) or ({n_joints}, 2), got {alpha.shape}')
            if alpha.shape != (n_joints, 2) or alpha is not self.alpha:
                changes['alpha'] = np.broadcast_to(alpha, (n_joints, 2))
        if self.payload is not None and not isinstance(self.payload, Payload):
            raise InputError(f'context payload must be a dynid.model.Payload, got {type(self.payload).__name__}')
        return replace(self, **changes) if changes else self

    def finite_rows(self, n_samples: int) -> np.ndarray:
        """(N,) True where every given per-sample signal (and α) is finite; call on a :meth:`checked` copy."""
        good = np.ones(n_samples, dtype=bool)
        for name in SAMPLED_FIELDS:
            value = getattr(self, name)
            if value is not None:
                good &= np.all(np.isfinite(value), axis=-1) if value.ndim == 2 else bool(np.isfinite(value).all())
        if self.alpha is not None and not np.isfinite(self.alpha).all():
            good[:] = False
        return good

    def rows(self, index: np.ndarray) -> FeedforwardContext:
        """The context of the selected samples (per-sample (N, n) arrays sliced; held values kept)."""
        changes = {name: getattr(self, name)[index] for name in SAMPLED_FIELDS
                   if getattr(self, name) is not None and getattr(self, name).ndim == 2}
        return replace(self, **changes)

    def copy(self) -> FeedforwardContext:
        """A shallow copy (the Feedforward fills ``desired_joint_torque`` on its own copy)."""
        return replace(self)
