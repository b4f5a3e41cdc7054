"""The command line keeps no defaults of its own: an option's default comes from the job's settings field (one
source for every front end), not from a literal in ``add_argument``. The literals not yet moved are listed
here by name; the list may only shrink: a new literal default fails, and so does a listed one that is gone
(take it off the list)."""

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / 'src' / 'dynid' / 'cli'

#: (module, option) of the literal defaults still in src/dynid/cli/ (71 when this guard came, 65 after its first moves;
#: 69 after dynid batch, --engine and UR's effort meanings arrived with literal defaults of their own; 42 after dynid
#: simulate and dynid demo took theirs from SimulationSettings, RealLogSettings and DemoSettings, 33 after dynid excite
#: from ExcitationSettings, 27 after dynid identify-friction from FrictionSettings, 17 after dynid identify and the data
#: pipeline from IdentifierSettings and FilterSettings).
NOT_YET_FROM_SETTINGS = frozenset({
    ('batch', '--robot'), ('batch', '--identify-args'), ('batch', '--workers'),
    ('bringup', '--processes'), ('bringup', '--robot'), ('bringup', '--namespace'),
    ('compare', '--bag'), ('compare', '--payload-com'), ('compare', '--top'),
    ('estimate', '--db'), ('estimate', '--health-robot'),
    ('health', '--note'),
    ('import_logs', '--storage'), ('import_logs', '--joint-states-effort'),
    ('model', '--robot'),
    ('validate', '--payload-com'), ('validate', '--require-fit'),
})


def _literal(node: ast.expr) -> bool:
    """A number, string or flag written in place, or a list of them (None, 'not given', is not a default)."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Constant):
        return node.value is not None
    return isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(item, ast.Constant) for item in node.elts)


def literal_defaults(folder: Path) -> list[tuple[str, str]]:
    """(module, first option string) of every ``add_argument(..., default=<literal>)`` in ``folder``'s modules."""
    found = []
    for path in sorted(folder.glob('*.py')):
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            if isinstance(node, ast.Call) and getattr(node.func, 'attr', None) == 'add_argument' and any(
                    keyword.arg == 'default' and _literal(keyword.value) for keyword in node.keywords):
                names = [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
                found.append((path.stem, next((name for name in names if name.startswith('--')), names[0])))
    return found


def test_no_new_literal_default_and_the_list_only_shrinks():
    found = literal_defaults(CLI)
    assert len(found) == len(set(found))
    assert sorted(set(found) - NOT_YET_FROM_SETTINGS) == [], 'take the default from the settings field'
    assert sorted(NOT_YET_FROM_SETTINGS - set(found)) == [], 'gone from the code: take it off the list'


def test_the_guard_sees_literal_defaults(tmp_path):
    (tmp_path / 'verb.py').write_text(
        "def add_arguments(parser, settings):\n"
        "    parser.add_argument('--rate', type=float, default=500.0)\n"
        "    parser.add_argument('--gain', type=float, default=-1.5)\n"
        "    parser.add_argument('--joints', default=['a', 'b'])\n"
        "    parser.add_argument('--robot', default=None)\n"
        "    parser.add_argument('--order', type=int, default=settings.order)\n")
    assert literal_defaults(tmp_path) == [('verb', '--rate'), ('verb', '--gain'), ('verb', '--joints')]


def test_an_option_takes_default_choices_type_and_help_from_its_settings_field():
    import argparse

    from dynid.cli.options import add_option
    from dynid.sim.settings import STAMPS, RealLogSettings

    parser = argparse.ArgumentParser()
    stamps = add_option(parser, RealLogSettings, 'stamps', '--log-stamps')
    glitches = add_option(parser, RealLogSettings, 'glitches', '--log-glitches')
    assert (stamps.default, stamps.choices) == (RealLogSettings().stamps, STAMPS)
    assert 'every control tick is logged' in stamps.help and '(default controller)' in stamps.help
    assert glitches.type is int and parser.parse_args(['--log-glitches', '5']).log_glitches == 5
    assert parser.parse_args([]).log_glitches == RealLogSettings().glitches


def test_a_subcommand_defaults_are_its_settings_defaults():
    from dynid.cli import build_parser
    from dynid.demo.settings import DemoSettings
    from dynid.sim.settings import RealLogSettings, SimulationSettings

    args = build_parser('simulate').parse_args(['simulate', '-o', 'out'])
    simulation, log = SimulationSettings(), RealLogSettings()
    assert (args.rate, args.seed, args.payload, args.temperature, args.storage, args.engine) == (
        simulation.rate_hz, simulation.seed, simulation.payload_kg, simulation.temperature_c, simulation.storage,
        simulation.engine)
    assert (args.log_jitter, args.log_gap_rate, args.log_stamps) == (log.jitter, log.gap_rate_hz, log.stamps)
    args = build_parser('demo').parse_args(['demo'])
    demo = DemoSettings()
    assert (args.output, args.rate, args.periods, args.method, args.processes) == (
        demo.output, demo.rate, demo.periods, demo.method, demo.processes)
