"""Package contract of docs/contract.md: ament_python layout, console scripts, rclpy only in ros/, nodes/ and suite/."""

import ast
import configparser
import importlib
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / 'src' / 'dynid'


def test_package_xml_is_format_3_with_the_runtime_dependencies():
    root = ET.parse(ROOT / 'package.xml').getroot()
    assert root.get('format') == '3' and root.findtext('name') == 'dynid'
    exec_depends = {e.text for e in root.findall('exec_depend')}
    assert {'rclpy', 'sensor_msgs', 'std_msgs', 'trajectory_msgs', 'diagnostic_msgs', 'std_srvs',
            'lifecycle_msgs', 'rcl_interfaces', 'launch', 'launch_ros', 'python3-numpy',
            'python3-scipy', 'python3-yaml'} <= exec_depends
    assert root.find('export/build_type').text == 'ament_python'
    assert (ROOT / 'resource' / 'dynid').is_file()


def test_setup_cfg_installs_scripts_where_ros2_run_looks():
    config = configparser.ConfigParser()
    config.read(ROOT / 'setup.cfg')
    assert config['develop']['script_dir'] == '$base/lib/dynid'
    assert config['install']['install_scripts'] == '$base/lib/dynid'


def test_design_folders_exist():
    for name in ('model', 'friction', 'signal', 'identify', 'estimate', 'control', 'contact', 'excite', 'sim',
                 'io', 'nodes', 'ros', 'suite'):
        assert (SOURCE / name / '__init__.py').is_file(), name
    assert (SOURCE / 'cli' / '__init__.py').is_file()


def test_console_scripts_point_at_existing_callables():
    from importlib.metadata import entry_points

    scripts = [e for e in entry_points(group='console_scripts') if e.value.startswith('dynid')]
    assert scripts, 'dynid is not installed'
    for entry in scripts:
        module, _, attribute = entry.value.partition(':')
        assert callable(getattr(importlib.import_module(module), attribute)), entry.value


def test_only_ros_nodes_and_suite_import_rclpy():
    offenders = []
    for path in SOURCE.rglob('*.py'):
        if any((SOURCE / name) in path.parents for name in ('ros', 'nodes', 'suite')):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ''] if isinstance(node, ast.ImportFrom) else [])
            if any(n == 'rclpy' or n.startswith('rclpy.') for n in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders


def test_core_import_does_not_load_rclpy():
    code = ('import sys, dynid.model, dynid.cli, dynid.identify.friction_fit.fit, dynid.sim.recording, dynid.io.bag; '
            'assert "rclpy" not in sys.modules')
    subprocess.run([sys.executable, '-c', code], check=True, timeout=60)


def _imported(path: Path) -> list[str]:
    """The modules a file's absolute import statements name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.append(node.module or '')
    return found


def test_the_tests_and_the_benchmarks_import_nothing_of_each_other():
    """What both need is in testing/; the benchmarks reach their own modules as the package ``benchmarks``, never
    through ``sys.path``."""
    tests = {path.stem for path in (ROOT / 'test').glob('*.py')} | {'test'}
    offenders = [f'test/{path.name}: {name}' for path in sorted((ROOT / 'test').glob('*.py'))
                 for name in _imported(path) if name.split('.')[0] == 'benchmarks']
    for path in sorted((ROOT / 'benchmarks').rglob('*.py')):
        where = path.relative_to(ROOT)
        offenders += [f'{where}: {name}' for name in _imported(path) if name.split('.')[0] in tests]
        offenders += [f'{where}: sys.path' for node in ast.walk(ast.parse(path.read_text(encoding='utf-8')))
                      if isinstance(node, ast.Attribute) and node.attr == 'path'
                      and isinstance(node.value, ast.Name) and node.value.id == 'sys']
    assert offenders == []
