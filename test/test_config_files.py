"""The shipped config/*.yaml against the nodes' own declarations: one source of defaults.

Every key of a dynid node's section must be a parameter that node declares. A value equal to the node's
default may stand as documentation; a value that differs must say so on its line with the default and the
reason, ``# (default: X) why``, and X must be the node's default (so the note cannot go stale). Sections
of other nodes (ros2_control controllers) are not dynid's and are left alone.
"""

import re
from pathlib import Path

import pytest
import yaml
from rclpy.exceptions import ParameterUninitializedException

from dynid.control.configuration import FeedforwardSettings
from dynid.control.feedforward import DEFAULT_TERMS
from dynid.ros.parameter_docs import NODES, RCLPY_PARAMETERS, build_nodes

CONFIG = Path(__file__).resolve().parents[1] / 'config'
MARK = re.compile(r'\(default: (?P<default>.*?)\)\s*(?P<reason>\S.*)?$')
KEY = re.compile(r'^\s+(?P<key>\w+):\s*(?P<value>[^#]*?)\s*(#\s*(?P<comment>.*))?$')


@pytest.fixture(scope='module')
def defaults() -> dict[str, dict[str, object]]:
    """{node: {parameter: default (None: declared without one)}} from the nodes as they declare them."""
    found = {}
    for name, node in build_nodes(120):
        values = {}
        for parameter in node._parameters:
            try:
                values[parameter] = node.get_parameter(parameter).value
            except ParameterUninitializedException:
                values[parameter] = None
        found[name] = values
    return found


def _same(value, default) -> bool:
    if isinstance(default, float) and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) == default
    if isinstance(default, list | tuple) and isinstance(value, list | tuple):
        return list(value) == list(default)
    return value == default


def _lines(path: Path) -> dict[tuple[str, str], str]:
    """{(section, key): comment of the key's line} of a parameter file."""
    comments, section = {}, None
    for line in path.read_text().splitlines():
        if line and not line[0].isspace() and line.rstrip().endswith(':'):
            section = line.rstrip()[:-1]
        elif (found := KEY.match(line)) and found['key'] != 'ros__parameters':
            comments[(section, found['key'])] = found['comment'] or ''
    return comments


def _dynid_files():
    return sorted(path for path in CONFIG.glob('*.yaml') if any(
        key.split('/')[-1] in NODES for key in yaml.safe_load(path.read_text())))


@pytest.mark.parametrize('path', _dynid_files(), ids=lambda path: path.name)
def test_every_value_is_the_node_default_or_says_why_not(defaults, path):
    comments = _lines(path)
    problems = []
    for section, body in yaml.safe_load(path.read_text()).items():
        node = section.split('/')[-1]
        for key, value in (body or {}).get('ros__parameters', {}).items():
            where = f'{path.name}: {section}: {key}'
            if node == '**':  # every node: only what rclpy declares on each
                if key not in RCLPY_PARAMETERS:
                    problems.append(f'{where}: not a parameter every node has')
                continue
            if node not in NODES:
                continue
            if key not in defaults[node]:
                problems.append(f'{where}: {node} declares no such parameter')
                continue
            default = defaults[node][key]
            mark = MARK.search(comments.get((section, key), ''))
            if mark is not None and not _same(yaml.safe_load(mark['default']), default):
                problems.append(f'{where}: the comment says (default: {mark["default"]}), the node\'s is {default!r}')
            elif not _same(value, default) and (mark is None or not mark['reason']):
                problems.append(f'{where}: {value!r} is not the node\'s default {default!r}; say why on the line: '
                                f'# (default: ...) reason')
    assert not problems, '\n'.join(problems)


def test_the_feedforward_defaults_have_one_source(defaults):
    """The API's default terms, the settings' and feedforward_node's are the same object's value."""
    assert FeedforwardSettings().terms == DEFAULT_TERMS
    assert tuple(defaults['feedforward_node']['terms']) == DEFAULT_TERMS
    assert defaults['feedforward_node']['rate'] == FeedforwardSettings().rate_hz
    assert defaults['feedforward_node']['timeout'] == FeedforwardSettings().timeout_s
