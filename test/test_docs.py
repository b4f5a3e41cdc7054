"""The documentation inside the repository: generated parameter page up to date, links that resolve,
nothing that points outside the repository, and a node reference that names what the nodes create."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / 'docs'
LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')


#: folders of generated files: make docs' output (the docs test of another pytest-xdist worker may be writing and
#: removing them meanwhile) and Python's and numba's caches
GENERATED = frozenset({'_build', '_autosummary', '__pycache__'})


def _files(folder: Path) -> list[Path]:
    """The files under ``folder``, not descending into :data:`GENERATED` folders."""
    found = []
    for parent, folders, names in os.walk(folder):
        folders[:] = sorted(name for name in folders if name not in GENERATED)
        found += [Path(parent, name) for name in sorted(names)]
    return found


def _markdown_files() -> list[Path]:
    return [ROOT / 'README.md', ROOT / 'benchmarks' / 'README.md',
            *sorted(path for path in _files(DOCS) if path.suffix == '.md')]


@pytest.fixture(scope='module')
def fresh_parameter_page(tmp_path_factory, module_ros_domain) -> str:
    """The parameter page as the nodes declare their parameters now (the generator, run as a user runs it)."""
    output = tmp_path_factory.mktemp('docs') / 'parameters.md'
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONPATH=str(ROOT / 'src'))
    env.setdefault('AMENT_PREFIX_PATH', sys.prefix)
    done = subprocess.run([sys.executable, '-m', 'dynid.ros.parameter_docs', '--domain-id', str(module_ros_domain),
                           '--output', str(output)], cwd=output.parent, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return output.read_text(encoding='utf-8')


def test_parameter_page_matches_the_declared_parameters(fresh_parameter_page):
    """A parameter added, removed or changed in a node without regenerating the page fails here."""
    from dynid.ros.parameter_docs import page_difference

    committed = (DOCS / 'nodes' / 'parameters.md').read_text(encoding='utf-8')
    difference = page_difference(committed, fresh_parameter_page, 'docs/nodes/parameters.md')
    assert not difference, f'run python -m dynid.ros.parameter_docs:\n{difference[-4000:]}'


def test_the_page_documents_every_parameter_with_its_range(fresh_parameter_page):
    """The page is not vacuous: each node has its section, and declared ranges appear as declared."""
    from dynid.ros.parameter_docs import NODES, page_difference

    for name in NODES:
        assert f'\n## {name}\n' in fresh_parameter_page
    assert '| `rate` | double | `500.0` | [1.0, 2000.0] | yes |' in fresh_parameter_page  # sim_node
    assert '| `intake_depth` | integer | `1000` | [10, 100000] | yes |' in fresh_parameter_page
    stale = fresh_parameter_page.replace('| `payload_mass` |', '| `payload_mass_renamed` |')
    assert '+| `payload_mass` |' in page_difference(stale, fresh_parameter_page)


def test_nothing_points_outside_the_repository():
    """What `grep -r "\\.\\./shared" README.md docs src` checks: no file names the authors' own notes."""
    files = [ROOT / 'README.md', *_files(DOCS), *_files(ROOT / 'src'), *(ROOT / 'test').glob('*.py'),
             *(ROOT / 'testing').glob('*.py'), *(ROOT / 'benchmarks').glob('*.py')]
    notes = (b'../shared', b'DESIGN.md', b'STYLE.md', b'thesis_ch', b'ros2_conventions.md', b'li_and_pa10')
    offenders = [f'{path.relative_to(ROOT)}: {note.decode()}' for path in files if path.is_file()
                 and path.suffix != '.pyc' and path != Path(__file__) for note in notes if note in path.read_bytes()]
    assert not offenders


def test_every_relative_link_resolves():
    broken = []
    for page in _markdown_files():
        text = re.sub(r'```.*?```', '', page.read_text(encoding='utf-8'), flags=re.S)  # code is not a link
        for target in LINK.findall(text):
            if re.match(r'[a-z][a-z0-9+.-]*:', target) or target.startswith('#'):
                continue  # an address or an anchor on the same page
            path = (page.parent / target.split('#')[0]).resolve()
            if ROOT not in path.parents and path != ROOT or not path.exists():
                broken.append(f'{page.relative_to(ROOT)}: {target}')
    assert not broken


def test_readme_links_the_docs():
    readme = (ROOT / 'README.md').read_text(encoding='utf-8')
    assert '(docs/README.md)' in readme
    assert (DOCS / 'README.md').is_file()


def test_node_reference_names_every_topic_and_service_the_nodes_create(monkeypatch, ros_domain):
    """Each node's section of docs/nodes/README.md names every topic and service it has at start-up,
    with its type (feedforward_node: after configure, in each mode)."""
    pytest.importorskip('rclpy')
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    from rclpy.lifecycle import TransitionCallbackReturn

    from dynid.ros.parameter_docs import build_nodes, endpoints

    reference = (DOCS / 'nodes' / 'README.md').read_text(encoding='utf-8')
    sections = dict(re.findall(r'^## (\w+)\n(.*?)(?=^## |\Z)', reference, flags=re.S | re.M))
    missing = []
    for name, node in build_nodes(domain_id=ros_domain):
        assert name in sections, f'docs/nodes/README.md has no section "## {name}"'
        found = endpoints(node)
        if name == 'feedforward_node':
            parameter = type(node.get_parameter('mode'))
            for mode in ('trajectory', 'streaming', 'measured'):  # friction_static would need a result
                node.set_parameters([parameter('mode', value=mode),
                                     parameter('terms', value=['rigid_body', 'rotor_inertia'])])
                assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS, node.refusal
                for kind, items in endpoints(node).items():
                    found[kind] = found[kind] + items
                node.trigger_cleanup()
        for kind, items in found.items():
            for topic, type_name, _ in items:
                if f'`{topic}`' not in sections[name] or type_name not in sections[name]:
                    missing.append(f'{name} {kind} `{topic}` ({type_name})')
    assert not missing
