"""Whether least squares is biased on an identification's recordings: the Durbin–Wu–Hausman test of IDIM-WLS against
the instruments of the closed loop the recordings were taken in (Janot, Vandanjon & Gautier 2016; the test:
:func:`dynid.identify.solve.hausman.durbin_wu_hausman`, its finding :func:`dynid.identify.steps.diagnose.bias_finding`).

It runs where every recording holds the controller's reference and the identification is a least-squares one (a method
left to dynid, or one that does not declare itself ``closed_loop_consistent``: the closed-loop methods are the way out
it offers, not what it tests). The instruments are the regressor of the loop
simulated with IDIM-IV's estimate after at most :data:`ITERATIONS` simulations from WLS's (Janot et al. 2014), on the
rigid body with Coulomb and viscous friction whatever law the identification chose: the test asks whether the rows
are biased by the noise in q, q̇, q̈, which the friction law does not change. It takes the first :data:`SECONDS` of the
recordings (in their order): the simulation steps through every sample, and 20 s decide it (the verdicts of
``benchmarks/closed_loop_dwh.py`` are on 20 s logs). Where the loop cannot be simulated (no
controller gains in the recording, a payload, a loop that diverges) it says why and the identification stands.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from dynid.diagnosis import Finding
from dynid.errors import InputError
from dynid.identify.closed_loop.fit import instrumented
from dynid.identify.closed_loop.instruments import ClosedLoopSettings
from dynid.identify.equations.problem import problem_for
from dynid.identify.equations.request import IdentifyOptions, ModelSpec, RecordingInput
from dynid.identify.registry import START_METHOD, identification_method, identification_methods
from dynid.identify.solve.hausman import durbin_wu_hausman
from dynid.identify.steps.diagnose import bias_finding
from dynid.model.robot import RobotModel

#: the most simulations of the loop the instruments take (IDIM-IV from WLS's estimate settles in 1–4)
ITERATIONS = 3
#: [s] the most of the recordings the test simulates (module docstring)
SECONDS = 20.0


def least_squares_bias(robot: RobotModel, recordings: Sequence[RecordingInput], spec: ModelSpec, filters,
                       method: str, drives=None, spelling: dict | None = None,
                       progress: Callable[[str], None] = lambda _: None) -> tuple[Finding | None, dict]:
    """(the finding where least squares is biased, else None; the test's figures or why it did not run) for the
    diagnosis's ``details['ls_bias']`` (module docstring). ``spec``, ``filters``, ``drives``: the identification's;
    ``method``: the one it was asked for; ``spelling``: how the front end takes a method (``{'method': '--method
    {}'}``), for the advice."""
    if method != 'auto' and identification_method(method).closed_loop_consistent:
        return None, {'run': False, 'why': f'the method {method} is not least squares'}
    if any(r.dataset.reference is None for r in recordings):
        return None, {'run': False, 'why': "a recording holds no controller's reference"}
    progress("testing least squares for bias against the closed loop's instruments (Durbin-Wu-Hausman)")
    try:
        problem = problem_for(robot, _first_seconds(recordings, SECONDS),
                              dataclasses.replace(spec, friction='viscous_coulomb'), filters, drives)
        *_, (w, z, y, weights, joints) = instrumented(problem, ClosedLoopSettings(max_iterations=ITERATIONS),
                                                      IdentifyOptions(method=START_METHOD), progress,
                                                      'the bias test\'s IDIM-IV')
        test = durbin_wu_hausman(w, y, z, weights, joints)
    except InputError as error:
        return None, {'run': False, 'why': error.spelled(lambda field: field)}
    finding = bias_finding(test, _way_out(spelling))
    figures = {'run': True, 'statistic': float(test.statistic), 'dof': int(test.dof), 'p_value': float(test.p_value),
               'biased': bool(test.biased), 'text': finding.text}
    return (finding if test.biased else None), figures


def _first_seconds(recordings: Sequence[RecordingInput], seconds: float) -> list[RecordingInput]:
    """The recordings cut to their first ``seconds`` together, in order (the last one kept cut short)."""
    kept, left = [], seconds
    for recording in recordings:
        if left <= 0:
            break
        t = recording.dataset.t
        stop = int(np.searchsorted(t, t[0] + left, side='right'))
        if stop < 2:
            break
        kept.append(dataclasses.replace(recording, dataset=recording.dataset.sliced(0, stop)))
        left -= t[stop - 1] - t[0]
    return kept


def _way_out(spelling: dict | None) -> str:
    """The methods the closed loop does not bias (``closed_loop_consistent``), as the front end takes a method."""
    names = [m.name for m in identification_methods() if m.closed_loop_consistent]
    return ' or '.join((spelling or {}).get('method', 'method {}').format(name) for name in names)
