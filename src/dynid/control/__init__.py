"""Feedforward laws and their pluggable terms.

::

    from dynid.control import Feedforward, FeedforwardContext
    ff = Feedforward(robot, result, ['rigid_body', 'rotor_inertia', 'friction_egms'],
                     compensate_gravity=False, effort_is_current=True)
    effort = ff.evaluate(q_d, dq_d, ddq_d, FeedforwardContext(temperature=T))   # (N, n), whole trajectory
    effort = ff.step(q_d[k], dq_d[k], ddq_d[k])                                 # (n,), streaming

Terms (entry-point group ``dynid.feedforward_terms``, :mod:`dynid.control.plugins`): ``rigid_body``,
``rotor_inertia`` (:mod:`~dynid.control.rigid_body`), ``friction_static``
(:mod:`~dynid.control.friction_static`), ``friction_egms``, ``friction_adaptive``
(:mod:`~dynid.control.friction_egms`), ``flexible_joint`` (:mod:`~dynid.control.flexible_joint`), and
any installed user term (or one :func:`register_term` made known). What a term is: :mod:`dynid.control.term`.
"""

from dynid.control.context import FeedforwardContext
from dynid.control.feedforward import Feedforward, limit_rate
from dynid.control.flexible_joint import FlexibleJointTerm
from dynid.control.friction_egms import AdaptiveFrictionTerm, EGMSFrictionTerm
from dynid.control.friction_static import StaticFrictionTerm
from dynid.control.plugins import GROUP, TermPlugin, build_term, register_term, term_names, unregister_term
from dynid.control.rigid_body import RigidBodyTerm, RotorInertiaTerm
from dynid.control.term import FeedforwardTerm

__all__ = [
    'GROUP',
    'AdaptiveFrictionTerm',
    'EGMSFrictionTerm',
    'Feedforward',
    'FeedforwardContext',
    'FeedforwardTerm',
    'FlexibleJointTerm',
    'RigidBodyTerm',
    'RotorInertiaTerm',
    'StaticFrictionTerm',
    'TermPlugin',
    'build_term',
    'limit_rate',
    'register_term',
    'term_names',
    'unregister_term',
]
