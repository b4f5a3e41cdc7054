"""Identification methods as strategies: what a method is (:class:`IdentificationMethod`) and their registry, the Python
entry-point group ``dynid.identification_methods``. The pipeline reads it from below; the methods themselves (dynid's
own: :mod:`dynid.identify.methods`, one module each) stand above the steps they solve with.

**The registry.** Each entry point names a method and points at its :class:`IdentificationMethod`. dynid registers its
own methods there the same way (setup.py), so a method in any installed package is found by name, e.g. in that
package's pyproject.toml::

    [project.entry-points."dynid.identification_methods"]
    my_iv = "my_methods.iv:METHOD"

:func:`register_method` adds one in this process (a library user's, a test's). The names are read from the installed
distributions' metadata without importing any method (``dynid identify --help`` stays cheap), once for each state of
``sys.path`` (a package put on it while the process runs is found on the next look-up); a method's module is imported
when it is asked for by name.

**A method** of the standard kind solves the IDIM's stacked rows W·χ = y (+ ρ) (W: (r, p), y: (r,), ``joints``: (r,)
each row's joint) inside the pipeline's load loop, then the standard-parameter step (the robot file as a prior,
physical consistency: :mod:`dynid.identify.solve.physical`) re-solves its equations weighted as it weighted them::

    method.solve(w, y, joints, names, options=..., joint_names=..., start=None, pooled_short=False, groups=None)
        -> Estimate      # dynid.identify.solve.solvers.Estimate: values (p,), covariance (p, p), row weights (r,)

``options``: the :class:`~dynid.identify.equations.request.IdentifyOptions`; ``joint_names``: the robot's; ``start``:
the previous pass's estimate (a warm start); ``pooled_short``: a joint too short for a noise estimate of its own may be
weighted by the pooled noise (the prior completes it); ``groups``: the rows reduced per block and joint, for a method
with ``reduced_rows``.

A method whose solve needs more than those rows gives a ``fit`` of its own and the pipeline calls it instead:
``fit(problem, options, progress, rigid_start) -> Fit`` (:class:`dynid.identify.steps.fit.Fit`). I-IRLS's alternates the
load loop with its friction loop; the drive-gain methods' (:func:`dynid.identify.steps.fit.fit_with_gains`) call
``solve(w_total, joints, names) -> Estimate`` on W_tot·[g; χ; 1] = 0 (Gautier & Briot 2014, eq. (17)). Nothing here
imports the pipeline, so that listing methods stays cheap.

**A method's own options** (``method_options``: :class:`MethodOption`, each a name, type, default, unit and help) are
declared by the method; the front ends take them from the declaration (``dynid identify --method-option NAME=VALUE``,
identifier_node's ``method_option`` parameter; an option with a ``flag`` also under its own name, as ``dynid
identify``'s long option and identifier_node's parameter: :func:`flagged_options`) and
:meth:`IdentificationMethod.option_values` checks what is given against it, so a method's option is added to no front
end by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dynid.entry_points import Names, Registry
from dynid.errors import InputError

#: the types a method option may take, by the name the declaration gives ('list': items of text, each given once,
#: e.g. JOINT=VALUE; given as a tuple)
OPTION_TYPES = {'str': str, 'int': int, 'float': float, 'bool': bool, 'list': tuple}
#: what a value of each type is, for an error
OPTION_WORDS = {'str': 'text', 'int': 'a whole number', 'float': 'a number', 'bool': 'true or false',
                'list': 'items of text'}


@dataclass(frozen=True)
class MethodOption:
    """One option of a method (module docstring): ``name`` (what ``--method-option NAME=VALUE`` takes), ``type``
    (a name of :data:`OPTION_TYPES`; a 'list' option takes ``NAME=ITEM`` once per item), ``default``, ``unit`` ('' where
    it has none), ``help`` (one line for people), ``low``/``high`` (bounds of a number, inclusive; None: none),
    ``choices`` (the words a str takes; (): any), ``flag`` (the front ends also offer it under its own name:
    ``dynid identify``'s long option, ``weight_function`` as ``--weight-function``, and identifier_node's parameter
    ``weight_function``; False: only as a method option), ``metavar`` (how a help text names one value, e.g.
    'JOINT=VALUE'; '': VALUE)."""

    name: str
    type: str
    default: object
    help: str
    unit: str = ''
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    flag: bool = False
    metavar: str = ''

    def __post_init__(self) -> None:
        if self.type not in OPTION_TYPES:
            raise ValueError(f'method option {self.name}: type must be one of {", ".join(OPTION_TYPES)}, '
                             f'got {self.type!r}')

    def parsed(self, value) -> object:
        """``value`` (text from a front end, or a value; a list option's items as a list or tuple, or one item) as the
        option's type, within its bounds; InputError naming the option otherwise (also for several values of an
        option that takes one)."""
        kind = OPTION_TYPES[self.type]
        if kind is tuple:
            return tuple(str(item) for item in (value if isinstance(value, list | tuple) else (value,)))
        if isinstance(value, list | tuple):
            raise InputError(f'method option {self.name} takes one value, got {len(value)}: '
                             f'{", ".join(map(str, value))}', fields=('method_option',))
        try:
            if kind is bool and isinstance(value, str):
                if value.lower() not in ('true', 'false', '1', '0', 'yes', 'no'):
                    raise ValueError
                value = value.lower() in ('true', '1', 'yes')
            elif kind is int and isinstance(value, float) and not value.is_integer():
                raise ValueError
            parsed = kind(value)
        except (TypeError, ValueError):
            raise InputError(f'method option {self.name} must be {OPTION_WORDS[self.type]}, got {value!r}',
                             fields=('method_option',)) from None
        if kind in (int, float) and ((self.low is not None and parsed < self.low) or
                                     (self.high is not None and parsed > self.high)):
            raise InputError(f'method option {self.name} must be within [{self.low}, {self.high}]'
                             f'{" " + self.unit if self.unit else ""}, got {value!r}', fields=('method_option',))
        if self.choices and parsed not in self.choices:
            raise InputError(f'method option {self.name} must be one of {", ".join(self.choices)}, got {value!r}',
                             fields=('method_option',))
        return parsed

    def value_in(self, given: Mapping | None) -> object:
        """The option's value in ``given`` ({name: value or text}: the method options a caller gave), parsed, or its
        default where it is not given."""
        given = given or {}
        return self.parsed(given[self.name]) if self.name in given else self.default

    def line(self) -> str:
        """'max_iterations (int, default 10): ...' for a help text."""
        unit = f' [{self.unit}]' if self.unit else ''
        return f'{self.name} ({self.type}, default {self.default!r}{unit}): {self.help}'


@dataclass(frozen=True)
class IdentificationMethod:
    """One identification method (module docstring).

    - ``name``: what ``method`` takes (``dynid identify --method``, identifier_node's ``method``); ``description``: one
      line for people; ``solve``: its estimator; ``covariance``: the covariance its estimate carries, as an equation.
    - ``friction``: the friction laws it takes (None: every law); ``friction_default``: the law it identifies where
      the law is left to dynid (None: the model choice decides); ``friction_required``: that law replaces a law
      given, for ``friction_reason`` (a change the result records).
    - ``options``: the :class:`~dynid.identify.equations.request.IdentifyOptions` fields it reads beyond the common
      ones.
    - ``prior_not_applicable``: why the robot file's prior does not apply to it ('' where it does); ``physical``:
      physical consistency applies to its solution; ``consistency_note``: where it does not, what the method does
      that consistency cannot follow (said where the default check is left out).
    - ``drive_gains``: it identifies the drive gains with the parameters (the torque is unknown until they are).
    - ``reduced_rows``: its solve takes the rows reduced per block and joint
      (:class:`dynid.identify.solve.rows.RowGroups`: OLS, WLS) instead of reweighting them one by one.
    - ``choice_weights``: ``(w, y, joints, columns, weight_function) -> row weights (r,) or None``, the weights by
      which the automatic choice scores it on the folds against the start method (None: not a candidate);
      ``weight_function``: the robust methods' option as given, else its default
      (:data:`dynid.identify.choices.WEIGHT_FUNCTION`).
    - ``joint_noise``: it weights each joint's rows by the noise estimated from that joint's own equations, so a joint
      with no more rows than parameters acting on it stops it (the refusal names the methods that do not).
    - ``way_out``: a refused identification whose method was left to dynid tries it
      (:mod:`dynid.identify.job.ways_out`).
    - ``fit``: its own fit, where the standard one does not hold it (module docstring).
    - ``method_options``: the method's own options (:class:`MethodOption`: IRLS's weight function, TLS's held gains),
      given as ``method_options`` of the :class:`~dynid.identify.equations.request.IdentifyOptions` and read with
      :meth:`option_values` (or :meth:`MethodOption.value_in`).
    - ``closed_loop_consistent``: its estimate holds where the closed loop biases least squares (instrumental
      variables): the way out the Durbin–Wu–Hausman test offers where it finds that bias
      (:mod:`dynid.identify.job.bias`).
    """

    name: str
    description: str
    solve: Callable
    covariance: str
    friction: tuple[str, ...] | None = None
    friction_default: str | None = None
    friction_required: bool = False
    friction_reason: str = ''
    options: tuple[str, ...] = ()
    prior_not_applicable: str = ''
    physical: bool = False
    consistency_note: str = ''
    drive_gains: bool = False
    reduced_rows: bool = False
    choice_weights: Callable | None = None
    way_out: bool = False
    fit: Callable | None = None
    joint_noise: bool = False
    method_options: tuple[MethodOption, ...] = ()
    closed_loop_consistent: bool = False

    def option_values(self, given: dict | None = None) -> dict:
        """{name: value} of every option the method declares: ``given`` ({name: value or text}) checked against the
        declaration, the defaults where not given; InputError naming an option the method does not declare."""
        given = dict(given or {})
        declared = {option.name: option for option in self.method_options}
        refuse_undeclared(f'method {self.name}', tuple(declared), given)
        return {name: option.value_in(given) for name, option in declared.items()}

    def own_option_values(self, given: dict | None = None) -> dict:
        """:meth:`option_values` of those of ``given`` the method declares: where the method was left to dynid, the
        options given may be another candidate's (IRLS's weight function where WLS is chosen)."""
        declared = {option.name for option in self.method_options}
        return self.option_values({name: value for name, value in (given or {}).items() if name in declared})


GROUP = 'dynid.identification_methods'
#: the order dynid's own methods are listed in, simplest first (the metadata keeps its entry points sorted by name)
OWN_ORDER = ('ols', 'wls', 'irls', 'iirls', 'tls', 'mls')
#: the method the pipeline starts from where the method is left to dynid (its first estimate, the choice's baseline)
START_METHOD = 'wls'
#: the method of the regularized default, where the data alone do not determine the parameters: equal weights, the
#: prior and physical consistency carry what the data cannot (the consistency choice scores it beside the others)
REGULARIZED_METHOD = 'ols'
REGISTRY = Registry(GROUP, 'identification method', IdentificationMethod, OWN_ORDER, 'register_method')


def parse_method_options(entries) -> dict[str, str | tuple[str, ...]]:
    """{name: text} of ``NAME=VALUE`` entries (a front end's ``method_option`` values, with :func:`flag_entries`), a
    name given more than once {name: (text, ...)} in their order (a list option's items), checked against no method
    yet (:meth:`IdentificationMethod.option_values` does); InputError naming an entry without ``=``."""
    options = {}
    for entry in entries or ():
        name, sign, value = str(entry).partition('=')
        name, value = name.strip(), value.strip()
        if not sign or not name:
            raise InputError(f'method option {entry!r} must be NAME=VALUE', fields=('method_option',))
        options[name] = (*options[name], value) if isinstance(options.get(name), tuple) else \
            (options[name], value) if name in options else value
    return options


def refuse_undeclared(label: str, declared: Sequence[str], given: Mapping) -> None:
    """InputError naming each option of ``given`` not in ``declared`` (the options of ``label``, e.g. 'method wls'),
    its options and the methods that take it."""
    unknown = [name for name in given if name not in declared]
    if unknown:
        takers = [f'{name} is an option of {", ".join(methods)}' for name in unknown
                  if (methods := option_takers(name))]
        raise InputError(f'{label} has no option {", ".join(unknown)} (its options: '
                         f'{", ".join(declared) if declared else "none"}{"; " if takers else ""}{"; ".join(takers)})',
                         fields=('method_option',))


def option_takers(name: str) -> tuple[str, ...]:
    """The registered methods that declare the option ``name`` (of those that load: :func:`_loadable_methods`)."""
    return tuple(method.name for method in _loadable_methods()
                 if any(option.name == name for option in method.method_options))


def flagged_options() -> tuple[tuple[MethodOption, tuple[str, ...]], ...]:
    """Each option with a ``flag`` the registered methods declare, once, with the methods that declare it (in the
    registry's order; of those that load: :func:`_loadable_methods`); InputError where two methods declare one name
    differently."""
    flagged: dict[str, tuple[MethodOption, tuple[str, ...]]] = {}
    for method in _loadable_methods():
        for option in method.method_options:
            if not option.flag:
                continue
            known = flagged.get(option.name)
            if known is not None and known[0] != option:
                raise InputError(f'methods {", ".join(known[1])} and {method.name} declare the option '
                                 f'{option.name} differently')
            flagged[option.name] = (option, (*known[1], method.name) if known else (method.name,))
    return tuple(flagged.values())


def _loadable_methods() -> list[IdentificationMethod]:
    """The registered methods that load: a broken method of another package is refused where it is used (by name, or
    by the automatic choice), not in the front ends' lists of options that another method runs without."""
    methods = []
    for name in method_names():
        try:
            methods.append(identification_method(name))
        except InputError:
            continue
    return methods


def flagged_names() -> tuple[str, ...]:
    """The names of the flagged options (:func:`flagged_options`): the fields a core advice may name, ``{name}``."""
    return tuple(option.name for option, _ in flagged_options())


def flag_entries(values: Mapping[str, object]) -> list[str]:
    """``NAME=VALUE`` entries (:func:`parse_method_options`) of the flagged options' ``values`` ({name: value}; a
    list option's items one entry each; None or an empty list: not given)."""
    entries = []
    for name, value in values.items():
        if value is None:
            continue
        entries += [f'{name}={item}' for item in (value if isinstance(value, list | tuple) else (value,))]
    return entries


def method_names() -> tuple[str, ...]:
    """Every method's name: the installed ones (dynid's first), then those registered in this process."""
    return REGISTRY.names()


def identification_method(name: str) -> IdentificationMethod:
    """The method registered as ``name``."""
    return REGISTRY.get(name)


def identification_methods() -> tuple[IdentificationMethod, ...]:
    """Every method, loaded, in :func:`method_names`' order."""
    return REGISTRY.all()


def register_method(method: IdentificationMethod) -> None:
    """Make ``method`` known in this process beside the installed ones (:func:`unregister_method` forgets it)."""
    REGISTRY.register(method)


def unregister_method(name: str) -> None:
    """Forget a method :func:`register_method` made known."""
    REGISTRY.unregister(name)


def method_software(name: str) -> dict[str, str]:
    """What a result's provenance records of where the method ``name`` comes from, beside dynid's version: {} for
    dynid's own, {distribution: version} for another package's, {'method NAME': 'registered in the process'} for one
    :func:`register_method` made known."""
    return REGISTRY.software(name, 'method')


def spoken(names: Sequence[str], last: str = 'or', upper: bool = True) -> str:
    """'OLS, WLS or IRLS': names for a sentence."""
    names = [name.upper() if upper else name for name in names]
    return names[0] if len(names) == 1 else f'{", ".join(names[:-1])} {last} {names[-1]}'


class MethodNames(Names):
    """The method names as a sequence read from the registry at each use (``leading`` first: e.g. ``auto``)."""

    def __init__(self, leading: tuple[str, ...] = ()) -> None:
        super().__init__(REGISTRY, leading)
