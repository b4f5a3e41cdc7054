"""The friction laws registered beside dynid's (:mod:`dynid.friction.laws`), each tried whole against the model the
choice made per joint.

dynid's own laws are chosen joint by joint, term by term (:mod:`dynid.identify.steps.choose`); a law another package
registers has columns that choice knows nothing of, so it is tried as one model: the candidate the choice leaves to
fit with its law replaced by the registered one (the viscous exponents and the Stribeck excess left out, the parameters
the caller held kept, everything else as chosen). Both are built and scored alike: the equations at the first
estimate's τ_out, each joint's rows weighted by 1/σ̂_j of that estimate, the prior's folds and each fold's MAP
estimate (:class:`dynid.identify.selection.folds.Folds`), the score Σ_j Σ_folds ‖e_j‖²/‖y_j‖² on the held-out folds. A
registered law replaces the model chosen only where it lowers that sum by more than
:data:`~dynid.identify.selection.choice.CHOICE_MARGIN`: a whole law earns its place as a term does.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dynid.errors import InputError
from dynid.friction.laws import friction_law
from dynid.identify.equations.prepare import Equations
from dynid.identify.equations.problem import Candidate, IdentificationProblem
from dynid.identify.result.lead import judge
from dynid.identify.selection.choice import CHOICE_MARGIN
from dynid.identify.selection.folds import Folds, summed
from dynid.identify.solve.prior_source import PriorSource

#: What the record calls the model chosen per joint.
PER_JOINT = 'per-joint laws'


@dataclasses.dataclass(frozen=True)
class Scoring:
    """How a whole model is scored (module docstring): ``rigid`` the first estimate's base rigid parameters (τ_out),
    ``joint_sigma`` its (n,) noise per joint [N·m], the prior's use, weight s (None: cross-validated per model) and
    source (None: the robot file)."""

    rigid: np.ndarray
    joint_sigma: np.ndarray
    use_prior: bool
    prior_std: float | None = None
    prior_source: PriorSource | None = None


def whole_folds(equations: Equations, candidate: Candidate, scoring: Scoring) -> tuple[Folds, np.ndarray]:
    """``candidate``'s folds and its (folds, n) held-out scores ‖e_j‖²/‖y_j‖² (module docstring)."""
    problem = IdentificationProblem.of(equations, candidate)
    exponents = None if candidate.exponents is None else np.array(candidate.exponents)
    w, y, joints, _, _ = problem.equations(scoring.rigid, exponents)
    names = problem.parameter_names()
    held = np.array([name in problem.held for name in names], dtype=bool)
    if held.any():  # held columns on the measured side (their values)
        y = y - w[:, held] @ np.array([problem.held[name]['value'] for name in names if name in problem.held])
    folds = Folds(problem, w, y, joints, 1.0 / scoring.joint_sigma[joints], held, scoring.use_prior,
                  scoring.prior_std, names, source=scoring.prior_source)
    return folds, folds.fold_scores(~held)


@dataclasses.dataclass(frozen=True)
class WholeLawChoice:
    """What :func:`whole_law_choice` decided: the candidate to fit, the record (``{'scores': {PER_JOINT or law: Σ
    score}, 'not_scored': {law: why}, 'margin', 'chosen'}``) and, where a registered law won, its (n,) summed fold
    scores and the robot file's own model's lead over it per joint (:func:`dynid.identify.result.lead.judge`)."""

    winner: Candidate
    record: dict
    scores: np.ndarray | None = None
    robot_file_scores: np.ndarray | None = None
    leads: list | None = None


def whole_law_choice(equations: Equations, winner: Candidate, given_held, laws: tuple[str, ...], scoring: Scoring,
                     consistent: bool) -> WholeLawChoice:
    """``winner`` or the registered law of ``laws`` that beats it by the margin (module docstring). ``given_held``: the
    parameters held before the choice (the caller's); ``consistent``: physical consistency was chosen, so a law
    without a consistent form is not tried."""
    scores = {PER_JOINT: float(np.nansum(summed(whole_folds(equations, winner, scoring)[1])))}
    not_scored, tried = {}, {}
    for name in laws:
        if consistent and not friction_law(name).physical:
            not_scored[name] = 'physical consistency was chosen and the law has no consistent form'
            continue
        candidate = dataclasses.replace(winner, friction=name, exponents=None, stribeck=None, held=tuple(given_held))
        candidate = candidate.only_holding(IdentificationProblem.of(equations, candidate).parameter_names())
        try:
            folds, per_fold = whole_folds(equations, candidate, scoring)
        except InputError as error:
            not_scored[name] = str(error)
            continue
        scores[name] = float(np.nansum(summed(per_fold)))
        tried[name] = candidate, folds, per_fold
    best = min(tried, key=scores.__getitem__, default=None)
    beats = best is not None and np.isfinite(scores[best]) and \
        scores[best] < (1.0 - CHOICE_MARGIN) * scores[PER_JOINT]
    record = {'scores': scores, 'not_scored': not_scored, 'margin': CHOICE_MARGIN,
              'chosen': best if beats else PER_JOINT}
    if not beats:
        return WholeLawChoice(winner, record)
    candidate, folds, per_fold = tried[best]
    theirs = folds.robot_file_fold_scores(~folds.fixed) if folds.use_prior or any(
        link.in_prior for link in folds.links) else np.full(per_fold.shape, np.nan)
    return WholeLawChoice(candidate, record, summed(per_fold), summed(theirs), judge(per_fold, theirs))
