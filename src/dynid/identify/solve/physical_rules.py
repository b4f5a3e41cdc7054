"""The rule book of the standard-parameter step (:mod:`dynid.identify.solve.physical`: the robot file as a prior,
physical consistency): where it applies to an identification, where the default (``auto``) leaves consistency
unchecked and why, and what the model choice may choose. The fit (:mod:`dynid.identify.steps.fit`), the diagnosis of
the equations, the model choice and the result's prior section read the same rules.

``problem`` is an :class:`~dynid.identify.equations.problem.IdentificationProblem` and ``options`` its
:class:`~dynid.identify.equations.request.IdentifyOptions` (left unannotated as in :mod:`dynid.identify.solve.physical`:
the equations stand above the solvers).
"""

from __future__ import annotations

from dynid.errors import InputError
from dynid.identify.registry import identification_method, identification_methods, spoken
from dynid.identify.solve.physical import CHECKED_FRICTION, PhysicalSettings


def prior_completes(problem, options) -> bool:
    """Whether the robot file's prior will complete what a joint's rows lack (WLS then weights a joint too short for
    a noise estimate of its own by the pooled one instead of refusing it)."""
    return bool(options.physical is not None and options.physical.prior and
                not physical_not_applicable(problem, options))


def consistent_beside(problem, options) -> bool:
    """Whether the default leaves physical consistency unchecked for the output torque alone (the law's load
    terms): the consistent estimate, τ_out iterated, is then computed beside the one kept."""
    return [kind for kind, _ in unchecked_reasons(problem, options)] == ['output_torque']


def output_torque_free(problem) -> bool:
    """Whether a free parameter's column depends on τ_out (a load term the law keeps on some joint)."""
    held = problem.held
    return any(name.rpartition('_')[0] in problem.law.load_symbols and name not in held
               for name in problem.parameter_names())


def consistency_not_checked(problem, options) -> str | None:
    """Why the default (``auto``) consistency check is left out here though the prior is kept (None: it is
    not): what it costs is that the links may not be physical bodies (asking for physical consistency refuses
    these cases). The first of :func:`unchecked_reasons`."""
    reasons = unchecked_reasons(problem, options)
    return reasons[0][1] if reasons else None


def unchecked_reasons(problem, options) -> list[tuple[str, str]]:
    """Every reason the default consistency check is left out, (kind, words), in the order they are said: the
    method, friction on the output torque, a payload known by its mass, held link parameters."""
    reasons = []
    method = identification_method(options.method)
    if not method.physical:
        physical = [other.name for other in identification_methods() if other.physical]
        reasons.append(('method', f'{options.method.upper()} '
                                  f'{method.consistency_note or "is not solved in standard parameters"} (physical '
                                  f'consistency, when asked for, takes the methods '
                                  f'{spoken(physical, "and", upper=False)})'))
    if problem.spec.friction not in CHECKED_FRICTION and output_torque_free(problem):
        reasons.append(('output_torque', f'friction {problem.spec.friction!r} depends on the output torque (physical '
                                         f'consistency, when asked for, enforces it with τ_out iterated)'))
    if problem.payload_blocks:
        reasons.append(('payload', 'a payload known by its mass only has no prior inertia to bound (give its centre '
                                   'of mass for it)'))
    held = links_held(problem)
    if held:
        reasons.append(('held', f'link parameters are held at the robot file\'s values ({", ".join(held)})'))
    return reasons


def links_held(problem) -> list[str]:
    """The link parameters held at a value (left-out joints): a consistent set of links could not keep them. A rotor
    inertia held (Ia_j) is bounded as it is, so consistency can be checked without it."""
    return [name for name in problem.held if name in problem.rigid_names and not name.startswith('Ia_')]


def physical_not_applicable(problem, options) -> str | None:
    """Why the standard-parameter step does not apply to this identification (None when it does); an error
    where consistency was asked for explicitly (``always``). The prior applies to every method but the
    drive-gain ones (TLS, MLS: their torque is unknown until the gains are), whatever is held."""
    settings = options.physical or PhysicalSettings(prior=False, consistency='never')
    reason = settings.not_applicable(problem.spec, options.method) if settings.consistency == 'always' else None
    if reason is None:
        reason = identification_method(options.method).prior_not_applicable or None
    if reason is None and settings.consistency == 'always' and problem.payload_blocks:
        reason = ('physical identification does not take recordings with only a known payload mass; give the '
                  'payload fully ({payload_com}) or leave it out')
    links = links_held(problem)
    if reason is None and settings.consistency == 'always' and links:
        reason = (f'physical identification does not take link parameters held at a value '
                  f'({", ".join(links)}: left-out joints); identify without {{physical}}')
    if reason and settings.consistency == 'always':
        raise InputError(reason, fields=('payload_com', 'physical'))
    return reason


def consistency_refused(problem, open_friction: bool) -> bool:
    """Whether a consistent identification of ``problem`` would be refused: payload blocks, link parameters held
    (left-out joints), or a friction law given that depends on τ_out (an open law is chosen among those it
    takes). The model choice tries consistency, or the regularized default, only where it would not be."""
    return bool(problem.payload_blocks or links_held(problem)
                or not (open_friction or problem.spec.friction in CHECKED_FRICTION))


def consistency_open(problem, options, terms_available: tuple[str, ...],
                     open_friction: bool) -> bool:
    """Whether the model choice may choose physical consistency (:mod:`dynid.identify.steps.choose`): the default
    ``auto`` rule, and nothing a consistent identification refuses (payload blocks, rigid-body parameters held, the
    rotor inertia's excess as a candidate, a friction law given that it cannot solve)."""
    physical = options.physical
    return bool(physical is not None and physical.consistency == 'auto'
                and not consistency_refused(problem, open_friction) and 'rotor' not in terms_available
                and not physical_not_applicable(problem, options))
