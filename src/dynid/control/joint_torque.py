"""Where the terms that need the load torque τ_J,d [N·m] get it from: the Feedforward's, else a rigid-body
model of their own (:class:`~dynid.control.rigid_body.RigidBodyTerm`), or the measured joint torque."""

from __future__ import annotations

import numpy as np

from dynid.control.context import FeedforwardContext
from dynid.control.rigid_body import RigidBodyTerm
from dynid.errors import InputError, checked_choice


class JointTorqueInput:
    """Where a term gets the load torque τ_J,d [N·m] from (mixin of the terms with ``needs_joint_torque``).

    ``context.desired_joint_torque`` when given (the Feedforward always gives it); otherwise the term's
    own rigid-body model of ``robot`` and ``result`` (built on first use). With ``load='measured'`` the
    measured joint torque ``context.joint_torque`` instead (refused when absent).
    """

    load = 'desired'
    needs_joint_torque = True

    def _use_joint_torque(self, robot, result, load: str = 'desired') -> None:
        self._robot, self._result = robot, result
        self.load = checked_choice(f'{self.name}: load', load, ('desired', 'measured'))
        self._joint_torque_model = None

    def joint_torque(self, q, dq, ddq, context: FeedforwardContext, single: bool = False) -> np.ndarray:
        """τ_J,d (or the measured τ_j) for the samples, (N, n) or (n,) with ``single``."""
        if self.load == 'measured':
            if context.joint_torque is None:
                raise InputError(f'{self.name}: load "measured" needs the measured joint torque in the context')
            return context.joint_torque
        if context.desired_joint_torque is not None:
            return context.desired_joint_torque
        if self._joint_torque_model is None:
            self._joint_torque_model = RigidBodyTerm(self._robot, self._result)
        model = self._joint_torque_model
        return model.step(q, dq, ddq, context) if single else model.evaluate(q, dq, ddq, context)
