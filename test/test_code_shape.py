"""The shape of dynid's source, each held at zero by a guard:

- functions longer than 80 lines (9 before the split): split along their steps instead;
- import circles between the modules of ``src/dynid`` (2 before, both through deferred imports: io.bag and io.rtde,
  and the fleet's batch through the command line), deferred imports included;
- imports up the core's layers, or of a front end (the command line, the ROS side) by the core (1 before:
  diagnosis.effort imported identify.preprocess, now dynid.signal.preprocess; and the fleet's batch the CLI).
"""

import ast
from pathlib import Path

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
               ('estimate', 'sim'), ('friction',), ('identify',), ('diagnosis',), ('io', 'excite'), ('model',),
               ('signal',), ('checks', 'errors'))
#: The front ends: the command line and the ROS side. The core imports none of them.
FRONT_ENDS = ('cli', 'ros', 'nodes', 'suite')


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix('').parts)
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def _imported_names(tree: ast.Module, package: str) -> list[str]:
    """Every module name an import statement of ``tree`` names, at module level or inside a function (a deferred
    import closes a circle as well when it runs), and the ``from`` names that may be modules; ``if TYPE_CHECKING:``
    blocks are left out (they never run)."""
    skipped = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
               and isinstance(block.test, ast.Name) and block.test.id == 'TYPE_CHECKING'
               for statement in block.body for node in ast.walk(statement)}
    names = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:  # relative: from the module's package up
                parent = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join(parent + ([base] if base else []))
            names += [base] + [f'{base}.{alias.name}' for alias in node.names]
    return names


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the package ``root`` it imports (:func:`_imported_names`). Importing ``a.b.c`` runs
    ``a.b``'s ``__init__`` too, so each imported module's packages count, but for the importer's own packages (they
    are imported before it: a package's ``__init__`` importing its modules is no circle)."""
    paths = {_module_name(root, path): path for path in sorted(root.rglob('*.py'))}
    graph = {}
    for module, path in paths.items():
        package = module if path.name == '__init__.py' else module.rpartition('.')[0]
        own = {'.'.join(module.split('.')[:k]) for k in range(1, module.count('.') + 2)}
        graph[module] = set()
        for name in _imported_names(ast.parse(path.read_text(encoding='utf-8')), package):
            while name and name not in paths:  # 'a.b.function' names the module a.b
                name = name.rpartition('.')[0]
            while name:
                if name not in own:
                    graph[module].add(name)
                name = name.rpartition('.')[0]
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


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
    assert import_circles(import_graph(SRC)) == []


def test_imports_run_down_the_layers_and_the_core_imports_no_front_end():
    assert layer_breaches(import_graph(SRC)) == []


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
