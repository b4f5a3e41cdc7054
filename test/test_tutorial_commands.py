"""Every command of docs/tutorial.md runs, in order, in one fresh directory, and so does every command of
README.md's quick start, in another: documentation that lies fails CI.

The fenced ``sh``/``bash`` blocks of a page are read top to bottom; a line ending in ``\\`` continues on
the next, a line holding only a comment (the page's indented explanations) is no command, and a
``cat > FILE <<EOF`` line takes the lines up to its delimiter with it. Every command then runs in one
temporary directory and must exit 0, so a command that names an input no earlier command made fails here:
a ``dynid`` command in this process through :func:`dynid.cli.main` as the console script calls it
(cli_run.run_dynid: a process of its own would import dynid again for each of the 40 commands), any other
as ``bash -c`` in a subprocess.

Not run, by first word and nothing else:

- ``ros2``, ``colcon``, ``rosdep``: they need a ROS 2 installation (docs/ros2.md says which commands do);
- ``make``: ``make test`` is the suite this test belongs to, ``make demo`` is ``dynid demo``.

``dynid demo`` is not run here: it takes minutes and ``test_bringup_and_demo.py::test_demo_runs_end_to_end``
runs it end to end. ``dynid bringup`` runs as a process on its own DDS domain until each of its three nodes
has logged, and is then stopped with SIGINT (Ctrl-C), which must end it with exit 0.

Each page's run has a deadline of ``DEADLINE_S``: a subprocess's timeout is what is left of it, and a
command run in this process must end before it. The slowest commands are the twin's recordings and the
optimized excitation.
"""

import re
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from cli_run import run_dynid
from dds_helpers import environment, executable
from dynid.ros.runner import interrupt_processes

# Not in the group of the tests over DDS (conftest.py): the commands run in this process, on the CPU, but for
# one dynid bringup, whose nodes have BRINGUP_TIMEOUT_S to log.
pytestmark = pytest.mark.xdist_group('test/test_tutorial_commands.py')

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / 'docs' / 'tutorial.md'
README = ROOT / 'README.md'
NEEDS_ROS2 = ('ros2', 'colcon', 'rosdep')
NOT_RUN = NEEDS_ROS2 + ('make',)
DEADLINE_S = 900.0
BRINGUP_TIMEOUT_S = 120.0
BRINGUP_NODES = ('sim_node', 'excitation_node', 'identifier_node')
FENCE = re.compile(r'^```(?:sh|bash)[ \t]*\n(.*?)^```', re.M | re.S)
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


@dataclass(frozen=True)
class Command:
    line: str  # as the page writes it (continuations joined, a here-document's body included)
    line_number: int  # of its first line in the file, from 1

    @property
    def first_word(self) -> str:
        return self.line.split(maxsplit=1)[0]

    @property
    def subcommand(self) -> str | None:
        """``demo`` for ``dynid demo ...``; None for other programs."""
        return self.line.split()[1] if self.first_word == 'dynid' else None


def page_commands(text: str) -> list[Command]:
    """The commands of ``text``'s fenced sh/bash blocks, in order."""
    commands = []
    for match in FENCE.finditer(text):
        first = text.count('\n', 0, match.start(1)) + 1
        lines = match.group(1).splitlines()
        i = 0
        while i < len(lines):
            line, line_number = lines[i].strip(), first + i
            i += 1
            if not line or line.startswith('#'):
                continue
            while line.endswith('\\') and i < len(lines):
                line = line[:-1].rstrip() + ' ' + lines[i].strip()
                i += 1
            heredoc = HEREDOC.search(line)
            if heredoc:
                body = []
                while i < len(lines) and lines[i].strip() != heredoc.group(2):
                    body.append(lines[i])
                    i += 1
                assert i < len(lines), f'line {line_number}: the here-document has no {heredoc.group(2)} line'
                line = '\n'.join([line, *body, lines[i].strip()])
                i += 1
            commands.append(Command(line, line_number))
    return commands


def test_extraction_joins_continuations_skips_comments_and_keeps_here_documents():
    text = ('```sh\nmake demo   # comment\n```\n\n```python\nprint(1)\n```\n```bash\n'
            'dynid model --robot ur5e \\\n    --json   # a comment\n'
            '                       # only a comment: an explanation of the line above\n'
            "cat > drives.yaml <<'EOF'\na: {gear_ratio: 101}   # kept: it is the file's\nEOF\n"
            'dynid identify rec --drives drives.yaml -o r.yaml\n```\n')
    commands = page_commands(text)
    assert [command.line for command in commands] == [
        'make demo   # comment',
        'dynid model --robot ur5e --json   # a comment',
        "cat > drives.yaml <<'EOF'\na: {gear_ratio: 101}   # kept: it is the file's\nEOF",
        'dynid identify rec --drives drives.yaml -o r.yaml']
    assert [command.line_number for command in commands] == [2, 9, 12, 15]
    assert [command.first_word for command in commands] == ['make', 'dynid', 'cat', 'dynid']
    assert [command.subcommand for command in commands] == [None, 'model', None, 'identify']


def _dynid_argv(command: Command) -> list[str]:
    return executable('dynid', 'dynid.cli') + shlex.split(command.line, comments=True)[1:]


def _bringup(argv: list[str], cwd: Path, env: dict, timeout_s: float) -> tuple[int, str]:
    """Run ``dynid bringup`` until each of its nodes has logged (at most ``timeout_s``), then Ctrl-C it.

    Returns its exit code, or -1 when a node never logged (or the suite ended by itself), and the output.
    """
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(process.stdout.readline, '')), daemon=True)
    reader.start()
    end = time.monotonic() + timeout_s
    while process.poll() is None and time.monotonic() < end and not all(
            f'[{node}]' in ''.join(lines) for node in BRINGUP_NODES):
        time.sleep(0.2)
    started = process.poll() is None and all(f'[{node}]' in ''.join(lines) for node in BRINGUP_NODES)
    interrupt_processes([process], timeout_s=30.0)
    reader.join(timeout=5)  # the nodes hold the pipe until they are gone
    return process.returncode if started else -1, ''.join(lines)


def _run(command: Command, cwd: Path, env: dict, timeout_s: float) -> tuple[int, str]:
    """Run one documented command in ``cwd``; its exit code (-1 on a timeout) and its error output."""
    if command.subcommand == 'bringup':
        return _bringup(_dynid_argv(command), cwd, env, min(BRINGUP_TIMEOUT_S, timeout_s))
    if command.first_word == 'dynid':
        started = time.monotonic()
        run = run_dynid(*shlex.split(command.line, comments=True)[1:], cwd=cwd)
        code, stderr = run.returncode, run.stderr
        if time.monotonic() - started > timeout_s:
            return -1, f'ran past the test\'s deadline ({timeout_s:.0f} s left for it)\n{stderr}'
        return code, stderr
    argv = ['bash', '-c', command.line]
    try:
        run = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as expired:
        partial = expired.stderr or b''  # bytes, even with text=True
        partial = partial.decode(errors='replace') if isinstance(partial, bytes) else partial
        return -1, f'timed out after {timeout_s:.0f} s (the test\'s deadline)\n{partial}'
    return run.returncode, run.stderr


def _run_in_order(page: Path, tmp_path: Path, ros_domain: int) -> None:
    """Run every command of ``page`` in order in ``tmp_path``; each must exit 0."""
    commands = page_commands(page.read_text(encoding='utf-8'))
    env = environment(ros_domain)
    deadline = time.monotonic() + DEADLINE_S
    timings = []
    for command in commands:
        if command.first_word in NOT_RUN or command.subcommand == 'demo':
            continue  # dynid demo: test_bringup_and_demo.py::test_demo_runs_end_to_end
        started = time.monotonic()
        code, stderr = _run(command, tmp_path, env, max(1.0, deadline - time.monotonic()))
        timings.append((time.monotonic() - started, command.line.splitlines()[0]))
        where = f'{page.relative_to(ROOT)} line {command.line_number}'
        assert code == 0, f'{where}: `{command.line}` exited {code}:\n{stderr[-3000:]}'
    print('\n'.join(f'{seconds:6.1f} s  {line}' for seconds, line in timings))
    print(f'{sum(seconds for seconds, _ in timings):6.1f} s  in all')


def test_every_tutorial_command_runs_in_order(tmp_path, ros_domain):
    commands = page_commands(TUTORIAL.read_text(encoding='utf-8'))
    assert sum(command.first_word == 'dynid' for command in commands) >= 20  # the extraction found the examples
    _run_in_order(TUTORIAL, tmp_path, ros_domain)


def test_every_readme_quick_start_command_runs_in_order(tmp_path, ros_domain):
    commands = page_commands(README.read_text(encoding='utf-8'))
    assert sum(command.first_word == 'dynid' for command in commands) >= 5  # the quick start was found
    assert {'make'} <= {command.first_word for command in commands}  # the two commands, not run here
    _run_in_order(README, tmp_path, ros_domain)
