"""The package builds with colcon as on a ROS 2 workstation, and the installed command runs.

Users build dynid with `colcon build`; this test does the same in a temporary workspace from a copy
of the package files, then runs the installed executable through colcon's setup script.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_FILES = ('package.xml', 'setup.py', 'setup.cfg', 'README.md', 'resource', 'src', 'launch', 'config')


def test_colcon_build_installs_executables_and_share_files(tmp_path):
    colcon = Path(sys.executable).with_name('colcon')
    assert colcon.exists(), 'colcon is missing: it is pinned in requirements.txt'
    package = tmp_path / 'src' / 'dynid'
    package.mkdir(parents=True)
    for name in PACKAGE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, package / name,
                            ignore=shutil.ignore_patterns('__pycache__', '*.egg-info'))
        else:
            shutil.copy2(source, package / name)

    build = subprocess.run(
        [str(colcon), '--log-base', 'log', 'build', '--event-handlers', 'console_direct-'],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr

    install = tmp_path / 'install' / 'dynid'
    executable = install / 'lib' / 'dynid' / 'dynid'
    assert executable.is_file() and executable.stat().st_mode & 0o111
    # `ros2 run dynid <executable>` finds them
    for executable in ('sim_node', 'excitation_node', 'identifier_node', 'estimator_node', 'feedforward_node'):
        assert (install / 'lib' / 'dynid' / executable).is_file()
    assert (install / 'share' / 'dynid' / 'package.xml').is_file()
    assert (install / 'share' / 'ament_index' / 'resource_index' / 'packages' / 'dynid').is_file()
    assert list(install.glob('lib/python3*/site-packages/dynid/model/data/ur5e.yaml'))
    assert list(install.glob('lib/python3*/site-packages/dynid/excite/data/ur5e_excitation.yaml'))
    shipped = sorted(str(p.relative_to(ROOT)) for folder in ('launch', 'config') for p in (ROOT / folder).iterdir()
                     if p.is_file())
    assert {'launch/suite.launch.py', 'launch/ur.launch.py', 'launch/franka.launch.py', 'launch/gazebo.launch.py',
            'config/ur_controllers.yaml', 'config/franka_controllers.yaml', 'config/suite.yaml'} <= set(shipped)
    for name in shipped:  # `ros2 launch dynid ...` and every file it reads
        assert (install / 'share' / 'dynid' / name).is_file(), name

    script = (
        'source install/setup.bash && '
        'lib_dir=$(python3 -c "import dynid, os; print(os.path.dirname(dynid.__file__))") && '
        'echo "$lib_dir" && '
        'python3 -c "from ament_index_python.packages import get_package_share_directory as g; '
        'print(g(\'dynid\'))" && '
        'install/dynid/lib/dynid/dynid model --robot ur5e --json')
    env_path = f'{Path(sys.executable).parent}:/usr/bin:/bin'
    run = subprocess.run(['bash', '-c', script], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env={'PATH': env_path, 'HOME': str(tmp_path)})
    assert run.returncode == 0, run.stderr
    module_dir, share_dir, document = run.stdout.split('\n', 2)
    assert module_dir.startswith(str(install)), 'the installed dynid is not the one imported'
    assert share_dir == str(install / 'share' / 'dynid')
    assert json.loads(document)['base_parameters']['count'] == 36
