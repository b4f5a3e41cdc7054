"""The model chosen by blocked cross-validation where the caller did not choose (``friction='auto'``,
``method='auto'``).

**What is chosen.** Per joint its friction law, as the columns of that joint kept in the identification:

- Coulomb + viscous (Fc·sgn(ω) + Fv·ω), always;
- the offset tau0 (a drive's torque offset), or none;
- the load-dependent Coulomb term Fl·sgn(ω)·τ_out² (Li et al. 2024 eq. (3), thesis (P1-27)): friction that
  grows with the joint's output torque, as on heavily loaded shoulder joints; not tried on a joint whose Fl comes
  out negative in the first fit of every candidate column (friction falling with the load: no such law, and a
  quadratic term of the wrong sign that the folds may still favour turns the friction over on loads beyond the
  recording's);
- the temperature term sgn(ω)·√|ω|·(β1 + β2·T + β3·T⁻³), only where every recording holds temperatures;
- beside the law chosen (tried with and without it, the same margin), the rotor inertia's excess Ia_j·θ̈_j over
  the drive data's B, where B·θ̈ is subtracted (currents, motor encoders, drive data); its prior value is 0 with
  the spread B (:func:`dynid.identify.prior.rotor_prior`);
- beside it too, the viscous term's exponent (``power``): Fv·sgn(ω)·|ω|^α_j in place of Fv·ω (Li et al. 2024 eq. (3),
  the comprehensive law's fv term), α̂_j fitted on the first estimate as Li's friction loop fits it; a candidate
  where α̂_j ≤ 0.9 (:func:`dynid.identify.run._power_candidates`; not with physical consistency 'always', which takes
  Coulomb + viscous friction only). Where a joint keeps it, the
  identification holds every joint's law in the comprehensive law (α_j = 1 on the others), as I-IRLS does, with
  the method chosen and the exponents fixed.
- beside it too, the Stribeck excess (``stribeck``): Fs_j·sgn(ω)·exp(−(|ω|/Vs_j)^μ_j), the excess F_S − F_C of static
  friction over the Coulomb level where the joint starts moving (Madsen 2020, thesis eq. (P1-25) and ch.6 eq. (11),
  the law the twin simulates; :class:`dynid.identify.stribeck.StribeckExcess`), Vs_j picked on
  :data:`dynid.identify.run.STRIBECK_VELOCITY_GRID` and the shape μ_j of the two of
  :data:`dynid.identify.stribeck.STRIBECK_SHAPES` (exponential, Gautier and Briot's eq. (22); Gaussian,
  Armstrong-Hélouvry's) as the exponent is picked (:func:`dynid.identify.run._stribeck_candidates`). A candidate only
  where the data see it: Vs_j between the 5 % quantile and the median of the joint's |ω| and the excess positive.
  It is tried against the viscous exponent, never with it (:data:`ALTERNATIVE_TERMS`). (Two shapes, not one: with the
  Gaussian alone the twin's hump of shape 1.2 left a tail that the load term took up on the folds of one motion and
  lost on another; docs/methods/identification.md.) The Stribeck excess rather than a smooth Coulomb tanh(ω/ω_s): it
  is the law the seeds identify and the twin has, its column is zero in sliding (it changes nothing where the joint
  moves fast), and every consumer of a result evaluates it as written (prediction, feedforward, estimation; the
  exports drop it and say so).

Per identification the method, WLS or IRLS (Huber), with the laws chosen.

Physical consistency, where it is left to the ``auto`` rule of :mod:`dynid.identify.physical` (kept where it costs
at most 1 % of the training χ²) and that rule would decline it on all the rows (:func:`_consistency_gate`: the MAP
estimate not consistent and consistency costing more; a log that determines the links well never gets here, and
this costs it one MAP solve, or one constrained solve where the MAP is not consistent): the folds decide between the
model chosen so far and the same method with each fold's estimate the consistent optimum of its training rows
(the laws chosen without :data:`INCONSISTENT_TERMS`: a consistent identification takes no friction on τ_out, no
viscous exponent, no rotor excess held beside it), and, where the method is open, OLS as it is and consistent (equal row
weights; the prior's weight cross-validated again for them). Kept by the same margin as IRLS
(:data:`METHOD_MARGIN`); the identification is then solved with consistency ``always``. Not tried with payload
blocks, rigid-body parameters held (left-out joints), the rotor inertia's excess as a candidate or a friction law
given on τ_out, which a consistent identification refuses.

Not chosen here (kept as given or as the default): I-IRLS and Hamon's model (which change the friction family and
need the whole load loop per fold) and a smooth Coulomb term.

**How.** One problem is built with every candidate column (the superset law), its equations at τ_out of a
first WLS estimate, weighted 1/σ̂_j as for WLS. The rows are cut into the prior's folds (contiguous blocks in
time, :func:`dynid.identify.prior.time_folds`) and each fold is reduced to its R factor once. A candidate model
is a subset S of the columns: since R comes from a QR of [G·W | G·y] over all columns, ‖G·(y − W_S·v)‖² =
‖Qᵀ·G·y − R_S·v‖² + constant exactly, so every candidate's fold solve (the MAP estimate with the robot file's
prior at the weight s cross-validated for the superset) is a least squares of a few hundred rows, never a
refit of the recording. The score of joint j is Σ_folds ‖y_j − ŷ_j‖²/‖y_j‖² on the held-out fold. Joint by joint
(two passes), the joint's candidate laws are tried with the others fixed and judged by the joint's own score (its
columns act on its rows alone); the simplest law within :data:`CHOICE_MARGIN` of the least score is kept (a richer
law must earn its columns). The method: IRLS's robust row weights (from one reweighting of all rows), then the
same MAP on each fold's training rows; IRLS is kept where the sum of the joints' scores is lower by more than
:data:`METHOD_MARGIN` (every joint counts as its fit does).

**The robot file's own model** (its links, friction fitted on the training folds, as ``dynid validate``
predicts it) is scored on the same folds; a joint it predicts better than the model chosen, by more than the folds'
spread (:func:`robot_file_lead`), is named.

**Weakly exciting logs** (``regularized``: :func:`dynid.identify.run._identify_weak` found
:func:`excitation_condition` above the refusal's limit): the laws are chosen as above for OLS with the prior and
consistency ``always``; the model chosen is then scored as it will be solved (equal row weights, each fold's estimate
the consistent optimum of its training rows) beside the robot file's own model, and :func:`_regularized_verdict`
says whether that default is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.identify.physical import consistent_optimum
from dynid.identify.prior import (
    CROSS_VALIDATION_BLOCKS,
    PhysicalLayout,
    PriorRows,
    ReducedRows,
    cross_validated_prior_std,
    robot_file_links,
    robot_file_values,
    rotor_prior,
    time_folds,
)
from dynid.identify.solvers import _robust_scale, _solve_normal_equations, robust_weights
from dynid.identify.stribeck import StribeckExcess

#: A richer friction law must lower its joint's held-out score by more than this fraction to be kept: the folds are
#: stretches of the same motion, and a term that earns less there is as likely to cost on another motion (on the
#: twin with Coulomb + viscous friction alone, the load term gained up to 3 % on a shoulder's folds).
CHOICE_MARGIN = 0.05
#: The robot file's own model is named ahead on a joint where its lead over the folds exceeds this many standard
#: errors of the paired fold differences (:func:`robot_file_lead`; 2: a one-sided test at about 95 % for 5 folds or
#: more, ~90 % for 3). The fold scores of two models on the same rows differ by a few tenths of a percent from noise.
LEAD_STANDARD_ERRORS = 2.0
#: IRLS must lower the summed held-out score by more than this fraction to replace WLS (and a consistent or OLS
#: candidate the model chosen before it): IRLS's robust weights saw every row, the held-out folds' too, which
#: flatters its fold scores (on the figaroh TIAGo arm IRLS gained 1.5 % on the folds and lost 2.8 % of arm_4's RMSE on
#: the held-out rows; on the unisa-acg UR10 and Panda logs it gained 6.5 % and 3.4 % and kept its lead held out).
METHOD_MARGIN = 0.02
#: The optional terms per joint and their columns' symbols (module docstring).
OPTIONAL_TERMS = {'offset': ('tau0',), 'load': ('Fl',), 'temperature': ('beta1', 'beta2', 'beta3'), 'rotor': ('Ia',),
                  'stribeck': ('Fs',), 'power': ('fp',)}
#: Of those, the terms whose columns the choice gets from the caller (the candidate's own column on the rows, at the
#: exponent or Stribeck velocity picked for it): never columns of the problem, so never 'dropped'.
CANDIDATE_COLUMNS = {'power': 'fp', 'stribeck': 'Fs'}
#: Terms tried as alternatives on a joint (the one of least score, kept by the same margin; never together): the
#: viscous exponent and the Stribeck excess both bend the friction at low speeds, each is fitted on the law without
#: the other (:func:`dynid.identify.run._power_candidates`, :func:`dynid.identify.run._stribeck_candidates`), and
#: on the twin's hump the two together gained on the folds of one motion and lost on another.
ALTERNATIVE_TERMS = (('stribeck', 'power'),)
#: Of those, the friction law's (tried together); the others are tried one at a time on the law chosen.
FRICTION_TERMS = ('offset', 'load', 'temperature')


def law_text(terms: tuple[str, ...]) -> str:
    """'coulomb+viscous+offset+load' for a joint's terms."""
    return '+'.join(('coulomb', 'viscous', *terms))


@dataclass
class ModelChoice:
    """What :func:`choose` decided: per joint the friction terms kept, the method, the columns left out (held at 0,
    ``{name: {'value', 'reason'}}``), the scores of everything tried (``tried``) and the joints the robot file's own
    model predicts better on the folds (``robot_file_ahead``: joint → (its score, the chosen model's))."""

    terms: dict[str, tuple[str, ...]]
    method: str
    dropped: dict[str, dict]
    tried: dict = field(default_factory=dict)
    robot_file_ahead: dict[str, tuple[float, float]] = field(default_factory=dict)
    exponents: np.ndarray | None = None  # (n,) the viscous exponents where a joint kept its own (1 elsewhere)
    stribeck: StribeckExcess | None = None  # the Stribeck excess where a joint kept it (Vs, μ; NaN elsewhere)
    consistency: str | None = None  # 'always' where the folds chose physical consistency (None: the auto rule)

    def lines(self) -> list[str]:
        """A few lines for people: the laws chosen (with their fold scores), the method, the robot file's lead."""
        lines = []
        laws = self.tried.get('friction') or {}
        if laws:
            parts = []
            for joint, terms in self.terms.items():
                scores = laws.get(joint) or {}
                best = scores.get(law_text(terms))
                base = scores.get(law_text(('offset',)))
                parts.append(f'{joint} {law_text(terms).replace("coulomb+viscous", "c+v")}'
                             + (f' ({best:.3g} vs c+v+offset {base:.3g})' if best is not None and base is not None
                                and law_text(terms) != law_text(('offset',)) else ''))
            lines.append('friction per joint, cross-validated (held-out Σ‖e_j‖²/‖y_j‖² over folds): '
                         + '; '.join(parts))
        if self.tried.get('load_not_tried'):
            lines.append('load-dependent friction not tried on ' + ', '.join(self.tried['load_not_tried'])
                         + ' (its coefficient came out negative: friction falling with the load)')
        if self.exponents is not None:
            kept = [f'{joint} {alpha:.3g}' for joint, alpha in zip(self.terms, self.exponents, strict=True)
                    if 'power' in self.terms[joint]]
            lines.append(f'viscous exponent (sgn(ω)·|ω|^α, Li et al. 2024 eq. (3)) kept on {", ".join(kept)}: the '
                         f'comprehensive law, α = 1 on the other joints')
        candidates = self.tried.get('stribeck_candidates') or {}
        if candidates:
            kept = [joint for joint in candidates if 'stribeck' in self.terms.get(joint, ())]
            lines.append('Stribeck excess (Fs·sgn(ω)·exp(−(|ω|/Vs)^μ)) tried on '
                         + ', '.join(f'{joint} (Vs {vs:.3g} rad/s, μ {mu:g})' for joint, (vs, mu) in candidates.items())
                         + (f': kept on {", ".join(kept)}' if kept else ': kept on none'))
        methods = {m: v for m, v in (self.tried.get('method') or {}).items() if m != 'chosen'}
        if methods:
            tried = ', '.join(f'{m.upper()} {s:.4g}' for m, s in methods.items())
            lines.append(f'method, cross-validated (summed held-out score): {tried} → '
                         f'{self.tried["method"].get("chosen", self.method).upper()}')
        consistency = self.tried.get('consistency') or {}
        if consistency.get('scores'):
            tried = ', '.join(f'{key.upper().replace("+PHYSICAL", "+physical")} {value:.4g}' if value is not None
                              else f'{key.upper().replace("+PHYSICAL", "+physical")} (solver failed)'
                              for key, value in consistency['scores'].items())
            lines.append(f'physical consistency, cross-validated (it costs {consistency["cost_percent"]:.3g} % of '
                         f'the training χ², above the auto rule\'s limit; summed held-out score): {tried} → '
                         f'{consistency["chosen"].upper().replace("+PHYSICAL", "+physical")}')
        weak = self.tried.get('regularized')
        if weak:
            verdict = ('kept' if weak.get('kept') else f'not kept ({weak.get("reason") or "folds"}): the ordinary '
                       f'defaults')
            scores = (f', summed held-out score {weak["score"]:.4g} against the robot file\'s '
                      f'{weak["robot_file_score"]:.4g}' if weak.get('score') is not None else '')
            if weak.get('condition_with_prior') is not None:
                scores = f' (cond with the prior {weak["condition_with_prior"]:.3g}){scores}'
            lines.append(f'weakly exciting log (cond(W) of the data alone {weak["condition_scaled"]:.3g} > '
                         f'{weak["threshold"]:g}): OLS with the prior and physical consistency{scores}: {verdict}')
        return lines

    def to_dict(self) -> dict:
        return {'friction_terms': {joint: list(terms) for joint, terms in self.terms.items()}, 'method': self.method,
                'margin': CHOICE_MARGIN, 'method_margin': METHOD_MARGIN, 'tried': self.tried,
                'robot_file_ahead': {joint: {'robot_file': a, 'chosen': b}
                                     for joint, (a, b) in self.robot_file_ahead.items()},
                'exponents': None if self.exponents is None else dict(zip(self.terms, self.exponents.tolist(),
                                                                          strict=True)),
                'stribeck': None if self.stribeck is None else {
                    joint: {'velocity': float(v), 'shape': float(mu)} for joint, v, mu in zip(
                        self.terms, self.stribeck.velocities, self.stribeck.shapes, strict=True) if np.isfinite(v)}}


def excitation_condition(w: np.ndarray, names: list[str], rigid_count: int, held=frozenset()) -> float:
    """cond(W·D) of the data alone, equal row weights, D scaling each column to unit norm (the figure
    :func:`dynid.identify.quality.identifiability_problems` refuses above ``COND_SCALED_MAX``), on the columns every
    law starts from: the rigid-body base parameters and each joint's Coulomb and viscous friction and offset (the
    other terms and held columns left out, so that the figure does not depend on what the model choice tries). From
    the Gram matrix (p×p, one pass over the rows): cond(W·D) = √cond(DᵀWᵀW·D)."""
    keep = [i for i, name in enumerate(names) if name not in held and
            (i < rigid_count or name.split('_')[0] in ('Fc', 'Fv', 'tau0'))]
    a = w[:, keep]
    norms = np.linalg.norm(a, axis=0)
    a = a / np.where(norms > 0, norms, 1.0)
    eigenvalues = np.linalg.eigvalsh(a.T @ a)
    return float(np.sqrt(eigenvalues[-1] / eigenvalues[0])) if eigenvalues[0] > 0 else float('inf')


def _restricted(rows: ReducedRows, columns: np.ndarray) -> ReducedRows:
    """The same rows with only ``columns`` of W (exact: module docstring)."""
    return ReducedRows(rows.r[:, columns], rows.projected, rows.constant, rows.rows)


class _Folds:
    """The folds of one weighted system and the prior, solving any column subset (module docstring)."""

    def __init__(self, problem, w, y, joints, weights, held, use_prior: bool, prior_std: float | None,
                 names: list[str] | None = None):
        n = problem.robot.n
        self.problem, self.n = problem, n
        self.names = names if names is not None else problem.parameter_names()  # of w's columns
        self.rigid_count = len(problem.rigid_names)
        self.fixed = held
        self.folds, self.data = time_folds(w, y, weights, joints)
        self.links = robot_file_links(problem.robot)
        self.prior_rotor, self.rotor_scale = rotor_prior(problem)
        self.use_prior = use_prior and any(link.in_prior for link in self.links)
        self.std = prior_std
        if self.use_prior and self.std is None:
            layout, prior = self._layout(~held)
            self.std = cross_validated_prior_std(layout, [self._fold(f, ~held) for f in self.folds], prior)[0]

    def _layout(self, free: np.ndarray):
        problem = self.problem
        layout = PhysicalLayout.of(problem.base.regrouping, self.n, problem.identify_rotor_inertia, self.names,
                                   self.rigid_count, ~free, 9 * len(problem.payload_blocks),
                                   rotor_excess=problem.compensate_rotor)
        return layout, PriorRows.of(self.links, layout.to_base.shape[1], self.prior_rotor, layout.rotor_start,
                                    self.rotor_scale)

    @staticmethod
    def _fold(fold, free):
        from dynid.identify.prior import Fold

        return Fold(_restricted(fold.trained_on, free), _restricted(fold.held_out, free),
                    [None if rows is None else _restricted(rows, free) for rows in fold.joints], fold.energy)

    def scores(self, free: np.ndarray, trained: list[ReducedRows] | None = None) -> np.ndarray:
        """(n,) held-out Σ_folds ‖e_j‖²/‖y_j‖² of the model with columns ``free`` (NaN: a joint never scored)."""
        return _summed(self.fold_scores(free, trained))

    def fold_scores(self, free: np.ndarray, trained: list[ReducedRows] | None = None,
                    consistent: str | None = None) -> np.ndarray:
        """(folds, n) each fold's held-out ‖e_j‖²/‖y_j‖² of the model with columns ``free`` (NaN: not scored);
        ``consistent``: the solver of physical consistency (each fold's estimate the constrained optimum of its
        training rows, :func:`dynid.identify.physical.solve`; +inf on every joint where it misses its optimum)."""
        layout, prior = self._layout(free)
        out = np.full((len(self.folds), self.n), np.nan)
        for k, fold in enumerate(self.folds):
            rows = _restricted(trained[k] if trained is not None else fold.trained_on, free)
            reduced = layout.problem(rows, prior, self.std if self.use_prior else None)
            x = consistent_optimum(reduced, consistent)[0] if consistent else reduced.map_estimate()
            if x is None:
                return np.full((len(self.folds), self.n), np.inf)
            v = layout.to_base @ x
            for j, held_out in enumerate(fold.joints):
                if held_out is not None:
                    out[k, j] = _restricted(held_out, free).cost(v) / fold.energy[j]
        return out

    def robot_file_fold_scores(self, free: np.ndarray) -> np.ndarray:
        """(folds, n) the same scores of the robot file's own model (friction fitted on each fold's training rows)."""
        layout, _ = self._layout(free)
        out = np.full((len(self.folds), self.n), np.nan)
        for k, fold in enumerate(self.folds):
            v = layout.to_base @ robot_file_values(layout, _restricted(fold.trained_on, free), self.links)
            for j, held_out in enumerate(fold.joints):
                if held_out is not None:
                    out[k, j] = _restricted(held_out, free).cost(v) / fold.energy[j]
        return out


def _summed(per_fold: np.ndarray) -> np.ndarray:
    """(n,) Σ over the folds that scored each joint (NaN: none did)."""
    counted = np.isfinite(per_fold).any(axis=0)
    return np.where(counted, np.nansum(per_fold, axis=0), np.nan)


def robot_file_lead(chosen: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """(n,) whether the robot file's own model leads each joint beyond the folds' spread: over the folds that scored
    both, the mean of the paired differences d_k = (chosen − robot file)_k exceeds :data:`LEAD_STANDARD_ERRORS` of
    its standard errors s_d/√K (at least 3 folds). A lead within it is what another split of the same motion could
    reverse: no claim about the data."""
    lead = np.zeros(chosen.shape[1], dtype=bool)
    for j in range(chosen.shape[1]):
        d = (chosen[:, j] - theirs[:, j])[np.isfinite(chosen[:, j]) & np.isfinite(theirs[:, j])]
        if d.size >= 3:
            lead[j] = d.mean() > LEAD_STANDARD_ERRORS * d.std(ddof=1) / np.sqrt(d.size)
    return lead


def _robust_row_weights(w: np.ndarray, y: np.ndarray, joints: np.ndarray, function: str,
                        iterations: int = 8, tolerance: float = 1e-4) -> np.ndarray | None:
    """IRLS's row weights √ψ(r/s_j)/s_j (:func:`dynid.identify.solvers.irls`) of all rows, from the ordinary LS,
    without its statistics (the folds only need the weights); None where the normal equations fail. The folds'
    IRLS estimates are then the weighted MAP of their training rows (the weights' residuals saw every row: a
    small leak, for one IRLS instead of one per fold)."""
    n = int(joints.max()) + 1
    weights = np.ones(len(y))
    values = None
    for _ in range(iterations):
        new = _solve_normal_equations(w, y, weights)
        if new is None:
            return None
        converged = values is not None and np.linalg.norm(new - values) <= tolerance * np.linalg.norm(new)
        values = new
        residual = y - w @ values
        scale = np.array([_robust_scale(residual[joints == j]) for j in range(n)])
        weights = np.sqrt(robust_weights(residual / scale[joints], function)) / scale[joints]
        if converged:
            break
    return weights


def _columns(names: list[str], symbol: str, joint: int) -> list[int]:
    name = f'{symbol}_{joint + 1}'
    return [names.index(name)] if name in names else []


def choose(problem, w: np.ndarray, y: np.ndarray, joints: np.ndarray, weights: np.ndarray, *,
           choose_friction: bool, choose_method: bool, terms_available: tuple[str, ...], use_prior: bool,
           prior_std: float | None = None, weight_function: str = 'huber', falling_load=frozenset(), power=None,
           stribeck=None, consistency=None, regularized: dict | None = None, method: str = 'wls',
           progress=lambda text: None) -> ModelChoice:
    """The friction terms per joint and the method by blocked cross-validation (module docstring).

    Args:
        problem: the identification problem built with every candidate column (its ``held`` set).
        w, y, joints, weights: its equations (τ_out from a first estimate) and the WLS row weights 1/σ̂_j.
        choose_friction, choose_method: what the caller left open. terms_available: of :data:`OPTIONAL_TERMS`.
        method: the method given where not open (labels the consistency candidates; their folds weight as WLS).
        use_prior, prior_std: the robot file as a prior (s None: by cross-validation).
        falling_load: joints whose load coefficient Fl came out negative in the first fit (module docstring).
        power: {joint: (α̂_j, its column on the rows)} the viscous exponents to try (module docstring), or None.
        stribeck: {joint: (Vs_j, its column on the rows, μ_j)} the Stribeck excesses to try, or None.
        consistency: the :class:`~dynid.identify.physical.PhysicalSettings` where physical consistency is open (its
            ``auto`` rule: module docstring), or None.
        regularized: the record of the weakly exciting log's gate (``dynid.identify.run._identify_weak``: its
            ``solver``) where the regularized default is tried: the model chosen is then scored as it will be
            solved (equal row weights, each fold's estimate the consistent optimum of its training rows) beside the
            robot file's own model, and the record gets both sums and ``kept`` (the regularized default predicts
            the held-out blocks better).
    """
    names = problem.parameter_names()
    n, joint_names = problem.robot.n, problem.robot.joint_names
    for term, candidates in (('power', power), ('stribeck', stribeck)):
        if candidates:  # the candidates' columns beside the others, as the optional term (fp_j, Fs_j)
            w = np.hstack([w, np.column_stack([candidates[j][1] for j in sorted(candidates)])])
            names = names + [f'{CANDIDATE_COLUMNS[term]}_{j + 1}' for j in sorted(candidates)]
            terms_available = terms_available + (term,)
    held = np.array([name in problem.held for name in names], dtype=bool)
    held_values = np.array([problem.held[name]['value'] for name in names if name in problem.held])
    if held.any():  # held columns on the measured side (their values), kept out of every candidate
        y = y - w[:, held] @ held_values
    folds = _Folds(problem, w, y, joints, weights, held, use_prior, prior_std, names)
    columns = _TermColumns(names, n, ~held)
    terms = {j: tuple(t for t in ('offset',) if t in terms_available) for j in range(n)}
    tried: dict = {}
    if choose_friction:
        terms, tried['friction'] = _choose_laws(problem, folds, columns, terms, terms_available, falling_load)
        if falling_load and 'load' in terms_available:
            tried['load_not_tried'] = [joint_names[j] for j in sorted(falling_load)]
        if stribeck:
            tried['stribeck_candidates'] = {joint_names[j]: [float(stribeck[j][0]), float(stribeck[j][2])]
                                            for j in sorted(stribeck)}
    chosen = columns.mask(terms)
    per_fold = folds.fold_scores(chosen)
    method, trained, consistent = 'wls' if choose_method else method, None, None
    if choose_method:
        method, per_fold, tried['method'], trained = _choose_method(folds, w, y, joints, chosen, per_fold,
                                                                    weight_function)
    if consistency is not None:
        method, terms, per_fold, consistent, tried['consistency'] = _choose_consistency(
            problem, folds, columns, (w, y, joints), terms, method, per_fold, trained, consistency, choose_method)
        chosen = columns.mask(terms)
    if regularized is not None:  # scored as it is solved: OLS, consistent (the prior's weight cross-validated again)
        folds = _Folds(problem, w, y, joints, np.ones(len(y)), held, use_prior, None, names)
        per_fold = folds.fold_scores(chosen, None, regularized['solver'])
    scores = _summed(per_fold)
    theirs_per_fold = folds.robot_file_fold_scores(chosen) if folds.use_prior or any(
        link.in_prior for link in folds.links) else np.full(per_fold.shape, np.nan)
    theirs = _summed(theirs_per_fold)
    lead = robot_file_lead(per_fold, theirs_per_fold)
    tried['chosen_per_joint'] = dict(zip(joint_names, scores.tolist(), strict=True))
    tried['robot_file_per_joint'] = dict(zip(joint_names, theirs.tolist(), strict=True))
    tried['prior_relative_std'] = folds.std if folds.use_prior else None
    if regularized is not None:
        _regularized_verdict(regularized, folds, chosen, per_fold, theirs_per_fold)
        tried['regularized'] = regularized
    ahead = {joint_names[j]: (float(theirs[j]), float(scores[j])) for j in range(n) if lead[j]}
    dropped = _dropped_columns(joint_names, terms, terms_available, columns, held, names)
    exponents = np.array([power[j][0] if 'power' in terms[j] else 1.0 for j in range(n)]) \
        if any('power' in terms[j] for j in range(n)) else None
    kept = [j for j in range(n) if 'stribeck' in terms[j]]
    excess = StribeckExcess(np.array([stribeck[j][0] if j in kept else np.nan for j in range(n)]),
                            np.array([stribeck[j][2] if j in kept else np.nan for j in range(n)])) if kept else None
    return ModelChoice({joint_names[j]: terms[j] for j in range(n)}, method, dropped, tried, ahead, exponents,
                       excess, consistent)


def _dropped_columns(joint_names, terms: dict, terms_available, columns: _TermColumns, held: np.ndarray,
                     names: list[str]) -> dict:
    """{parameter: {'value': 0, 'reason'}} of the optional terms' columns a joint's law left out (held at 0 by the
    identification); the candidates' own columns (fp_j, Fs_j) are the choice's alone and not among them."""
    dropped = {}
    for j, name in enumerate(joint_names):
        for term in (t for t in OPTIONAL_TERMS if t not in CANDIDATE_COLUMNS):
            if term in terms_available and term not in terms[j]:
                for c in columns.of[term][j]:
                    if not held[c]:
                        dropped[names[c]] = {'value': 0.0, 'reason': dropped_reason(name, terms[j])}
    return dropped


def dropped_reason(joint: str, terms) -> str:
    """Why a column of ``joint`` is held at 0 after the choice: its law is ``terms`` (:func:`law_text`)."""
    return f'model choice: {joint}\'s friction law is {law_text(terms)} by cross-validation'


def _regularized_verdict(record: dict, folds: _Folds, chosen: np.ndarray, per_fold: np.ndarray,
                         theirs_per_fold: np.ndarray) -> None:
    """Whether the regularized default is kept (``record['kept']``, with the figures): the prior must complete what
    the data lack, cond(W·D) of the data and the prior together
    (:func:`dynid.identify.prior.information_condition_numbers` of the MAP problem of all rows, the figure the refusal
    judges) at most ``COND_SCALED_MAX`` (columns the prior does not reach, a Coulomb term beside an offset on a joint
    whose velocity keeps one sign, stay undetermined), and its summed held-out score lower than the robot file's own
    model's on the same folds."""
    from dynid.identify.prior import information_condition_numbers, posterior_covariance
    from dynid.identify.quality import COND_SCALED_MAX

    layout, prior = folds._layout(chosen)
    reduced = layout.problem(_restricted(folds.data, chosen), prior, folds.std if folds.use_prior else None)
    x = reduced.map_estimate()
    condition = information_condition_numbers(posterior_covariance(reduced, x, layout.to_base))[1]
    score, robot_file = float(np.sum(np.nan_to_num(per_fold, nan=0.0))), float(np.nansum(theirs_per_fold))
    record.update(condition_with_prior=condition if np.isfinite(condition) else None,
                  score=score if np.isfinite(score) else None, robot_file_score=robot_file)
    if not condition <= COND_SCALED_MAX:
        record.update(kept=False, reason=f'the prior does not complete what the data lack: cond(W) of the data and '
                                         f'the prior {condition:.3g} > {COND_SCALED_MAX:g}')
    elif not np.isfinite(score):
        record.update(kept=False, reason='the consistent solve missed its optimum on a fold')
    else:
        record['kept'] = bool(score < robot_file)
        if not record['kept']:
            record['reason'] = 'the robot file\'s own model predicts the held-out blocks better'


class _TermColumns:
    """The columns of each optional friction term per joint (``of[term][j]``) among the free columns ``free``."""

    def __init__(self, names: list[str], n: int, free: np.ndarray) -> None:
        self.n, self.free = n, free
        self.of = {term: {j: [c for s in symbols for c in _columns(names, s, j)] for j in range(n)}
                   for term, symbols in OPTIONAL_TERMS.items()}
        self.viscous = {j: _columns(names, 'Fv', j) for j in range(n)}  # replaced by the power column

    def mask(self, chosen: dict[int, tuple[str, ...]]) -> np.ndarray:
        """The free columns of the laws ``chosen`` (joint -> its optional terms)."""
        m = self.free.copy()
        for j in range(self.n):
            for term in OPTIONAL_TERMS:
                if term not in chosen[j]:
                    m[self.of[term][j]] = False
            if 'power' in chosen[j]:
                m[self.viscous[j]] = False
        return m


def _choose_laws(problem, folds: _Folds, columns: _TermColumns, terms: dict[int, tuple[str, ...]],
                 terms_available: tuple[str, ...], falling_load=frozenset(),
                 ) -> tuple[dict[int, tuple[str, ...]], dict[str, dict[str, float]]]:
    """Each joint's law, joint by joint in two passes (the others fixed), by its own held-out score: the simplest law
    within :data:`CHOICE_MARGIN` of the least (without the load term on the joints of ``falling_load``). Returns the
    laws and every score tried (joint -> law -> score)."""
    joint_names = problem.robot.joint_names
    options = [()]
    for term in (t for t in FRICTION_TERMS if t in terms_available):
        options += [o + (term,) for o in options]
    options.sort(key=len)
    toggles = [t for t in OPTIONAL_TERMS if t not in FRICTION_TERMS and t in terms_available]
    groups = [(t,) for t in toggles if not any(t in pair for pair in ALTERNATIVE_TERMS)]
    groups += [tuple(t for t in pair if t in toggles) for pair in ALTERNATIVE_TERMS if set(pair) & set(toggles)]
    per_joint: dict[str, dict[str, float]] = {name: {} for name in joint_names}
    terms = dict(terms)
    for _ in range(2):
        changed = False
        for j in range(problem.robot.n):
            if problem.excluded[j] or not any(columns.of[t][j] for t in terms_available):
                continue
            extra = tuple(t for t in terms[j] if t in toggles)  # the other terms as they stand
            tried_j: dict[frozenset, float] = {}

            def score(option: tuple[str, ...], j: int = j, tried_j: dict = tried_j) -> float:
                """Joint j's own held-out score with ``option`` (its law acts on its rows alone)."""
                key = frozenset(option)
                if key not in tried_j:
                    tried_j[key] = float(folds.scores(columns.mask({**terms, j: option}))[j])
                    per_joint[joint_names[j]][law_text(option)] = tried_j[key]
                return tried_j[key]

            allowed = [o for o in options if j not in falling_load or 'load' not in o]
            scores = {option: score(option + extra) for option in allowed}
            finite = [value for value in scores.values() if np.isfinite(value)]
            if not finite:  # the folds cannot score this joint (too few rows): its default law stays
                continue
            least = min(finite)
            kept = next(o for o in allowed if scores[o] <= least * (1.0 + CHOICE_MARGIN)) + extra
            for group in groups:  # on the law chosen: without, or with the best of the group's terms
                present = [t for t in group if columns.of[t][j]]
                if not present:
                    continue
                plain = tuple(t for t in kept if t not in group)
                best = min(present, key=lambda t, plain=plain: score(plain + (t,)))
                kept = plain + (best,) if score(plain + (best,)) < score(plain) / (1.0 + CHOICE_MARGIN) else plain
            if set(kept) != set(terms[j]):
                changed = True
            terms[j] = kept
        if not changed:
            break
    return terms, per_joint


def _choose_method(folds: _Folds, w: np.ndarray, y: np.ndarray, joints: np.ndarray, chosen: np.ndarray,
                   per_fold: np.ndarray, weight_function: str
                   ) -> tuple[str, np.ndarray, dict[str, float], list[ReducedRows] | None]:
    """WLS or IRLS with the laws ``chosen``: IRLS's robust row weights (one reweighting of all rows), the folds'
    training rows reduced with them, kept where the summed held-out score is lower by more than
    :data:`METHOD_MARGIN`. ``per_fold``: WLS's (folds, n) scores. Returns the method, its (folds, n) scores, both
    sums with the one chosen (``chosen``) and, where IRLS is kept, the folds' training rows with its weights."""
    weights = _robust_row_weights(w[:, chosen], y, joints, weight_function)
    trained = None
    if weights is not None:  # the folds' training rows with IRLS's weights, reduced as time_folds does
        parts = np.array_split(np.arange(len(y)), CROSS_VALIDATION_BLOCKS)
        count = len(folds.folds)
        members = [np.concatenate(parts[k::count]) for k in range(count)]
        reduced = [ReducedRows.of(w[rows], y[rows], weights[rows]) for rows in members]
        trained = [ReducedRows.stack([r for i, r in enumerate(reduced) if i != k]) for k in range(count)]
    if not trained:
        return 'wls', per_fold, {'wls': float(np.nansum(per_fold)), 'irls': float('inf'), 'chosen': 'wls'}, None
    robust = folds.fold_scores(chosen, trained)
    tried = {'wls': float(np.nansum(per_fold)), 'irls': float(np.nansum(robust))}
    if np.nansum(robust) < np.nansum(per_fold) * (1.0 - METHOD_MARGIN):
        return 'irls', robust, {**tried, 'chosen': 'irls'}, trained
    return 'wls', per_fold, {**tried, 'chosen': 'wls'}, None


#: The terms a physically consistent identification cannot take (friction on τ_out, Li's exponents, the rotor's excess
#: held beside consistency): left out of the laws of the consistent candidates.
INCONSISTENT_TERMS = ('load', 'power', 'rotor')


def _consistency_gate(folds: _Folds, free: np.ndarray, settings) -> tuple[bool, dict]:
    """Whether the ``auto`` rule of :mod:`dynid.identify.physical` would decline consistency on all the rows (the
    MAP estimate not consistent and the constrained one costing more than ``consistency_cost_max_percent`` of the
    training χ²): only then do the folds decide (a log that determines the links well needs no more). Returns the
    answer and what was found, for ``tried``."""
    layout, prior = folds._layout(free)
    reduced = layout.problem(_restricted(folds.data, free), prior, folds.std if folds.use_prior else None)
    x, x_map, status = consistent_optimum(reduced, settings.solver)
    if status == 'consistent':
        return False, {'gate': 'the MAP estimate of all rows is physically consistent'}
    if x is None:
        return False, {'gate': f'the physical solve of all rows did not reach its optimum ({status})'}
    floor = reduced.data_cost(x_map)
    cost = 100.0 * (reduced.data_cost(x) / floor - 1.0) if floor > 0 else 0.0
    if cost <= settings.consistency_cost_max_percent:
        return False, {'gate': 'consistency costs at most the auto rule\'s limit', 'cost_percent': cost}
    return True, {'gate': 'consistency costs more than the auto rule\'s limit: the folds decide', 'cost_percent': cost}


def _choose_consistency(problem, folds: _Folds, columns: _TermColumns, system, terms: dict[int, tuple[str, ...]],
                        method: str, per_fold: np.ndarray, trained: list[ReducedRows] | None, settings,
                        choose_method: bool):
    """Physical consistency (and, where the method is open, OLS's equal row weights) by the folds, where the
    ``auto`` rule would decline it (:func:`_consistency_gate`). Candidates: the method chosen with each fold's
    estimate the consistent optimum of its training rows (the laws without :data:`INCONSISTENT_TERMS`); OLS as it is
    and consistent (the prior's weight cross-validated again for its rows: the weighting sets the data's scale
    against the prior's). The least summed held-out score is kept where it is lower than the model chosen so far by
    more than :data:`METHOD_MARGIN`. Returns the method, the laws, the (folds, n) scores, 'always' or None, and what
    was tried."""
    w, y, joints = system
    plain_terms = {j: tuple(t for t in law if t not in INCONSISTENT_TERMS) for j, law in terms.items()}
    plain = columns.mask(plain_terms)
    open_, tried = _consistency_gate(folds, plain, settings)
    if not open_:
        return method, terms, per_fold, None, tried
    candidates = {(method, None): (terms, per_fold),
                  (method, 'always'): (plain_terms, folds.fold_scores(plain, trained, settings.solver))}
    if choose_method:
        equal = _Folds(problem, w, y, joints, np.ones(len(y)), folds.fixed, folds.use_prior, None, folds.names)
        candidates[('ols', None)] = (terms, equal.fold_scores(columns.mask(terms)))
        candidates[('ols', 'always')] = (plain_terms, equal.fold_scores(plain, None, settings.solver))
        tried['ols_prior_relative_std'] = equal.std if equal.use_prior else None
    summed = {key: float(np.sum(np.nan_to_num(scores, nan=0.0))) for key, (_, scores) in candidates.items()}
    tried['scores'] = {method_ + ('+physical' if consistent else ''): value if np.isfinite(value) else None
                       for (method_, consistent), value in summed.items()}
    names = problem.robot.joint_names
    tried['per_joint'] = {method_ + ('+physical' if consistent else ''): {
        joint: float(value) if np.isfinite(value) else None for joint, value in zip(names, _summed(scores),
                                                                                    strict=True)}
        for (method_, consistent), (_, scores) in candidates.items()}
    best = min(summed, key=summed.get)
    if summed[best] >= summed[(method, None)] * (1.0 - METHOD_MARGIN):
        best = (method, None)
    tried['chosen'] = best[0] + ('+physical' if best[1] else '')
    return best[0], candidates[best][0], candidates[best][1], best[1], tried
