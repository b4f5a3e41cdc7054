"""The shape of dynid's source: no function longer than 80 lines, split along its
steps instead. A guard counts them over ``src/dynid`` and holds the count at zero (9 before the split)."""

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
