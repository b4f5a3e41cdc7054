"""The model choice's table: what was chosen per joint and for the identification, every candidate tried with its
fold scores, and why the winner won (:class:`ModelChoice`; the result stores it as ``model.choice`` and prints its
:meth:`ModelChoice.lines`). How the choice is made: :mod:`dynid.identify.steps.choose`.

**What is chosen.** Per joint its friction law, as the columns of that joint kept in the identification:

- Coulomb + viscous (Fc·sgn(ω) + Fv·ω), always;
- the offset tau0 (a drive's torque offset), or none;
- the load-dependent Coulomb term Fl·sgn(ω)·τ_out² (Li et al. 2024 eq. (3), thesis (P1-27)): friction that
  grows with the joint's output torque, as on heavily loaded shoulder joints; not tried on a joint whose Fl comes
  out negative in the first fit of every candidate column (friction falling with the load: no such law, and a
  quadratic term of the wrong sign that the folds may still favour turns the friction over on loads beyond the
  recording's); where the folds keep it on a joint whose coefficient is so large that the friction it adds at the
  recording's largest output torque would exceed that torque (:data:`LOAD_FRICTION_OVER_LOAD_MAX`: a wrist whose
  output torque stays near zero), it is left out on every such joint and the laws are chosen again (only then:
  leaving out a candidate the folds would not keep anyway changes nothing, not even the path of the two passes);
- the temperature term sgn(ω)·√|ω|·(β1 + β2·T + β3·T⁻³), only where every recording holds temperatures;
- beside the law chosen (tried with and without it, the same margin), the rotor inertia's excess Ia_j·θ̈_j over
  the drive data's B, where B·θ̈ is subtracted (currents, motor encoders, drive data); its prior value is 0 with
  the spread B (:func:`dynid.identify.solve.prior.rotor_prior`);
- beside it too, the viscous term's exponent (``power``): Fv·sgn(ω)·|ω|^α_j in place of Fv·ω (Li et al. 2024 eq. (3),
  the comprehensive law's fv term, written from v_s with its limit at α = 0, the logarithmic law:
  :mod:`dynid.friction.power_law`), α̂_j fitted on the first estimate as Li's friction loop fits it; a candidate where
  α̂_j ≤ 0.85 (:func:`dynid.identify.selection.candidates.power_candidates`; not with physical consistency 'always',
  which takes Coulomb + viscous friction only). Where a joint keeps it, the identification holds every joint's law in
  the comprehensive law (α_j = 1 on the others), as I-IRLS does, with the method chosen and the exponents fixed.
- beside it too, the Stribeck excess (``stribeck``): Fs_j·sgn(ω)·exp(−(|ω|/Vs_j)^μ_j), the excess F_S − F_C of static
  friction over the Coulomb level where the joint starts moving (Madsen 2020, thesis eq. (P1-25) and ch.6 eq. (11),
  the law the twin simulates; :class:`dynid.identify.result.stribeck.StribeckExcess`), Vs_j picked on
  :data:`dynid.identify.selection.candidates.STRIBECK_VELOCITY_GRID` and the shape μ_j of the two of
  :data:`dynid.identify.result.stribeck.STRIBECK_SHAPES` (exponential, Gautier and Briot's eq. (22); Gaussian,
  Armstrong-Hélouvry's) as the exponent is picked (:func:`dynid.identify.selection.candidates.stribeck_candidates`). A
  candidate only where the data see it: Vs_j between the 5 % quantile and the median of the joint's |ω| and the excess
  positive. It is tried against the viscous exponent, never with it (:data:`ALTERNATIVE_TERMS`). (Two shapes, not one:
  with the Gaussian alone the twin's hump of shape 1.2 left a tail that the load term took up on the folds of one
  motion and lost on another; docs/methods/identification.md.) The Stribeck excess rather than a smooth Coulomb
  tanh(ω/ω_s): it is the law the seeds identify and the twin has, its column is zero in sliding (it changes nothing
  where the joint moves fast), and every consumer of a result evaluates it as written (prediction, feedforward,
  estimation; the exports drop it and say so).

Per identification the method, WLS or IRLS (Huber), with the laws chosen.

Physical consistency, where it is left to the ``auto`` rule of :mod:`dynid.identify.solve.physical` (kept where it costs
at most 1 % of the training χ²) and that rule would decline it on all the rows (:func:`_consistency_gate`: the MAP
estimate not consistent and consistency costing more; a log that determines the links well never gets here, and
this costs it one MAP solve, or one constrained solve where the MAP is not consistent): the folds decide between the
model chosen so far and the same method with each fold's estimate the consistent optimum of its training rows
(the laws chosen without :data:`INCONSISTENT_TERMS`: friction on τ_out, the viscous exponents and the rotor excess,
which ``--physical`` keeps where given or chosen, are left out of these candidates), and, where the method is open, OLS
as it is and consistent (equal row weights; the prior's weight cross-validated again for them). Kept by the same margin
as IRLS (:data:`METHOD_MARGIN`); the identification is then solved with consistency ``always``. Not tried with payload
blocks, rigid-body parameters held (left-out joints), the rotor inertia's excess as a candidate or a friction law
given on τ_out, which a consistent identification refuses.

Last, each friction law registered beside dynid's (another package's, :mod:`dynid.friction.laws`), tried whole
against the model chosen so far, kept where it lowers the summed held-out score by more than :data:`CHOICE_MARGIN`
(:mod:`dynid.identify.selection.whole_laws`).

Not chosen here (kept as given or as the default): I-IRLS and Hamon's model (which change the friction family and
need the whole load loop per fold) and a smooth Coulomb term of dynid's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.identify.equations.problem import Candidate
from dynid.identify.result.lead import Lead, summary_line
from dynid.identify.result.stribeck import StribeckExcess

#: A richer friction law must lower its joint's held-out score by more than this fraction to be kept: the folds are
#: stretches of the same motion, and a term that earns less there is as likely to cost on another motion (on the
#: twin with Coulomb + viscous friction alone, the load term gained a few percent on a shoulder's folds).
CHOICE_MARGIN = 0.05
#: Where the folds keep the load term on a joint whose first fit gives Fl_j·τ_j above this, τ_j the largest |τ_out|
#: of the joint's rows [N·m] (:func:`dynid.identify.selection.candidates.load_not_tried`), it is left out on every
#: such joint and the laws are chosen again: the friction it adds there, Fl_j·τ_j², would exceed the output torque
#: itself (a gear that loses more to its load than it transmits).
LOAD_FRICTION_OVER_LOAD_MAX = 1.0
#: IRLS must lower the summed held-out score by more than this fraction to replace WLS (and a consistent or OLS
#: candidate the model chosen before it): IRLS's robust weights saw every row, the held-out folds' too, which
#: flatters its fold scores (on a public log it gained on the folds and lost held out, where on others a larger gain
#: held: benchmarks/README.md, "The figures behind the defaults").
METHOD_MARGIN = 0.02
#: The optional terms per joint and their columns' symbols (module docstring).
OPTIONAL_TERMS = {'offset': ('tau0',), 'load': ('Fl',), 'temperature': ('beta1', 'beta2', 'beta3'), 'rotor': ('Ia',),
                  'stribeck': ('Fs',), 'power': ('fp',)}
#: Of those, the terms whose columns the choice gets from the caller (the candidate's own column on the rows, at the
#: exponent or Stribeck velocity picked for it): never columns of the problem, so never 'dropped'.
CANDIDATE_COLUMNS = {'power': 'fp', 'stribeck': 'Fs'}
#: Terms tried as alternatives on a joint (the one of least score, kept by the same margin; never together): the
#: viscous exponent and the Stribeck excess both bend the friction at low speeds, each is fitted on the law without
#: the other (:func:`dynid.identify.selection.candidates.power_candidates`,
#: :func:`dynid.identify.selection.candidates.stribeck_candidates`), and on the twin's hump the two together gained on
#: the folds of one motion and lost on another.
ALTERNATIVE_TERMS = (('stribeck', 'power'),)
#: Of those, the friction law's (tried together); the others are tried one at a time on the law chosen.
FRICTION_TERMS = ('offset', 'load', 'temperature')

#: The terms left out of the laws of the consistent candidates (friction on τ_out, Li's exponents, the rotor's excess
#: held beside consistency); a consistent identification asked for keeps them (:mod:`dynid.identify.solve.physical`).
#: Candidates that keep them: measured on the public logs and not taken (benchmarks/README, issue 45).
INCONSISTENT_TERMS = ('load', 'power', 'rotor')


#: Why the load term is not in a joint's law (``tried['load_not_tried']``), as :meth:`ModelChoice.lines` says it.
_LOAD_NOT_TRIED = {
    'falling': 'load-dependent friction not tried on {joints} (its coefficient came out negative: friction falling '
               'with the load)',
    'beyond the load': 'load-dependent friction left out on {joints} and the laws chosen again without it, the folds '
                       'having kept it on {kept} (its coefficient came out so large that the friction it adds at the '
                       'recording\'s largest output torque would exceed that torque: no gear loses more to its load '
                       'than it transmits)'}

#: The rows identify judges the robot file's lead on (:mod:`dynid.identify.result.lead`).
FOLDS_WHERE = "the recording's held-out folds"


def law_text(terms: tuple[str, ...]) -> str:
    """'coulomb+viscous+offset+load' for a joint's terms."""
    return '+'.join(('coulomb', 'viscous', *terms))


@dataclass
class ModelChoice:
    """What :func:`choose` decided: per joint the friction terms kept, the method, the columns left out (held at 0,
    ``{name: {'value', 'reason'}}``), the scores of everything tried (``tried``) and the joints the robot file's own
    model predicts better or alike on the folds (``robot_file_ahead``: joint → its
    :class:`dynid.identify.result.lead.Lead`, the summed fold scores of both)."""

    terms: dict[str, tuple[str, ...]]
    method: str
    dropped: dict[str, dict]
    tried: dict = field(default_factory=dict)
    robot_file_ahead: dict[str, Lead] = field(default_factory=dict)
    exponents: np.ndarray | None = None  # (n,) the viscous exponents where a joint kept its own (1 elsewhere)
    stribeck: StribeckExcess | None = None  # the Stribeck excess where a joint kept it (Vs, μ; NaN elsewhere)
    consistency: str | None = None  # 'always' where the folds chose physical consistency (None: the auto rule)
    winner: Candidate | None = None  # the candidate the choice leaves to fit (dynid.identify.steps.choose.route_choice)
    rigid_start: np.ndarray | None = None  # the first estimate's base rigid parameters: τ_out's start in the load loop
    fallback: Candidate | None = None  # the winner as the auto rule would have it, where consistency was chosen

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
        excluded = self.tried.get('load_not_tried') or {}
        for reason, line in _LOAD_NOT_TRIED.items():
            joints = [joint for joint, found in excluded.items() if found == reason]
            if joints:
                lines.append(line.format(joints=', '.join(joints),
                                         kept=', '.join(self.tried.get('load_kept_on') or ())))
        if self.exponents is not None:
            kept = [f'{joint} {alpha:.3g}' for joint, alpha in zip(self.terms, self.exponents, strict=True)
                    if 'power' in self.terms[joint]]
            lines.append(f'viscous exponent (sgn(ω)·|ω|^α, Li et al. 2024 eq. (3), written from v_s as '
                         f'sgn(ω)·(|ω|^α − v_s^α)/α, so that fc is the friction at v_s) kept on {", ".join(kept)}: the '
                         f'comprehensive law, α = 1 on the other joints')
        candidates = self.tried.get('stribeck_candidates') or {}
        if candidates:
            kept = [joint for joint in candidates if 'stribeck' in self.terms.get(joint, ())]
            lines.append('Stribeck excess (Fs·sgn(ω)·exp(−(|ω|/Vs)^μ)) tried on '
                         + ', '.join(f'{joint} (Vs {vs:.3g} rad/s, μ {mu:g})' for joint, (vs, mu) in candidates.items())
                         + (f': kept on {", ".join(kept)}' if kept else ': kept on none'))
        own = self.tried.get('joint_side') or {}
        if own:
            lines.append('friction on a joint\'s own velocity (Coulomb + viscous on q̇_j, a stage that turns with the '
                         'joint), cross-validated (summed held-out score of the motors it acts on, with vs without): '
                         + '; '.join(f'{joint} on {", ".join(entry["motors"])} {entry["with"]:.3g} vs '
                                     f'{entry["without"]:.3g} → {"kept" if entry["kept"] else "not kept"}'
                                     for joint, entry in own.items()))
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
        whole = self.tried.get('laws') or {}
        if whole:
            scores = ', '.join([f'{name} {score:.4g}' for name, score in whole['scores'].items()]
                               + [f'{name} not scored ({why})' for name, why in whole['not_scored'].items()])
            lines.append(f'friction laws registered beside dynid\'s, tried whole (summed held-out score; a law must '
                         f'lower it by more than {whole["margin"]:.0%}): {scores} → {whole["chosen"]}')
        named = {joint: lead for joint, lead in self.robot_file_ahead.items() if not lead.clear}
        if named:
            lines.append(summary_line(named, FOLDS_WHERE, 'cross-validation score'))
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
                'robot_file_ahead': {joint: {'robot_file': lead.theirs, 'chosen': lead.mine, 'folds': lead.pieces,
                                             'lower_on': lead.lower_on, 'alike': lead.alike, 'clear': lead.clear}
                                     for joint, lead in self.robot_file_ahead.items()},
                'exponents': None if self.exponents is None else dict(zip(self.terms, self.exponents.tolist(),
                                                                          strict=True)),
                'stribeck': None if self.stribeck is None else {
                    joint: {'velocity': float(v), 'shape': float(mu)} for joint, v, mu in zip(
                        self.terms, self.stribeck.velocities, self.stribeck.shapes, strict=True) if np.isfinite(v)}}


def dropped_reason(joint: str, terms) -> str:
    """Why a column of ``joint`` is held at 0 after the choice: its law is ``terms`` (:func:`law_text`)."""
    return f'model choice: {joint}\'s friction law is {law_text(terms)} by cross-validation'
