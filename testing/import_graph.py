"""The import graph of a package's source, read from its import statements, and the circles in it: what the test
suite's guard (test/test_code_shape.py) holds at zero and benchmarks/bench_house.py reports.

A module's imports are every ``import`` statement in it, at module level or inside a function (a deferred import
closes a circle as well when it runs), but for ``if TYPE_CHECKING:`` blocks (they never run). A name taken from a
package's lazy face (its ``__init__``'s module-level ``_NAMES = {name: 'sub.module'}``, loaded by ``__getattr__`` on
first use: ``dynid.identify``) is an import of the module that defines it.
"""

from __future__ import annotations

import ast
from pathlib import Path


def module_name(root: Path, path: Path) -> str:
    """The dotted name of the module at ``path`` in the package folder ``root`` (``a/b/__init__.py``: ``a.b``)."""
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


def lazy_faces(paths: dict[str, Path]) -> dict[str, dict[str, str]]:
    """{package: {name: the module that defines it}} of every package whose ``__init__`` holds a lazy face: a
    module-level ``_NAMES`` dict of string literals (module docstring)."""
    faces = {}
    for module, path in paths.items():
        if path.name != '__init__.py':
            continue
        for node in ast.parse(path.read_text(encoding='utf-8')).body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
            if isinstance(target, ast.Name) and target.id == '_NAMES' and isinstance(node.value, ast.Dict):
                faces[module] = {key.value: f'{module}.{value.value}'
                                 for key, value in zip(node.value.keys, node.value.values, strict=True)
                                 if isinstance(key, ast.Constant) and isinstance(value, ast.Constant)}
    return faces


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the package ``root`` it imports (:func:`_imported_names`). Importing ``a.b.c`` runs
    ``a.b``'s ``__init__`` too, so each imported module's packages count, but for the importer's own packages (they
    are imported before it: a package's ``__init__`` importing its modules is no circle)."""
    paths = {module_name(root, path): path for path in sorted(root.rglob('*.py'))}
    faces = lazy_faces(paths)
    graph = {}
    for module, path in paths.items():
        package = module if path.name == '__init__.py' else module.rpartition('.')[0]
        own = {'.'.join(module.split('.')[:k]) for k in range(1, module.count('.') + 2)}
        graph[module] = set()
        for name in _imported_names(ast.parse(path.read_text(encoding='utf-8')), package):
            face, _, attribute = name.rpartition('.')
            name = faces.get(face, {}).get(attribute, name)  # a name of a lazy face: its own module
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
