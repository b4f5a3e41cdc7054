"""Core errors name settings by their field names; each front end spells them: the command line as ``--flag``,
a node as ``name:=``. A guard holds the count of messages raised outside ``src/dynid/cli/`` that name a
command-line flag at zero (43 before the fields); another the node spellings (``name:=``) in the core's strings at
zero (4 before: identify/job/session.py's NODE_SPELLING and 'force:=true', now the ROS side's); a third the flags in
the core's other strings (advice, notes, warnings built before they are raised or kept), which may only shrink.
A whole command (``dynid excite --optimize``) is a command to run, not a front end's spelling of a field."""

import ast
import re
import subprocess
from pathlib import Path

import pytest

from dds_helpers import environment, node_executable
from dynid.cli import main
from dynid.errors import InputError, checked_choice
from dynid.model import load_robot

SRC = Path(__file__).resolve().parents[1] / 'src' / 'dynid'
BRANCHED = str(Path(__file__).parent / 'data' / 'torso_arm.urdf')  # a torso, a six-joint arm, a head
FLAG = re.compile(r'(?<![\w-])--[a-z][a-z0-9-]*')
PARAMETER = re.compile(r'(?<![\w:])[a-z][a-z0-9_]*:=')
#: The front ends: each spells the fields its own way; the core names them
FRONT_ENDS = ('cli', 'ros', 'nodes', 'suite')


def flags_in_raised_messages(root: Path) -> list[str]:
    """``file:line --flag`` for every command-line flag a string of a ``raise`` statement names, outside cli/."""
    found = []
    for path in sorted(root.rglob('*.py')):
        if path.relative_to(root).parts[0] == 'cli':
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                found += [f'{path.relative_to(root)}:{node.lineno} {flag}' for part in ast.walk(node.exc)
                          if isinstance(part, ast.Constant) and isinstance(part.value, str)
                          for flag in FLAG.findall(part.value)]
    return found


#: (module, flag) of the flags the core's strings still name outside a whole command (26 when this guard came; the
#: identification's refusal, warnings and notes, the joint changes' and friction experiments' errors took {field}s
#: then, 7 left; the diagnosis's advice then, 4 left). Building a command line (fleet/batch.py,
#: io/importing.py) is the command line's spelling by design.
FLAGS_NOT_YET_FIELDS = frozenset({
    ('fleet/batch.py', '--robot'), ('fleet/batch.py', '--quiet'),
    ('io/importing.py', '--joint-states-effort'), ('io/importing.py', '--robot'),
})
COMMAND = re.compile(r'dynid [a-z][a-z-]*')


def _docstrings(tree: ast.Module) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def flags_in_core_strings(root: Path) -> set[tuple[str, str]]:
    """(module, --flag) for every command-line flag a string of the core (outside :data:`FRONT_ENDS`, docstrings
    left out) names outside a whole command (``dynid <subcommand> ... --flag`` earlier in the same string)."""
    found = set()
    for path in sorted(root.rglob('*.py')):
        if path.relative_to(root).parts[0] in FRONT_ENDS:
            continue
        tree = ast.parse(path.read_text(encoding='utf-8'))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                found |= {(path.relative_to(root).as_posix(), match.group()) for match in FLAG.finditer(node.value)
                          if not COMMAND.search(node.value[:match.start()])}
    return found


def node_spellings_in_the_core(root: Path) -> list[str]:
    """``file:line name:=`` for every node parameter spelling in a string of the core (outside :data:`FRONT_ENDS`):
    a message, an advice or a table of spellings. Docstrings are left out: they may cite a launch file's argument
    (``use_currents_as_efforts:=false`` of UR's driver)."""
    found = []
    for path in sorted(root.rglob('*.py')):
        if path.relative_to(root).parts[0] in FRONT_ENDS:
            continue
        tree = ast.parse(path.read_text(encoding='utf-8'))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        found += [f'{path.relative_to(root)}:{node.lineno} {spelled}' for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                  for spelled in PARAMETER.findall(node.value)]
    return found


def test_the_core_holds_no_node_spelling():
    assert node_spellings_in_the_core(SRC) == []


def test_the_guard_finds_a_node_spelling_in_the_core(tmp_path):
    (tmp_path / 'core.py').write_text('"""Run it with use_currents_as_efforts:=false."""\n'
                                      "ADVICE = {'force': 'force:=true'}\nif (n := 2):\n    pass\n")
    (tmp_path / 'ros').mkdir()
    (tmp_path / 'ros' / 'runner.py').write_text("SPELLING = 'joints:='\n")
    assert node_spellings_in_the_core(tmp_path) == ['core.py:2 force:=']


def test_no_message_raised_outside_the_cli_names_a_flag():
    assert flags_in_raised_messages(SRC) == []


def test_the_core_strings_name_no_new_flag_and_the_list_only_shrinks():
    found = flags_in_core_strings(SRC)
    assert sorted(found - FLAGS_NOT_YET_FIELDS) == [], 'name the field ({field}) and let the front end spell it'
    assert sorted(FLAGS_NOT_YET_FIELDS - found) == [], 'gone from the code: take it off the list'


def test_the_guard_finds_a_flag_in_an_advice_but_not_in_a_command(tmp_path):
    (tmp_path / 'core.py').write_text(
        '"""A docstring may say --joints."""\n'
        "ADVICE = 'hold its gain (--fix-drive-gain JOINT=VALUE)'\n"
        "COMMAND = 'record an optimized excitation (dynid excite --optimize, then --period 10)'\n")
    (tmp_path / 'cli').mkdir()
    (tmp_path / 'cli' / 'verb.py').write_text("HELP = '--joints is the command line: allowed here'\n")
    assert flags_in_core_strings(tmp_path) == {('core.py', '--fix-drive-gain')}


def test_the_guard_finds_a_flag_in_a_raised_message(tmp_path):
    (tmp_path / 'core.py').write_text("def f(x):\n    raise ValueError(f'{x} is bad: give --joints')\n")
    (tmp_path / 'cli').mkdir()
    (tmp_path / 'cli' / 'verb.py').write_text("raise SystemExit('--joints is the command line: allowed here')\n")
    assert flags_in_raised_messages(tmp_path) == ['core.py:2 --joints']


def test_an_error_names_its_fields_and_each_front_end_spells_them():
    error = InputError('{drives} holds no gain for {joint_name}: give it in {drives}', fields=('drives', 'joint_name'))
    assert str(error) == 'drives holds no gain for joint_name: give it in drives'
    assert error.field == 'drives' and error.fields == ('drives', 'joint_name')
    assert error.spelled(lambda field: f'<{field}>') == '<drives> holds no gain for <joint_name>: give it in <drives>'
    assert InputError('no field named').field is None
    literal = InputError('{columns}: {i} is the joint index', fields=('columns',))  # other braces stay
    assert literal.spelled(lambda field: '--' + field) == '--columns: {i} is the joint index'
    with pytest.raises(InputError, match='time_unit must be one of') as refused:
        checked_choice('{columns}: time_unit', 'h', ('s', 'ms'), fields=('columns',))
    assert refused.value.field == 'columns'


def test_the_core_names_the_field_of_a_branched_robot():
    with pytest.raises(InputError) as refused:
        load_robot(BRANCHED)
    assert refused.value.field == 'joints'
    assert 'select one chain with joints;' in str(refused.value) and '--joints' not in str(refused.value)


def test_the_command_line_spells_the_field_as_its_flag(capsys, tmp_path):
    assert main(['model', '--robot', BRANCHED]) == 2
    err = capsys.readouterr().err
    assert err.startswith('dynid model: error: ') and 'select one chain with --joints;' in err
    assert err.count('\n') == 1  # one line
    assert main(['excite', '--robot', 'ur5e', '--home', '0,0', '-o', str(tmp_path / 'never.yaml')]) == 2
    assert '--home needs 6 finite values' in capsys.readouterr().err


def test_a_node_spells_the_field_as_its_parameter(ros_domain):
    done = subprocess.run(node_executable('sim_node') + ['--ros-args', '-p', f'robot:={BRANCHED}'],
                          env=environment(ros_domain), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert 'sim_node: error: ' in done.stderr and 'select one chain with joints:=;' in done.stderr
    assert '--joints' not in done.stderr


def test_each_front_end_spells_the_fields_whose_option_is_named_otherwise():
    from dynid.cli.flags import message
    from dynid.ros.runner import node_message

    error = InputError('identify with the prior ({prior}) or give {torque_source} current; without {physical}',
                       fields=('prior', 'torque_source', 'physical'))
    assert message(error) == 'identify with the prior (without --no-prior) or give --torque current; without --physical'
    assert node_message(error) == ('identify with the prior (prior:=true) or give torque_source:= current; without '
                                   'physical:=true')


def test_a_bad_joint_change_names_the_option_or_the_parameter_that_gave_it():
    from dynid.cli.flags import message
    from dynid.ros.runner import node_message
    from dynid.sim.changes import parse_joint_change

    with pytest.raises(InputError) as refused:
        parse_joint_change('time=10,wear=2')
    assert refused.value.field == 'joint_changes'
    assert message(refused.value).startswith("--change 'time=10,wear=2': unknown key 'wear'")
    assert node_message(refused.value).startswith("joint_changes:= 'time=10,wear=2': unknown key 'wear'")
