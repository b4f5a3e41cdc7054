"""The node executables end quietly on Ctrl-C, also while they still load (``dynid bringup`` stopped at once).

A node process spends seconds importing its modules (rclpy, pinocchio, scipy, numba) before the node
exists; a Ctrl-C then used to end it with a KeyboardInterrupt traceback from deep inside an import.
The executables (``python -m dynid.nodes <node>``, what dynid bringup starts, and the console scripts
of ``ros2 run``) import the node's module under :func:`dynid.ros.runner.run_executable`, which also
turns the error of native code that reports a Ctrl-C as its own (``ImportError: initialization failed``
from an extension module interrupted in its initialization, seen under dynid bringup) into one line.

They, ``dynid bringup`` and ``dynid demo`` refuse a ROS_DOMAIN_ID that rcl or DDS would mishandle (above
232 Fast DDS ends the process with exit code 1 when the first node is created; rcl reads ``-1`` as
domain 0) with exit code 2 and one line, before rclpy loads.
"""

import ast
import ctypes
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from dds_helpers import environment, executable
from dynid.errors import InputError
from dynid.ros import runner

ROOT = Path(__file__).resolve().parents[1]
LOADED = '_rclpy_pybind11'  # rclpy's extension: mapped into the process while the node's module imports


@pytest.mark.parametrize('node', ['sim_node', 'feedforward_node'])
def test_ctrl_c_while_the_node_still_loads_ends_quietly(node, ros_domain):
    process = subprocess.Popen([sys.executable, '-m', 'dynid.nodes', node, '--ros-args', '-p', 'robot:=ur5e'],
                               env=environment(ros_domain), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    maps = Path(f'/proc/{process.pid}/maps')
    end = time.monotonic() + 60.0
    while process.poll() is None and time.monotonic() < end and LOADED not in maps.read_text():
        time.sleep(0.002)
    assert process.poll() is None, 'the node ended before it was interrupted'
    process.send_signal(signal.SIGINT)
    output, errors = process.communicate(timeout=60)
    assert '[INFO]' not in output + errors  # interrupted while loading: the node never ran
    assert 'Traceback' not in errors and 'KeyboardInterrupt' not in errors, errors
    assert process.returncode == 0, errors


def test_an_unknown_node_is_refused_with_the_list():
    run = subprocess.run([sys.executable, '-m', 'dynid.nodes', 'no_node'], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2 and 'sim_node,excitation_node,identifier_node' in run.stderr


def test_every_node_has_a_console_script_through_the_runner():
    """setup.py's console scripts (``ros2 run dynid <node>``) are runner.<node>, which runs that node."""
    setup = ast.parse((ROOT / 'setup.py').read_text())
    scripts = next(ast.literal_eval(keyword.value)['console_scripts'] for node in ast.walk(setup)
                   if isinstance(node, ast.Call) for keyword in node.keywords if keyword.arg == 'entry_points')
    targets = dict(script.replace(' ', '').split('=') for script in scripts)
    for node in runner.NODES:
        assert targets[node] == f'dynid.ros.runner:{node}'
        assert callable(getattr(runner, node)) and (ROOT / 'src' / 'dynid' / 'nodes' / f'{node}.py').is_file()


def _fake_node(monkeypatch, main):
    module = types.ModuleType('dynid.nodes.fake_node')
    module.main = main
    monkeypatch.setitem(sys.modules, 'dynid.nodes.fake_node', module)


def test_an_error_of_interrupted_native_code_is_one_line_after_ctrl_c(monkeypatch, capsys):
    def main(args):
        try:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C ...
        except KeyboardInterrupt:
            # ... as an extension module's initialization reports it (numpy's: 30 lines of advice)
            raise ImportError('initialization failed\n\nPlease note and check the following:') from None

    _fake_node(monkeypatch, main)
    runner.run_executable('fake_node')
    assert capsys.readouterr().err == 'fake_node: stopped by Ctrl-C (ImportError: initialization failed)\n'
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_an_error_without_ctrl_c_is_raised(monkeypatch):
    def main(args):
        raise ImportError('initialization failed')

    _fake_node(monkeypatch, main)
    with pytest.raises(ImportError):
        runner.run_executable('fake_node')


def test_only_the_first_ctrl_c_interrupts(monkeypatch):
    closed = []

    def main(args):
        try:
            signal.raise_signal(signal.SIGINT)  # the terminal's Ctrl-C
            closed.append('not reached')
        finally:
            signal.raise_signal(signal.SIGINT)  # dynid bringup passing it on while the node closes its recording
            closed.append('closed')

    _fake_node(monkeypatch, main)
    runner.run_executable('fake_node')
    assert closed == ['closed']


def test_a_ctrl_c_dropped_by_a_callback_from_native_code_is_not_printed_and_the_node_does_not_start(monkeypatch,
                                                                                                 capsys):
    """llvmlite calls back into Python while numba compiles; a KeyboardInterrupt raised there cannot leave the callback,
    and Python prints it as an ignored exception with a traceback: seen on CI as sim_node's output when a test stopped
    it while it compiled."""
    steps = []

    @ctypes.CFUNCTYPE(None)
    def callback():
        signal.raise_signal(signal.SIGINT)  # Ctrl-C while native code runs its Python callback
        steps.append('not reached')

    def main(args):
        callback()
        steps.append('returned')
        runner.run_node(lambda: steps.append('node created'), 'fake_node', args)

    _fake_node(monkeypatch, main)
    runner.run_executable('fake_node')
    assert steps == ['returned'] and capsys.readouterr().err == ''
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not runner._ctrl_c_dropped  # a node run in this process afterwards starts


def test_an_unraisable_error_without_ctrl_c_is_still_reported(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, 'unraisablehook', seen.append)

    @ctypes.CFUNCTYPE(None)
    def callback():
        raise ValueError('a bug in a callback')

    _fake_node(monkeypatch, lambda args: callback())
    runner.run_executable('fake_node')
    assert [type(unraisable.exc_value) for unraisable in seen] == [ValueError]
    assert sys.unraisablehook == seen.append  # restored


def test_a_node_whose_way_out_hangs_after_ctrl_c_says_where_on_stderr_and_ends(tmp_path):
    """A node still running STUCK_DUMP_S after its Ctrl-C prints every thread's stack and ends (exit code 1), before a
    stopper's SIGTERM (seen on CI: sim_node and excitation_node under dynid bringup ended neither after Ctrl-C nor
    after SIGTERM, the second stuck in rclpy's Node.destroy_node)."""
    code = ("import sys, time, types\n"
            "from dynid.ros import runner\n"
            "runner.STUCK_DUMP_S = 0.5\n"
            "node = types.ModuleType('dynid.nodes.fake_node')\n"
            "def main(args):\n"
            "    try:\n"
            "        print('spinning', flush=True)\n"
            "        time.sleep(60)\n"
            "    finally:\n"
            "        time.sleep(30.0)  # a way out that hangs\n"
            "node.main = main\n"
            "sys.modules['dynid.nodes.fake_node'] = node\n"
            "runner.run_executable('fake_node')\n")
    (tmp_path / 'entry.py').write_text(code)
    env = dict(environment(0), PYTHONPATH=f'{tmp_path}:{ROOT / "src"}')
    process = subprocess.Popen([sys.executable, '-m', 'entry'], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == 'spinning\n'
    process.send_signal(signal.SIGINT)
    start = time.monotonic()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1 and time.monotonic() - start < 20.0  # not the 30 s of the hang
    assert 'Timeout (0:00:00.500000)!' in err and 'in main' in err, err


#: A Ctrl-C while exec()'d code runs (dataclasses' and namedtuple's methods are built so during a node's imports and
#: construction): ``python -m entry`` of a node executable and of the dynid command, with the exit code each owes.
CTRL_C = "exec('import signal\\nsignal.raise_signal(signal.SIGINT)\\nx = 1')"
CTRL_C_IN_EXEC = {
    'node': ("import sys, types\n"
             "from dynid.ros import runner\n"
             "node = types.ModuleType('dynid.nodes.fake_node')\n"
             f"node.main = lambda args: {CTRL_C}\n"
             "sys.modules['dynid.nodes.fake_node'] = node\n"
             "runner.run_executable('fake_node')\n", 0),
    'dynid': ("import sys\n"
              "from dynid import cli\n"
              f"cli.model.run = lambda args: {CTRL_C}\n"
              "sys.exit(cli.main(['model', '--list']))\n", 130),
}


@pytest.mark.parametrize('entry', CTRL_C_IN_EXEC)
def test_a_ctrl_c_caught_while_exec_code_ran_ends_with_the_exit_code_dynid_gives(entry, tmp_path):
    """CPython kills a ``python -m`` process with SIGINT at its end (exit code -2, no message) once a
    KeyboardInterrupt has left exec()'d code, caught or not (:func:`dynid.ros.runner.forget_caught_ctrl_c`): seen as
    sim_node's exit code -2 after a clean stop where a Ctrl-C came while the node was being constructed."""
    code, exit_code = CTRL_C_IN_EXEC[entry]
    (tmp_path / 'entry.py').write_text(code)
    env = dict(environment(0), PYTHONPATH=f'{tmp_path}:{ROOT / "src"}')
    run = subprocess.run([sys.executable, '-m', 'entry'], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60)
    assert (run.returncode, run.stdout + run.stderr) == (exit_code, '')


@pytest.mark.parametrize('value', ['', '0', '7', ' 42 ', '101', '215', '232'])
def test_a_valid_or_unset_domain_id_is_accepted(value):
    runner.check_domain_id({'ROS_DOMAIN_ID': value})
    runner.check_domain_id({})


@pytest.mark.parametrize(('value', 'reason'), [
    ('233', 'above 232'), ('240', 'above 232'), ('99999999999999999999', 'above 232'),
    ('-1', 'not a ROS domain id'),     # rcl: strtoul wraps it to its "default" marker, domain 0
    ('010', 'not a ROS domain id'),    # rcl: octal, domain 8
    ('0x10', 'not a ROS domain id'),   # rcl: domain 16
    ('12abc', 'not a ROS domain id'),  # rcl: domain 12
    ('abc', 'not a ROS domain id'), ('1.5', 'not a ROS domain id'),
])
def test_an_invalid_domain_id_is_refused_in_one_line(value, reason):
    with pytest.raises(InputError, match=reason) as refusal:
        runner.check_domain_id({'ROS_DOMAIN_ID': value})
    assert 'ROS_DOMAIN_ID' in str(refusal.value) and '\n' not in str(refusal.value)


def test_the_executable_refuses_the_domain_id_before_the_node_loads(monkeypatch, capsys):
    started = []
    _fake_node(monkeypatch, started.append)
    monkeypatch.setenv('ROS_DOMAIN_ID', '240')
    with pytest.raises(SystemExit) as ended:
        runner.run_executable('fake_node')
    assert ended.value.code == 2 and started == []
    assert capsys.readouterr().err.startswith('fake_node: error: ROS_DOMAIN_ID=240 is above 232')


@pytest.mark.parametrize('command', [
    [sys.executable, '-m', 'dynid.nodes', 'sim_node'],  # the console scripts run the same run_executable
    executable('dynid', 'dynid.cli') + ['bringup'],
    executable('dynid', 'dynid.cli') + ['bringup', '--no-processes'],
    executable('dynid', 'dynid.cli') + ['demo', '-o', 'never_written'],
])
def test_a_domain_id_above_232_ends_the_command_with_exit_code_2_and_one_line(command, tmp_path):
    run = subprocess.run(command, env=dict(environment(0), ROS_DOMAIN_ID='240'), cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    assert len(run.stderr.splitlines()) == 1 and 'ROS_DOMAIN_ID=240 is above 232' in run.stderr, run.stderr
    assert '[INFO]' not in run.stdout + run.stderr and not any(tmp_path.iterdir())


# ------------------------------------------------------------------------------- how processes are stopped
IGNORING = ('import signal, sys, time\n'
            'for name in sys.argv[1:]:\n'
            '    signal.signal(getattr(signal, name), signal.SIG_IGN)\n'
            'print("ready", flush=True)\n'
            'time.sleep(120)\n')


def test_a_stop_escalates_from_ctrl_c_to_sigterm_to_sigkill():
    """Each process gets the next signal only if it ignored the one before (short waits: only the codes count)."""
    processes = [subprocess.Popen([sys.executable, '-c', IGNORING, *ignored], stdout=subprocess.PIPE, text=True)
                 for ignored in ((), ('SIGINT',), ('SIGINT', 'SIGTERM'))]
    for process in processes:
        assert process.stdout.readline().strip() == 'ready'
    codes = runner.interrupt_processes(processes, timeout_s=0.5, terminate_s=0.5)
    assert codes == [-signal.SIGINT, -signal.SIGTERM, -signal.SIGKILL]


def test_ctrl_c_ends_a_process_started_with_sigint_ignored():
    """A parent that ignores SIGINT (nohup, `cmd &` in a script) hands that on; dynid takes Ctrl-C back."""
    code = ('import signal, subprocess, sys\n'
            'signal.signal(signal.SIGINT, signal.SIG_IGN)\n'
            'child = ("import signal; from dynid.ros.runner import restore_ctrl_c; "\n'
            '         "ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN; restore_ctrl_c(); "\n'
            '         "print(ignored, signal.getsignal(signal.SIGINT) is signal.default_int_handler)")\n'
            'print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout.strip())\n')
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == 'True True', run.stderr
