"""The shape of dynid's source, each held at zero by a guard:

- functions longer than 80 lines (9 before the split): split along their steps instead;
- import circles between the modules of ``src/dynid`` (2 before, both through deferred imports: io.bag and io.rtde,
  and the fleet's batch through the command line), deferred imports included;
- imports up the core's layers, or of a front end (the command line, the ROS side) by the core (1 before:
  diagnosis.effort imported identify.preprocess, now dynid.signal.preprocess; and the fleet's batch the CLI);
- imports up identify/'s wings (the pipeline's floors inside the core's identify layer), a wing the order does not
  know, a wing of more than 15 modules;
- imports of identify/ deeper than its face by the rest of dynid (38 modules, 70 names of 32 modules before), and
  private names imported across dynid's sub-packages (3 before).
"""

import ast
from pathlib import Path

from testing.import_graph import import_circles, import_graph, module_name

SRC = Path(__file__).resolve().parents[1] / 'src' / 'dynid'
#: The longest a function may be [lines, from its ``def`` to its last line; decorators not counted].
FUNCTION_LINES_MAX = 80


def long_functions(root: Path, limit: int = FUNCTION_LINES_MAX) -> list[str]:
    """``file:line name lines`` for every function or method of ``root``'s modules longer than ``limit`` lines."""
    found = []
    for path in sorted(root.rglob('*.py')):
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    found.append(f'{path.relative_to(root)}:{node.lineno} {node.name} {lines}')
    return found


def test_no_function_is_longer_than_80_lines():
    assert long_functions(SRC) == []


def test_the_guard_finds_a_long_function_and_a_long_method(tmp_path):
    body = ''.join(f'    x{i} = {i}\n' for i in range(FUNCTION_LINES_MAX - 1))
    (tmp_path / 'short.py').write_text(f'def fits():\n{body}')  # exactly the limit
    (tmp_path / 'pkg').mkdir()
    method = body.replace('    ', '        ') + '        return 1\n'
    (tmp_path / 'pkg' / 'long.py').write_text(f'class Job:\n    @property\n    async def run(self):\n{method}')
    assert long_functions(tmp_path) == [f'pkg/long.py:3 run {FUNCTION_LINES_MAX + 1}']


# ------------------------------------------------------------------------------ imports
#: The core's layers, top to bottom: a module imports its own layer's or a lower one's. ``ros`` is left
#: out: its modules are the nodes' plumbing and import the jobs they serve (health, identify, sim, control).
#: Packages not listed (files, payload, settings) are not checked.
CORE_LAYERS = (('cli',), ('suite',), ('nodes',), ('demo',), ('fleet',), ('contact',), ('health', 'control'),
               ('estimate',), ('identify',), ('sim',), ('diagnosis',), ('io', 'excite'), ('friction',), ('model',),
               ('signal',), ('checks', 'errors', 'entry_points'))
#: The front ends: the command line and the ROS side. The core imports none of them.
FRONT_ENDS = ('cli', 'ros', 'nodes', 'suite')


def _subpackage(module: str) -> str:
    return module.split('.')[1] if module.count('.') else ''


def layer_breaches(graph: dict[str, set[str]]) -> list[str]:
    """``importer -> imported`` for every import of a higher core layer (:data:`CORE_LAYERS`) and every import of a
    front end (:data:`FRONT_ENDS`) by a module outside them."""
    level = {name: k for k, names in enumerate(CORE_LAYERS) for name in names}
    found = []
    for module, imported in sorted(graph.items()):
        mine = _subpackage(module)
        for other in sorted(imported):
            theirs = _subpackage(other)
            upward = mine in level and theirs in level and level[theirs] < level[mine]
            if theirs != mine and (upward or (theirs in FRONT_ENDS and mine not in FRONT_ENDS)):
                found.append(f'{module} -> {other}')
    return found


def test_no_import_circles():
    circles = import_circles(import_graph(SRC))
    assert circles == [], 'import circles: ' + '; '.join(' <-> '.join(group) for group in circles)


def test_imports_run_down_the_layers_and_the_core_imports_no_front_end():
    assert layer_breaches(import_graph(SRC)) == []


def test_a_name_of_identifys_lazy_face_is_an_edge_to_the_module_that_defines_it():
    """``from dynid.identify import export_urdf`` runs ``dynid.identify.outputs.urdf_export`` on first use: the
    circle and layer guards see that edge, not only the face's ``__init__``."""
    graph = import_graph(SRC)
    assert {'dynid.identify', 'dynid.identify.outputs.urdf_export'} <= graph['dynid.cli.export_urdf']


def test_the_guards_find_a_deferred_circle_a_circle_through_a_package_and_an_upward_import(tmp_path):
    root = tmp_path / 'dynid'
    for folder in ('io', 'fleet', 'cli', 'signal'):
        (root / folder).mkdir(parents=True)
    (root / '__init__.py').write_text('')
    (root / 'io' / '__init__.py').write_text('from dynid.io import bag\n')  # a package's registry: no circle
    (root / 'io' / 'bag.py').write_text('from dynid.io.rtde import read_rtde\n')
    (root / 'io' / 'rtde.py').write_text('def read_rtde():\n    from dynid.io.bag import recording_files\n')
    (root / 'cli' / '__init__.py').write_text('from dynid.cli import batch\n')
    (root / 'cli' / 'batch.py').write_text('def run():\n    from dynid.fleet.batch import reidentify\n')
    (root / 'fleet' / '__init__.py').write_text('')
    (root / 'fleet' / 'batch.py').write_text('def run_job():\n    from dynid.cli.identify import run\n')
    (root / 'cli' / 'identify.py').write_text('')
    (root / 'signal' / '__init__.py').write_text('')
    (root / 'signal' / 'filters.py').write_text(
        'from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from dynid.io.bag import Dataset\n')
    graph = import_graph(root)
    assert import_circles(graph) == [['dynid.cli', 'dynid.cli.batch', 'dynid.fleet.batch'],
                                     ['dynid.io.bag', 'dynid.io.rtde']]
    assert layer_breaches(graph) == ['dynid.fleet.batch -> dynid.cli', 'dynid.fleet.batch -> dynid.cli.identify']


# ------------------------------------------------------------------------------ identify/'s wings
#: identify/'s wings, top to bottom, checked as :data:`CORE_LAYERS` are: a module of identify/ imports its own wing's or
#: a lower one's. A module directly in identify/ is a wing of its own name: the settings and the accepted names, which
#: ``dynid identify --help`` reads without loading the pipeline, and below them the methods' registry and contract
#: (``registry``), which they and the steps read; each method's own module (``methods``: a plugin loaded by name through
#: the registry, as another package's method is) stands above the steps it solves with, and the closed-loop simulation
#: (``closed_loop``: what the closed-loop methods, IDIM-IV and DIDIM, solve with) between them.
IDENTIFY_LAYERS = (('job', 'friction_fit'), ('outputs',), ('validation',), ('methods',), ('closed_loop',), ('steps',),
                   ('selection',), ('equations',), ('solve',), ('result',), ('settings',), ('choices',), ('registry',))
#: The most modules a wing holds (its ``__init__`` not counted).
WING_MODULES_MAX = 15


def identify_wing(module: str) -> str:
    """The wing of identify/ a module stands in ('' outside identify/ and for the package itself)."""
    parts = module.split('.')
    return parts[2] if len(parts) > 2 and parts[1] == 'identify' else ''


def wing_breaches(graph: dict[str, set[str]]) -> list[str]:
    """``importer -> imported`` for every import of a higher wing of identify/ (:data:`IDENTIFY_LAYERS`) by one of its
    modules, and ``importer: wing unknown`` for a module of a wing the order does not list."""
    level = {name: k for k, names in enumerate(IDENTIFY_LAYERS) for name in names}
    found = []
    for module, imported in sorted(graph.items()):
        mine = identify_wing(module)
        if not mine:
            continue
        if mine not in level:
            found.append(f'{module}: wing {mine} unknown')
            continue
        for other in sorted(imported):
            theirs = identify_wing(other)
            if theirs in level and level[theirs] < level[mine]:
                found.append(f'{module} -> {other}')
    return found


def crowded_wings(root: Path, limit: int = WING_MODULES_MAX) -> dict[str, int]:
    """{wing: modules} of every sub-package of ``root`` with more than ``limit`` modules (``__init__`` not counted)."""
    counts = {folder.name: sum(1 for path in folder.glob('*.py') if path.name != '__init__.py')
              for folder in sorted(root.iterdir()) if (folder / '__init__.py').exists()}
    return {wing: n for wing, n in counts.items() if n > limit}


def test_identifys_wings_import_down_their_order():
    assert wing_breaches(import_graph(SRC)) == []


def test_no_wing_of_identify_holds_more_than_15_modules():
    assert crowded_wings(SRC / 'identify') == {}


def test_the_wing_guards_find_an_upward_import_an_unknown_wing_and_a_crowded_one(tmp_path):
    identify = tmp_path / 'dynid' / 'identify'
    for wing in ('result', 'steps', 'methods', 'attic'):
        (identify / wing).mkdir(parents=True)
        (identify / wing / '__init__.py').write_text('')
    (tmp_path / 'dynid' / '__init__.py').write_text('')
    (identify / '__init__.py').write_text('')
    (identify / 'settings.py').write_text('from dynid.identify.registry import names\n')  # the registry: below
    (identify / 'registry.py').write_text('def fit():\n    from dynid.identify.steps.fit import fit\n')
    (identify / 'choices.py').write_text('def load():\n    from dynid.identify.settings import CHOICES\n')
    (identify / 'result' / 'result.py').write_text('from dynid.identify.settings import PRIOR_OFF\n')
    (identify / 'result' / 'torque.py').write_text('def base():\n    from dynid.identify.steps.prepare import base\n')
    (identify / 'steps' / 'prepare.py').write_text('from dynid.identify.result.result import Result\n')
    (identify / 'steps' / 'fit.py').write_text('from dynid.identify.registry import Method\n')
    (identify / 'methods' / 'ols.py').write_text('from dynid.identify.steps.fit import fit\n')  # a plugin: above
    (identify / 'methods' / '__init__.py').write_text('from dynid.identify.methods.ols import METHOD\n')
    (identify / 'attic' / 'old.py').write_text('')
    assert wing_breaches(import_graph(tmp_path / 'dynid')) == [
        'dynid.identify.attic: wing attic unknown', 'dynid.identify.attic.old: wing attic unknown',
        'dynid.identify.choices -> dynid.identify.settings',
        'dynid.identify.registry -> dynid.identify.steps',
        'dynid.identify.registry -> dynid.identify.steps.fit',
        'dynid.identify.result.torque -> dynid.identify.steps',
        'dynid.identify.result.torque -> dynid.identify.steps.prepare']
    for n in range(WING_MODULES_MAX - 2):
        (identify / 'steps' / f'step_{n}.py').write_text('')
    assert crowded_wings(identify) == {}  # 15 modules: fit, prepare and 13 more
    (identify / 'steps' / 'one_more.py').write_text('')
    assert crowded_wings(identify) == {'steps': WING_MODULES_MAX + 1}


# ------------------------------------------------------------------------------ identify's face
#: What a module outside identify/ imports of it: the package, its face (the names :data:`dynid.identify.__all__`
#: exports, each loaded on first use), and the light modules a front end reads without loading the pipeline.
IDENTIFY_FACE = ('dynid.identify', 'dynid.identify.settings', 'dynid.identify.choices', 'dynid.identify.registry')


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names imported from it) of every absolute import statement of ``path``, deferred ones and
    ``if TYPE_CHECKING:`` ones included; ``import a.b`` imports no name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module, [alias.name for alias in node.names]))
    return found


def behind_identifys_face(root: Path) -> list[str]:
    """``file:line module`` for every import, by a module of ``root`` outside identify/, of a module of identify/
    deeper than its face (:data:`IDENTIFY_FACE`)."""
    found = []
    for path in sorted(root.rglob('*.py')):
        if (root / 'identify') in path.parents:
            continue
        found += [f'{path.relative_to(root)}:{line} {module}' for line, module, _ in _imports(path)
                  if module.startswith('dynid.identify.') and module not in IDENTIFY_FACE]
    return found


def private_names_imported(root: Path) -> list[str]:
    """``file:line module.name`` for every private name (``_x``, not ``__x__``) a module of ``root`` imports from
    another of dynid's sub-packages (or top-level modules: ``dynid.files`` is one of its own)."""
    found = []
    for path in sorted(root.rglob('*.py')):
        mine = _subpackage(module_name(root, path))
        for line, module, names in _imports(path):
            if module.split('.')[0] != 'dynid' or _subpackage(module) == mine:
                continue
            found += [f'{path.relative_to(root)}:{line} {module}.{name}' for name in names
                      if name.startswith('_') and not (name.startswith('__') and name.endswith('__'))]
    return found


def test_nothing_outside_identify_imports_behind_its_face():
    assert behind_identifys_face(SRC) == []


def test_no_private_name_is_imported_across_packages():
    assert private_names_imported(SRC) == []


def test_the_face_exports_each_name_from_the_module_that_defines_it():
    """Each name of the face resolves, and to the object its module defines (not a copy, not another module's)."""
    import importlib

    import dynid.identify as face

    assert face.__all__ == sorted(face._NAMES) and set(face.__all__) <= set(dir(face))
    for name, module in face._NAMES.items():
        value = getattr(face, name)
        assert value is getattr(importlib.import_module(f'dynid.identify.{module}'), name)
        assert getattr(value, '__module__', f'dynid.identify.{module}') == f'dynid.identify.{module}', name


def test_the_face_guards_find_a_deep_import_a_deferred_one_and_a_private_name(tmp_path):
    root = tmp_path / 'dynid'
    for folder in ('identify/result', 'contact', 'cli'):
        (root / folder).mkdir(parents=True)
    (root / 'contact' / 'dynamics.py').write_text(
        'from dynid.identify import RigidBodyTorque\nfrom dynid.identify.settings import CHOICES\n'
        'from dynid.identify.result.torque import _offset\nfrom dynid import __version__\n')
    (root / 'cli' / 'run.py').write_text(
        'import dynid.identify.result.torque\n\n\ndef run():\n    from dynid.identify.steps.run import identify\n'
        '    from dynid.cli.shared import _said\n')
    (root / 'identify' / 'result' / 'quality.py').write_text('from dynid.identify.result.torque import _offset\n'
                                                             'from dynid.model.robots import _DH\n')
    assert behind_identifys_face(root) == ['cli/run.py:1 dynid.identify.result.torque',
                                           'cli/run.py:5 dynid.identify.steps.run',
                                           'contact/dynamics.py:3 dynid.identify.result.torque']
    assert private_names_imported(root) == ['contact/dynamics.py:3 dynid.identify.result.torque._offset',
                                            'identify/result/quality.py:2 dynid.model.robots._DH']


# ------------------------------------------------------------------------------ node parameters
#: The parameters a node still declares by hand instead of from a settings class (:func:`dynid.ros.parameters.
#: declare_settings`): none (43 hand-written declarations when issue 35 came).
HAND_DECLARED = []


def hand_declared_parameters(root: Path) -> list[tuple[str, str]]:
    """(module, parameter) of every parameter declared by name in ``root``'s nodes/ and ros/: through
    ``declarer(node)`` (called at once, or bound to a name first) or ``node.declare_parameter('name', ...)``."""
    found = []
    for path in sorted([*(root / 'nodes').glob('*.py'), *(root / 'ros').glob('*.py')]):
        tree = ast.parse(path.read_text(encoding='utf-8'))
        bound = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Call) and getattr(node.value.func, 'id', None) == 'declarer'
                 for target in node.targets if isinstance(target, ast.Name)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                continue
            func = node.func
            if (isinstance(func, ast.Name) and func.id in bound) or getattr(func, 'attr', None) == 'declare_parameter' \
                    or (isinstance(func, ast.Call) and getattr(func.func, 'id', None) == 'declarer'):
                found.append((path.relative_to(root).as_posix(), node.args[0].value))
    return found


def test_nodes_declare_their_parameters_from_settings_classes():
    assert hand_declared_parameters(SRC) == HAND_DECLARED


def test_the_guard_finds_a_hand_written_declaration(tmp_path):
    (tmp_path / 'nodes').mkdir()
    (tmp_path / 'ros').mkdir()
    (tmp_path / 'nodes' / 'a_node.py').write_text(
        "def start(self):\n    d = declarer(self)\n    d('rate', 500.0)\n    declarer(self)('seed', 0)\n"
        "    self.declare_parameter('mode', 'x')\n    declare_settings(self, Settings)\n")
    (tmp_path / 'ros' / 'parameters.py').write_text("def declare(node, name):\n    node.declare_parameter(name)\n")
    assert hand_declared_parameters(tmp_path) == [('nodes/a_node.py', 'rate'), ('nodes/a_node.py', 'seed'),
                                                  ('nodes/a_node.py', 'mode')]


# ------------------------------------------------------------------------------ tests
def imported_test_modules(folder: Path) -> list[str]:
    """'file: module' for every import of one test module by another (shared helpers live in helper modules:
    builders.py, dds_helpers.py, sim_probe.py, stiffness_data.py, ...)."""
    found = []
    for path in sorted(folder.glob('test_*.py')):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or '']
            else:
                continue
            found += [f'{path.name}: {name}' for name in names if name.split('.')[0].startswith('test_')]
    return found


def test_no_test_module_imports_another(tmp_path):
    assert imported_test_modules(Path(__file__).resolve().parent) == []
    (tmp_path / 'test_a.py').write_text('def helper():\n    from test_b import thing\n')
    (tmp_path / 'test_b.py').write_text('import numpy\nfrom builders import thing\n')
    assert imported_test_modules(tmp_path) == ['test_a.py: test_b']


# ------------------------------------------------------------------------------ the identification's pipeline
#: The names an identification's problem, its prepared equations and its candidate go by in src/dynid/identify/, and
#: the classes: none may be changed once built (each step returns a new value).
PIPELINE_VALUES = ('problem', 'equations', 'prepared', 'candidate')
PIPELINE_CLASSES = ('IdentificationProblem', 'Equations', 'Candidate')
#: Methods that change the object they are called on (containers' and the old problem's).
CHANGING_METHODS = ('append', 'extend', 'insert', 'update', 'setdefault', 'pop', 'popitem', 'clear', 'remove', 'add',
                    'discard', 'sort', 'reverse', 'to_comprehensive', 'add_stribeck')


def _root_name(node: ast.AST) -> str | None:
    """The name an attribute or subscript chain starts from (``problem`` of ``problem.held['x'].value``)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _pipeline_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names in ``function`` that hold a pipeline value: by name, or by an annotation naming its class."""
    names = set(PIPELINE_VALUES)
    for argument in [*function.args.args, *function.args.kwonlyargs]:
        if argument.annotation is not None and any(c in ast.unparse(argument.annotation) for c in PIPELINE_CLASSES):
            names.add(argument.arg)
    return names


def pipeline_changes(root: Path) -> list[str]:
    """``file:line code`` of every statement in a function of ``root``'s modules that assigns to a field (or an item
    of a field) of a pipeline value, or calls a method that changes one (:data:`CHANGING_METHODS`) on it or its
    fields. A frozen dataclass refuses the first at run time; this finds both before anything runs."""
    found = []
    for path in sorted(root.rglob('*.py')):
        tree = ast.parse(path.read_text(encoding='utf-8'))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            names = _pipeline_names(function)
            for node in ast.walk(function):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else []
                targets = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple | ast.List) else [t])]
                changed = [t for t in targets
                           if isinstance(t, ast.Attribute | ast.Subscript) and _root_name(t) in names]
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        node.func.attr in CHANGING_METHODS and _root_name(node.func.value) in names:
                    changed.append(node)
                found += [(str(path.relative_to(root)), node.lineno, ast.unparse(node)[:80]) for _ in changed[:1]]
    return [f'{path}:{line} {code}' for path, line, code in sorted(found)]


def _called_functions(function: ast.AST, local: set[str], imported: dict[str, str], module: str) -> set[str]:
    """The functions of the package ``function`` calls by name: its module's own (``local``) and those imported by
    name (``imported``: name -> 'module.name')."""
    called = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name in local:
                called.add(f'{module}.{name}')
            elif name in imported:
                called.add(imported[name])
    return called


def call_graph(root: Path) -> dict[str, set[str]]:
    """'module.function' -> the module-level functions of ``root``'s package it calls by name (deferred imports
    included)."""
    graph = {}
    for path in sorted(root.rglob('*.py')):
        module = module_name(root, path)
        tree = ast.parse(path.read_text(encoding='utf-8'))
        functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
        imported = {alias.asname or alias.name: f'{node.module}.{alias.name}' for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(root.name)
                    for alias in node.names}
        for name, function in functions.items():
            graph[f'{module}.{name}'] = _called_functions(function, set(functions), imported, module)
    return graph


#: Functions that call themselves over nested data, not over the workflow: the result file's plain data.
RECURSIVE_OVER_DATA = ('dynid.identify.result.result.plain_data',)


def reentries(graph: dict[str, set[str]]) -> list[list[str]]:
    """The functions that call themselves (but :data:`RECURSIVE_OVER_DATA`), and each group of functions that call
    each other (a circle of calls)."""
    graph = {name: {c for c in called if c in graph and c not in RECURSIVE_OVER_DATA} for name, called in graph.items()}
    return sorted([[name] for name, called in graph.items() if name in called] + import_circles(graph))


def decision_exceptions(root: Path) -> list[str]:
    """``file: class`` of every exception class of ``root``'s modules that is no InputError: a decision the pipeline
    makes is a value a step returns, never an exception it raises."""
    found = []
    for path in sorted(root.rglob('*.py')):
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.ClassDef) and any(ast.unparse(base).endswith(('Exception', 'Error'))
                                                      and not ast.unparse(base).endswith('InputError')
                                                      for base in node.bases):
                found.append(f'{path.relative_to(root)}: {node.name}')
    return found


def test_no_identification_step_changes_a_problem_equations_or_candidate():
    assert pipeline_changes(SRC / 'identify') == []


def test_the_pipeline_values_are_frozen():
    import dataclasses

    from dynid.identify.equations.prepare import Block, Equations, Torque
    from dynid.identify.equations.problem import Candidate, IdentificationProblem
    from dynid.identify.equations.request import IdentifyOptions, ModelSpec, Request

    for cls in (Block, Equations, Torque, Candidate, IdentificationProblem, IdentifyOptions, ModelSpec, Request):
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls.__name__


def test_no_identification_function_reenters_another():
    assert reentries({name: called for name, called in call_graph(SRC).items()
                      if name.startswith('dynid.identify.')}) == []


def test_no_identification_decision_travels_as_an_exception():
    assert decision_exceptions(SRC / 'identify') == []


def test_the_pipeline_guards_find_a_change_a_reentry_and_a_decision_raised(tmp_path):
    package = tmp_path / 'dynid'
    (package / 'identify').mkdir(parents=True)
    (package / '__init__.py').write_text('')
    (package / 'identify' / '__init__.py').write_text('')
    (package / 'identify' / 'run.py').write_text(
        'from dynid.identify.weak import identify_weak\n\n\n'
        'class _Weak(Exception):\n    pass\n\n\n'
        'def identify(x, options):\n    problem = build(x)\n    problem.spec, y = 1, 2\n    problem.held.update({})\n'
        '    return identify_weak(x) if options else choose(problem)\n\n\n'
        'def choose(p: IdentificationProblem):\n    p.warnings.append("w")\n    p.blocks[0] = None\n'
        '    return choose(p)\n\n\n'
        'def build(x):\n    held = {}\n    held.update(x)\n    return held\n')
    (package / 'identify' / 'weak.py').write_text(
        'def identify_weak(x):\n    from dynid.identify.run import identify\n    return identify(x, None)\n')
    assignment = ast.unparse(ast.parse('problem.spec, y = 1, 2'))  # Python 3.10 writes the targets in parentheses
    assert pipeline_changes(package / 'identify') == [
        f'run.py:10 {assignment}', 'run.py:11 problem.held.update({})', "run.py:16 p.warnings.append('w')",
        'run.py:17 p.blocks[0] = None']
    graph = call_graph(package)
    assert reentries(graph) == [['dynid.identify.run.choose'],
                                ['dynid.identify.run.identify', 'dynid.identify.weak.identify_weak']]
    assert decision_exceptions(package / 'identify') == ['run.py: _Weak']


def test_no_identification_module_is_longer_than_500_lines():
    """The identification's modules, every wing's too, stay readable whole: none over 500 lines."""
    folder = Path(__file__).resolve().parents[1] / 'src' / 'dynid' / 'identify'
    long = {str(path.relative_to(folder)): n for path in folder.rglob('*.py')
            if (n := len(path.read_text().splitlines())) > 500}
    assert not long, long
