"""The command line keeps no defaults of its own: an option's default comes from the job's settings field (one
source for every front end: :func:`dynid.cli.options.add_option`), not from a literal in ``add_argument``. There were
71 literal defaults when this guard came, 69 at their most; none now, and a new one fails."""

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / 'src' / 'dynid' / 'cli'


def _literal(node: ast.expr) -> bool:
    """A number, string or flag written in place, or a list of them (None, 'not given', is not a default)."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Constant):
        return node.value is not None
    return isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(item, ast.Constant) for item in node.elts)


def literal_defaults(folder: Path) -> list[tuple[str, str]]:
    """(module, first option string) of every ``add_argument(..., default=<literal>)`` in ``folder``'s modules, and
    of every ``add_option(..., default=<literal>)`` (which would override its field's default)."""
    found = []
    for path in sorted(folder.glob('*.py')):
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
            called = getattr(node.func, 'attr', None) or getattr(node.func, 'id', None) \
                if isinstance(node, ast.Call) else None
            if called in ('add_argument', 'add_option') and any(
                    keyword.arg == 'default' and _literal(keyword.value) for keyword in node.keywords):
                names = [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
                found.append((path.stem, next((name for name in names if name.startswith('--')), names[0])))
    return found


def test_no_option_has_a_literal_default():
    assert literal_defaults(CLI) == [], 'take the default from the job\'s settings field (dynid.cli.options.add_option)'


def test_the_guard_sees_literal_defaults(tmp_path):
    (tmp_path / 'verb.py').write_text(
        "def add_arguments(parser, settings):\n"
        "    parser.add_argument('--rate', type=float, default=500.0)\n"
        "    parser.add_argument('--gain', type=float, default=-1.5)\n"
        "    parser.add_argument('--joints', default=['a', 'b'])\n"
        "    parser.add_argument('--robot', default=None)\n"
        "    parser.add_argument('--order', type=int, default=settings.order)\n"
        "    add_option(parser, Settings, 'seed', '--seed', default=3)\n"
        "    add_option(parser, Settings, 'rate_hz', '--log-rate', default=None)\n")
    assert literal_defaults(tmp_path) == [('verb', '--rate'), ('verb', '--gain'), ('verb', '--joints'),
                                          ('verb', '--seed')]


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


def test_identification_options_and_the_node_parameters_are_one_settings_class():
    from dynid.cli import build_parser
    from dynid.fleet.settings import BatchSettings
    from dynid.identify.settings import IdentifierSettings
    from dynid.io.importing import ImportSettings
    from dynid.signal.preprocess import FilterSettings

    args = build_parser('identify').parse_args(['identify', 'bag', '-o', 'result.yaml'])
    node, filters = IdentifierSettings(), FilterSettings()
    assert (args.method, args.friction, args.torque, args.physical_solver) == (
        node.method, node.friction, node.torque_source, node.physical_solver)
    assert (args.stiction_velocity, args.motion_bandwidth) == (filters.stiction_velocity, filters.motion_bandwidth_hz)
    assert node.stiction_velocity == filters.stiction_velocity
    args = build_parser('import').parse_args(['import', 'log.csv', '-o', 'bag'])
    assert (args.bridge, args.timing, args.storage) == (ImportSettings().bridge, ImportSettings().timing,
                                                        ImportSettings().storage)
    args = build_parser('batch').parse_args(['batch', 'root'])
    assert (args.robot, args.identify_args, args.workers) == (BatchSettings().robot, BatchSettings().identify_args,
                                                              BatchSettings().workers)
