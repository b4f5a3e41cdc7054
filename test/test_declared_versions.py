"""The versions dynid declares are the versions its tests run on: setup.py's ranges start at the versions of
constraints-ubuntu-24.04.txt (the core's tests run on them: make test-ubuntu) and hold requirements.txt's pins (every
test runs on them: make test); and nothing Python 3.14 removed is used (Ubuntu 26.04's interpreter, untested here)."""

import ast
import re
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
#: the extras whose ranges are library versions (the test tools' follow requirements.txt)
LIBRARY_EXTRAS = ('pinocchio', 'robots', 'physical', 'mujoco', 'fleet')


def _setup_keywords() -> dict:
    tree = ast.parse((ROOT / 'setup.py').read_text())
    call = next(node for node in ast.walk(tree)
                if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'setup')
    return {keyword.arg: keyword.value for keyword in call.keywords}


def declared() -> list[Requirement]:
    keywords = _setup_keywords()
    extras = ast.literal_eval(keywords['extras_require'])
    texts = ast.literal_eval(keywords['install_requires']) + [t for name in LIBRARY_EXTRAS for t in extras[name]]
    return [Requirement(text) for text in texts]


def pins(path: Path) -> dict[str, Version]:
    """``name == version`` lines of a requirements or constraints file and the files it includes (``-r``) that
    apply to this interpreter (their markers), names normalized."""
    found = {}
    for line in path.read_text().splitlines():
        line = line.split(' #', 1)[0].strip()
        if line.startswith('-r '):
            found.update(pins(path.parent / line[3:].strip()))
        elif '==' in line and not line.startswith('#'):
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate():
                found[_normal(requirement.name)] = Version(next(iter(requirement.specifier)).version)
    return found


def _normal(name: str) -> str:
    return re.sub(r'[-_.]+', '-', name).lower()


def _lower_bound(requirement: Requirement) -> Version | None:
    return next((Version(s.version) for s in requirement.specifier if s.operator == '>='), None)


def test_every_range_starts_at_the_oldest_versions_the_core_is_tested_on():
    oldest = pins(ROOT / 'constraints-ubuntu-24.04.txt')
    checked = 0
    for requirement in declared():
        low = _lower_bound(requirement)
        if low is None:
            continue
        name = _normal(requirement.name)
        assert name in oldest, f'{name} has no version in constraints-ubuntu-24.04.txt'
        assert oldest[name] == low, f'{requirement}: the oldest tested is {oldest[name]}'
        checked += 1
    assert checked >= 14


def test_every_range_holds_the_pinned_versions_every_test_runs_on():
    newest = pins(ROOT / 'requirements.txt')
    for requirement in declared():
        name = _normal(requirement.name)
        if name in newest:
            assert requirement.specifier.contains(newest[name]), f'{requirement} excludes requirements.txt\'s {name}'


def test_the_oldest_versions_are_ubuntu_24_04s_where_it_packages_them():
    oldest = pins(ROOT / 'constraints-ubuntu-24.04.txt')
    ubuntu = {'numpy': '1.26.4', 'scipy': '1.11.4', 'pyyaml': '6.0.1', 'matplotlib': '3.6.3'}
    assert {name: str(oldest[name]) for name in ubuntu} == ubuntu


#: modules and names Python 3.12, 3.13 and 3.14 removed (What's New In Python 3.12, 3.13, 3.14, "Removed"): 3.12 and
#: 3.13 run the tests; 3.14 (Ubuntu 26.04's, ROS 2 Lyrical's) has no ROS wheels here, so this stands in for it
REMOVED_BY_3_14 = re.compile(
    r'^\s*(?:import|from)\s+(?:distutils|imp|asynchat|asyncore|smtpd|aifc|audioop|cgi|cgitb|chunk|crypt|imghdr|'
    r'mailcap|msilib|nis|nntplib|ossaudiodev|pipes|sndhdr|spwd|sunau|telnetlib|uu|xdrlib|lib2to3)\b|'
    r'\b(?:SafeConfigParser|readfp|assertEquals|assertNotEquals|assertRegexpMatches|assertItemsEqual|failUnless|'
    r'failIf|ImpImporter|ImpLoader|OptimizedUnicode|enable_shared_cache|OpenWrapper|wrap_socket|match_hostname|'
    r'ast\.(?:Num|Str|Bytes|NameConstant|Ellipsis)|find_loader|get_loader|URLopener|FancyURLopener|'
    r'get_child_watcher|set_child_watcher|AbstractChildWatcher)\b', re.M)


def test_nothing_python_3_14_removed_is_used():
    found = []
    for folder in ('src', 'test', 'testing', 'benchmarks', 'launch', '.ci'):
        for path in sorted((ROOT / folder).rglob('*.py')):
            if path == Path(__file__).resolve():
                continue
            text = path.read_text(encoding='utf-8')
            found += [f'{path.relative_to(ROOT)}: {m.group(0).strip()}' for m in REMOVED_BY_3_14.finditer(text)]
    assert found == []
