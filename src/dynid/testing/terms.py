"""The check of a feedforward term plug-in (:class:`dynid.control.TermPlugin`: a name, a description and
``factory(robot, result, options)``): the term built on the twin's robot and its identified result, its torque
(:mod:`dynid.control.term`) finite and one per sample and joint, stepping sample by sample from a reset giving the rows
of ``evaluate``, and where the term declares its gravity part, its torque at rest that part."""

from __future__ import annotations

import numpy as np

from dynid.testing.assertions import PluginCheck
from dynid.testing.methods import check_description, check_name

#: samples of the desired motion the term is evaluated at
SAMPLES = 5
#: relative agreement of two forms of one torque (a batch and its steps; at rest, the torque and its gravity part)
AGREEMENT = 1e-9


def check_feedforward_term(plugin, options=None) -> None:
    """Raise AssertionError naming the check, the term and what it found, unless the term ``plugin`` builds meets the
    contract dynid's own terms meet (module docstring), built with ``options`` (the term's own; None: none).

    >>> from dynid.control.rigid_body import RIGID_BODY
    >>> check_feedforward_term(RIGID_BODY)  # doctest: +SKIP
    """
    from dynid.control.context import FeedforwardContext
    from dynid.testing.twin import fit, twin

    checking = PluginCheck('check_feedforward_term', 'feedforward term', getattr(plugin, 'name', plugin))
    check_name(checking, plugin.name)
    check_description(checking, plugin.description)
    checking.that(callable(plugin.factory), 'factory must be callable (robot, result, options)')
    robot = twin().robot
    result, _ = fit()
    with checking.step('building it on the twin\'s robot and result'):
        term = plugin.factory(robot, result, dict(options or {}))
    checking.that(callable(getattr(term, 'evaluate', None)), f'it built a {type(term).__name__} without '
                                                             'evaluate(q, dq, ddq, context)')
    rng = np.random.default_rng(2)
    q, dq, ddq = (rng.uniform(-1.0, 1.0, (SAMPLES, robot.n)) for _ in range(3))
    torque = _evaluated(checking, term, q, dq, ddq, FeedforwardContext())
    if callable(getattr(term, 'step', None)) and callable(getattr(term, 'reset', None)):
        with checking.step('stepping it sample by sample from a reset'):
            term.reset()
            steps = np.array([term.step(q[k], dq[k], ddq[k], FeedforwardContext()) for k in range(SAMPLES)])
        checking.that(steps.shape == torque.shape and _agree(steps, torque),
                      'stepping it sample by sample from a reset does not give the rows of evaluate')
    if callable(getattr(term, 'gravity', None)):  # its torque at rest is its gravity part
        rest = np.zeros_like(dq)
        with checking.step('evaluating its gravity part'):
            gravity = np.broadcast_to(term.gravity(q, FeedforwardContext()), q.shape)
        at_rest = _evaluated(checking, term, q, rest, rest, FeedforwardContext())
        checking.that(_agree(at_rest, gravity), 'its torque at rest is not the gravity part it declares')


def _evaluated(checking: PluginCheck, term, q, dq, ddq, context) -> np.ndarray:
    with checking.step('evaluating it'):
        torque = np.asarray(term.evaluate(q, dq, ddq, context), dtype=float)
    checking.that(torque.shape == q.shape, f'evaluate gives torques of shape {torque.shape}, not (samples, joints) '
                                           f'{q.shape}')
    checking.that(np.all(np.isfinite(torque)), 'evaluate gives non-finite torques')
    return torque


def _agree(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.allclose(a, b, rtol=AGREEMENT, atol=AGREEMENT * max(1.0, float(np.abs(b).max(initial=0.0)))))
