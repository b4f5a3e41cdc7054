"""A fleet prior (``dynid fleet prior RESULT... -o FILE``, ``dynid identify --prior FILE``): the results of robots of
one model pooled into a robust centre and spread per parameter, refused by name when they cannot be pooled, used as
the prior of the next identification, and each robot's place in its fleet judged leave-one-out with a known
false-flag rate."""

import dataclasses
import hashlib

import numpy as np
import pytest
import yaml

from builders import FRICTION, OWN_SIGMA, SPREAD, UNPOOLABLE, fleet_results, members_of, saved
from cli_run import run_dynid
from dynid.errors import InputError
from dynid.excite.trajectory import builtin_excitation_path
from dynid.fleet.prior import MAD_TO_SIGMA, FleetTable, fleet_prior, read_members
from dynid.fleet.standing import SN_FROM_OTHERS, apart_threshold, fleet_standing, sn_scale, standing_population
from dynid.identify.result.result import IdentificationResult
from dynid.identify.solve.flange_load import flange_load_freed
from dynid.identify.solve.fleet_prior_file import FleetPriorFile
from dynid.identify.solve.prior import (
    PRIOR_STD_GRID,
    PhysicalLayout,
    PriorRows,
    ReducedRows,
    cross_validated_prior_std,
    time_folds,
)
from dynid.identify.solve.prior_source import FleetPrior, ResultPrior, prior_source, result_std, spread_rows
from dynid.model import load_robot

#: the faults put on three robots: (robot index, parameter, factor)
FAULTS = ((3, 'Fc_3', 1.6), (11, 'drive_gain_2', 1.1), (20, 'Fv_5', 1.6))


@pytest.fixture(scope='module')
def ur5e_model():
    return load_robot('ur5e')


# ------------------------------------------------------------------------------------------ the prior
def test_the_prior_pools_each_parameter_robustly_and_is_written_whole(ur5e_model, tmp_path):
    results = fleet_results(ur5e_model, 12, seed=1)
    paths = saved(tmp_path, results)
    prior = fleet_prior(read_members(paths))
    assert prior.robots == 12 and prior.robot == 'ur5e' and prior.model['torque_source'] == 'current'
    kinds = [p.kind for p in prior.parameters]
    assert (kinds.count('base'), kinds.count('friction'), kinds.count('drive_gain')) == (36, 18, 6)
    fc3 = prior.of_kind('friction')['Fc_3']
    values = [r.value('Fc_3') for r in results]
    assert fc3.joint == 'elbow_joint' and fc3.count == 12
    assert fc3.centre == pytest.approx(np.median(values))
    mad = MAD_TO_SIGMA * np.median(np.abs(np.array(values) - np.median(values)))
    assert fc3.spread == pytest.approx(max(mad, OWN_SIGMA * SPREAD['friction'] * FRICTION['Fc']))
    # the spread estimates the population's (5 % of each centre): one MAD of 12 robots scatters by some 30 %, the
    # median of the 18 friction parameters' ratios within 20 % of 1
    ratios = [p.spread / (SPREAD['friction'] * FRICTION[p.name.split('_')[0]])
              for p in prior.of_kind('friction').values()]
    assert 0.8 < np.median(ratios) < 1.2, ratios
    assert prior.of_kind('drive_gain')['drive_gain_2'].joint == 'shoulder_lift_joint'
    assert prior.of_kind('base')['Izz_2R'].expression == ur5e_model.base.expressions[ur5e_model.base.names.index(
        'Izz_2R')]
    out = tmp_path / 'fleet_prior.yaml'
    prior.save(out)
    data = yaml.safe_load(out.read_text())
    assert list(data)[:2] == ['kind', 'dynid_fleet_prior'] and data['kind'] == 'fleet prior'
    assert data['robots'] == 12 and [m['name'] for m in data['members']] == [f'cell-{r:02d}' for r in range(12)]
    assert data['members'][0]['sha256'] == hashlib.sha256((tmp_path / 'cell-00.yaml').read_bytes()).hexdigest()
    again = FleetPriorFile.load(out)
    assert again.parameters == prior.parameters and again.members == prior.members
    assert [p.name for p in tmp_path.iterdir() if 'partial' in p.name] == []


def test_a_parameter_all_robots_agree_on_keeps_a_spread(ur5e_model):
    results = fleet_results(ur5e_model, 5, seed=2)
    agreed = [dataclasses.replace(r, values=np.where(np.array(r.parameter_names) == 'Fv_2', 1.5, r.values))
              for r in results]
    prior = fleet_prior(members_of(agreed))
    fv2 = prior.of_kind('friction')['Fv_2']
    assert fv2.centre == 1.5 and fv2.spread == pytest.approx(OWN_SIGMA * SPREAD['friction'] * 1.5)  # the σ floor
    blind = [dataclasses.replace(r, std=np.full(len(r.std), np.nan)) for r in agreed]
    prior = fleet_prior(members_of(blind))
    assert 'Fv_2' not in prior.of_kind('friction')
    assert [entry['reason'] for entry in prior.left_out if entry['name'] == 'Fv_2'] == [
        'no spread: every robot holds the same value and none a σ (a term the identification held?)']


def test_one_bad_robot_moves_neither_centre_nor_spread_far(ur5e_model):
    results = fleet_results(ur5e_model, 15, seed=3)
    clean = fleet_prior(members_of(results)).of_kind('friction')['Fc_2']
    bad = results[:]
    index = results[7].parameter_names.index('Fc_2')
    bad[7] = dataclasses.replace(results[7], values=np.where(np.arange(len(results[7].values)) == index,
                                                             10 * results[7].values[index], results[7].values))
    moved = fleet_prior(members_of(bad)).of_kind('friction')['Fc_2']
    mean_shift = (10 - 1) * results[7].values[index] / 15  # what the mean would move: 1.8 N·m, 12 spreads
    assert abs(moved.centre - clean.centre) < 0.5 * clean.spread < 0.05 * mean_shift
    assert moved.spread < 1.5 * clean.spread


def test_drive_gains_of_fewer_than_three_robots_are_left_out(ur5e_model):
    results = [dataclasses.replace(r, drive_gains_identified=r_index < 2)
               for r_index, r in enumerate(fleet_results(ur5e_model, 4, seed=4))]
    prior = fleet_prior(members_of(results))
    assert prior.of_kind('drive_gain') == {}
    assert {'name': 'drive_gain_1', 'reason': '2 robots identified it (the others held it or have none): at least 3 '
                                              'needed'} in prior.left_out
    plain = fleet_prior(members_of([dataclasses.replace(r, drive_gains_identified=False) for r in results]))
    assert plain.left_out == () and plain.of_kind('drive_gain') == {}


# ------------------------------------------------------------------------------------------ refusals
def test_fewer_than_three_robots_are_refused(ur5e_model, tmp_path):
    paths = saved(tmp_path, fleet_results(ur5e_model, 2, seed=5))
    with pytest.raises(InputError, match=r'a prior of 2 robots \(results\): at least 3 needed'):
        fleet_prior(read_members(paths))
    done = run_dynid('fleet', 'prior', *paths, '-o', str(tmp_path / 'prior.yaml'))
    assert done.returncode == 2 and 'Traceback' not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == ('dynid fleet: error: a prior of 2 robots (RESULT): at least 3 '
                                                    'needed')
    assert not (tmp_path / 'prior.yaml').exists()
    # a fleet prior file that says it pooled two robots is refused by dynid identify, never used silently
    prior = fleet_prior(members_of(fleet_results(ur5e_model, 3, seed=5)))
    data = prior.to_dict()
    data['robots'], data['members'] = 2, data['members'][:2]
    (tmp_path / 'two.yaml').write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match='two.yaml: a prior of 2 robots: at least 3 needed'):
        prior_source(str(tmp_path / 'two.yaml'), ur5e_model)


@pytest.mark.parametrize('change, named', UNPOOLABLE.values(), ids=UNPOOLABLE.keys())
def test_results_that_cannot_be_pooled_are_refused_by_file_and_field(ur5e_model, tmp_path, change, named):
    results = fleet_results(ur5e_model, 4, seed=6)
    results[2] = change(results[2])
    paths = saved(tmp_path, results)
    with pytest.raises(InputError, match=f"'{tmp_path / 'cell-02.yaml'}'.*{named}") as caught:
        fleet_prior(read_members(paths))
    assert caught.value.field == 'results'


def test_a_result_given_twice_or_missing_is_refused(ur5e_model, tmp_path):
    paths = saved(tmp_path, fleet_results(ur5e_model, 3, seed=7))
    copy = tmp_path / 'copy.yaml'
    copy.write_bytes((tmp_path / 'cell-01.yaml').read_bytes())
    with pytest.raises(InputError, match="'.*copy.yaml' is the same result as '.*cell-01.yaml': each robot once"):
        read_members([*paths, str(copy)])
    with pytest.raises(InputError, match="'.*gone.yaml': no such result file"):
        read_members([*paths, str(tmp_path / 'gone.yaml')])


# ------------------------------------------------------------------------------------------ the source
def test_the_fleet_prior_rows_are_each_base_parameter_over_its_spread(ur5e_model, tmp_path):
    from types import SimpleNamespace

    prior = fleet_prior(members_of(fleet_results(ur5e_model, 6, seed=8)))
    path = prior.save(tmp_path / 'fleet.yaml')
    source = prior_source(str(path), ur5e_model)
    assert isinstance(source, FleetPrior) and source.pulls() and source.left_out() == []
    assert source.provenance() == {'kind': 'fleet prior', 'path': str(path), 'robots': 6,
                                   'sha256': hashlib.sha256(path.read_bytes()).hexdigest(), 'robot': 'ur5e',
                                   'created': yaml.safe_load(path.read_text())['provenance']['created'],
                                   'members': [f'cell-{r:02d}' for r in range(6)]}
    base = ur5e_model.base
    names = list(base.names)
    free = [name for name in names if name != 'my_2']  # a base parameter held at a value has no column
    to_base = np.random.default_rng(0).standard_normal((len(free), 60))  # the free columns' rows of K
    layout = SimpleNamespace(to_base=to_base, rotor_start=60)
    problem = SimpleNamespace(rigid_names=names, base=base, identify_rotor_inertia=False,
                              candidate=SimpleNamespace(friction='load_squared'))  # not the fleet's law
    rows = source.rows(problem, layout, free)
    pooled = prior.of_kind('base')
    spread = np.array([pooled[name].spread for name in free])
    assert rows.a.shape == (len(free), 60)
    np.testing.assert_allclose(rows.a, to_base / spread[:, None], rtol=1e-12)
    np.testing.assert_allclose(rows.b, np.array([pooled[name].centre for name in free]) / spread, rtol=1e-12)
    # a model whose base grouping differs from the fleet's is refused by name
    other = SimpleNamespace(rigid_names=names, identify_rotor_inertia=False, candidate=problem.candidate,
                            base=SimpleNamespace(names=base.names, expressions=('Izz_1 + Ia_1', *base.expressions[1:])))
    with pytest.raises(InputError, match=r"fleet.yaml' groups the base parameters \['Izz_1R'\] otherwise"):
        source.rows(other, layout, free)
    # the fleet's own law: each free friction parameter it pools pulled too, (f - centre)/spread
    same = SimpleNamespace(**{**vars(problem), 'candidate': SimpleNamespace(friction='viscous_coulomb')})
    with_friction = [*free, 'Fc_3', 'Fv_3']
    unknowns = np.zeros((len(with_friction), 62))
    unknowns[:len(free), :60], unknowns[len(free), 60], unknowns[len(free) + 1, 61] = to_base, 1.0, 1.0
    rows = source.rows(same, SimpleNamespace(to_base=unknowns, rotor_start=60), with_friction)
    friction = prior.of_kind('friction')
    assert rows.a.shape == (len(free) + 2, 62)
    np.testing.assert_allclose(rows.a[-2:, 60:], np.diag([1 / friction['Fc_3'].spread, 1 / friction['Fv_3'].spread]))
    np.testing.assert_allclose(rows.b[-2:], [friction[n].centre / friction[n].spread for n in ('Fc_3', 'Fv_3')])


def test_a_fleet_prior_of_another_model_is_refused_and_a_result_file_stays_a_result(ur5e_model, tmp_path):
    prior = fleet_prior(members_of(fleet_results(ur5e_model, 3, seed=9)))
    other = dataclasses.replace(prior, robot='panda')
    other.save(tmp_path / 'panda_fleet.yaml')
    with pytest.raises(InputError, match="panda_fleet.yaml' is a fleet prior of robot 'panda', not 'ur5e'") as caught:
        prior_source(str(tmp_path / 'panda_fleet.yaml'), ur5e_model)
    assert caught.value.field == 'prior_source'
    from dynid.cli.flags import message
    from dynid.ros.runner import node_message

    assert message(caught.value).startswith(f"--prior '{tmp_path / 'panda_fleet.yaml'}' is a fleet prior of robot")
    assert node_message(caught.value).startswith(f"prior_source:= '{tmp_path / 'panda_fleet.yaml'}' is a fleet")
    result = fleet_results(ur5e_model, 1, seed=9)[0].save(tmp_path / 'one.yaml')
    assert isinstance(prior_source(str(result), ur5e_model), ResultPrior)


def test_the_cross_validated_weight_runs_unchanged_on_the_fleet_prior_rows():
    """dynid.identify.solve.prior's cross-validation takes the rows a fleet prior gives (:func:`spread_rows`, as
    :class:`FleetPrior` makes them) as it takes any source's: on data that leave two directions to the prior, a prior
    centred on the truth is chosen strong (a small s), one centred far off weak."""
    from types import SimpleNamespace

    rng = np.random.default_rng(5)
    rows, unknowns = 800, 6
    w = rng.standard_normal((rows, unknowns))
    w[:, 4:] *= 1e-3  # two directions the data hardly see
    truth = rng.standard_normal(unknowns)
    y = w @ truth + 0.05 * rng.standard_normal(rows)
    weights, joints = np.ones(rows), np.zeros(rows, dtype=int)
    layout = PhysicalLayout(np.eye(unknowns), n_links=0, n_rotor=0, non_negative=np.zeros(0, dtype=int))
    names = [f'p_{k + 1}' for k in range(unknowns)]
    expressions = {name: name for name in names}
    problem = SimpleNamespace(rigid_names=names, base=SimpleNamespace(names=names, expressions=names),
                              identify_rotor_inertia=False)
    folds, _ = time_folds(w, y, weights, joints)
    chosen = {}
    for label, centre in (('truth', truth), ('far', truth + 3.0)):
        spread = {name: (float(c), 0.1) for name, c in zip(names, centre, strict=True)}
        prior = spread_rows('fleet.yaml', spread, expressions, [], problem, layout, names)
        chosen[label], numbers = cross_validated_prior_std(layout, folds, prior)
        assert chosen[label] in PRIOR_STD_GRID and len(numbers['held_out_score']) == len(PRIOR_STD_GRID)
    assert chosen['truth'] < chosen['far'], chosen


# ------------------------------------------------------------------------------------------ standing
def test_the_faulty_robots_are_named_and_healthy_ones_rarely(ur5e_model):
    """Ten fleets of 33 robots (30 healthy, the three :data:`FAULTS`): every fault found with its joint and
    parameter, at most 3 false flags over the 300 healthy robots (the target: 1 in 100); a threshold without the
    Bonferroni bound over the 60 parameters would name many more."""
    found, false_flags, unbounded = 0, 0, 0
    for seed in range(10):
        table = FleetTable.of(members_of(fleet_results(ur5e_model, 33, seed=100 + seed, faults=FAULTS)))
        standings = fleet_standing(table)
        faulty = {index: (name, factor) for index, name, factor in FAULTS}
        for r, standing in enumerate(standings):
            apart = standing.apart
            if r in faulty:
                name, factor = faulty[r]
                assert apart and apart[0].name == name, (seed, r, [e.line() for e in apart])
                assert apart[0].relative_percent == pytest.approx(100 * (factor - 1), abs=15)
                found += 1
            else:
                false_flags += len(apart) > 0
                unbounded += any(abs(e.z_own) > apart_threshold(1, e.others) for e in standing.entries)
    assert found == 30
    assert false_flags <= 3, false_flags
    assert unbounded > 10 * max(false_flags, 1), (unbounded, false_flags)  # the bound is what keeps them rare


def test_a_term_the_model_choice_held_is_neither_pooled_nor_judged(ur5e_model):
    """The model choice leaves a term out on a joint (held at 0, ``model.held``): that value is the choice's, not a
    measurement. Held by 26 of 30 robots and fitted (at a few 0.1 N·m) by 4, it is pooled from the 4 that fitted it,
    and no robot stands apart on it; pooled as measured, the 26 zeros made the centre 0 with no spread and named the
    4 that fitted it (the false flags bench_fleet_prior found on tau0 and Fl)."""
    results = fleet_results(ur5e_model, 30, seed=21)
    fitted = {2, 9, 17, 25}
    for r, result in enumerate(results):
        k = result.parameter_names.index('tau0_3')
        values = np.array(result.values, dtype=float)
        if r in fitted:
            values[k] = 0.3 + 0.05 * r / 30
        else:
            values[k] = 0.0
            result.model['held'] = {'tau0_3': {'value': 0.0, 'reason': 'the model choice left the offset out'}}
        results[r] = dataclasses.replace(result, values=values)
    table = FleetTable.of(members_of(results))
    column = table.names.index('tau0_3')
    assert int(np.isfinite(table.values[:, column]).sum()) == 4
    pooled = {p.name: p for p in fleet_prior(table).parameters}
    assert pooled['tau0_3'].count == 4 and pooled['tau0_3'].centre == pytest.approx(0.3, abs=0.05)
    assert not any(e.name == 'tau0_3' for standing in fleet_standing(table) for e in standing.apart)


def test_a_faulty_robot_does_not_widen_its_own_yardstick(ur5e_model):
    results = fleet_results(ur5e_model, 20, seed=12, faults=((0, 'Fc_3', 1.6),))
    standing = fleet_standing(FleetTable.of(members_of(results)))[0]
    entry = next(e for e in standing.entries if e.name == 'Fc_3')
    others = [r.value('Fc_3') for r in results[1:]]
    assert entry.centre == pytest.approx(np.median(others)) and entry.others == 19
    spread = sn_scale(np.array([others]).T)  # 19 others: Sn's spread (SN_FROM_OTHERS)
    assert entry.spread == pytest.approx(max(spread[0], OWN_SIGMA * SPREAD['friction'] * FRICTION['Fc']))
    assert entry.joint == 'elbow_joint' and entry.apart and 'Fc_3 (friction, elbow_joint)' in entry.line()
    assert abs(entry.z_own) < abs(entry.z) and entry.z > 0


@pytest.mark.parametrize('robots', [12, SN_FROM_OTHERS + 1])
def test_healthy_normal_fleets_have_about_the_false_flag_rate_named(robots):
    """Fleets of healthy robots whose 60 parameters are drawn from normal populations, each robot judged against the
    others as fleet_standing judges it: at most about α = 1 % of them have a parameter named, the MAD's spread at 11
    others, Sn's from 19 on (measured over 6 000 fleets: 0.96 % at 20 robots; Sn's spread at 10-15 robots named
    1.6-2.8 %, the MAD's 0.3-0.4 %)."""
    rng = np.random.default_rng(robots)
    named = judged = 0
    for _ in range(4000 // robots):
        values, sigma = rng.standard_normal((robots, 60)), np.full((robots, 60), np.nan)
        for r in range(robots):
            others = np.arange(robots) != r
            centre, spread, count = standing_population(values[others], sigma[others])
            named += bool(np.any(np.abs(values[r] - centre) / spread > apart_threshold(60, count)))
            judged += 1
    assert named <= 0.017 * judged, (named, judged)
    if robots > SN_FROM_OTHERS:  # Sn's bound is near α, not far above what it promises (the MAD's is cautious)
        assert named >= 0.005 * judged, (named, judged)


def test_the_threshold_grows_with_the_parameters_and_shrinks_with_the_fleet():
    assert apart_threshold(60, 30) > apart_threshold(1, 30) > 2.5
    assert apart_threshold(60, 5) > apart_threshold(60, 30) > apart_threshold(60, 1000) > 3.76  # 3.76: the normal's
    assert apart_threshold(60, 8) > 30  # 7 others' MAD says little: a small fleet names only gross departures


# ------------------------------------------------------------------------------------------ end to end
@pytest.fixture(scope='module')
def fleet(tmp_path_factory):
    """The twin's optimized excitation (12 s, 250 Hz) identified, four robots' results around it (each base parameter
    moved by half its σ, drawn), their fleet prior by ``dynid fleet prior``, a short random motion (4 s), and the
    excitation again on a robot carrying a 1.5 kg tool its fleet does not."""
    folder = tmp_path_factory.mktemp('fleet_prior')
    excitation = ['--trajectory', str(builtin_excitation_path('ur5e')), '--duration', '12']
    for name, args in (('first', excitation), ('second', ['--duration', '4', '--seed', '4']),
                       ('tool', [*excitation, '--seed', '6', '--payload', '1.5'])):
        done = run_dynid('simulate', '--rate', '250', '--quiet', '-o', str(folder / name), *args)
        assert done.returncode == 0, done.stderr
    done = run_dynid('identify', str(folder / 'first'), '-o', str(folder / 'first.yaml'), '--quiet')
    assert done.returncode == 0, done.stderr
    first = IdentificationResult.load(folder / 'first.yaml')
    sigma = np.nan_to_num(result_std(first), nan=0.0)
    rng = np.random.default_rng(3)
    paths = [str(dataclasses.replace(first, values=first.values + 0.5 * sigma * rng.standard_normal(len(sigma)))
                 .save(folder / f'cell-{r}.yaml')) for r in range(4)]
    done = run_dynid('fleet', 'prior', *paths, '-o', str(folder / 'fleet_prior.yaml'))
    assert done.returncode == 0, done.stderr
    return folder, done.stdout


def test_dynid_fleet_prior_prints_what_it_pooled_and_writes_the_file(fleet):
    folder, stdout = fleet
    first = IdentificationResult.load(folder / 'first.yaml')
    sigma = result_std(first)
    base = sum(name in first.base_expressions and not name.startswith('Ia_') for name in first.parameter_names)
    friction = [name for name in first.parameter_names if name not in first.base_expressions]
    moved = [name for name, s in zip(first.parameter_names, sigma, strict=True)
             if name not in first.base_expressions and s > 0]  # the terms the identification held have σ 0
    assert f'fleet prior of 4 robots of ur5e (friction {first.model["friction"]}, torque ' in stdout
    assert f': {base} base parameters, {len(moved)} friction parameters, 0 drive gains pooled' in stdout
    for name in set(friction) - set(moved):
        assert f'left out: {name} (0 robots identified it (the others held it or have none)' in stdout
    assert 'each robot against the other 3' in stdout and 'no robot stands apart' in stdout
    assert f'wrote {folder / "fleet_prior.yaml"}' in stdout
    prior = FleetPriorFile.load(folder / 'fleet_prior.yaml')
    assert prior.robots == 4 and [m['name'] for m in prior.members] == ['cell-0', 'cell-1', 'cell-2', 'cell-3']
    again = run_dynid('fleet', 'prior', *(str(folder / f'cell-{r}.yaml') for r in range(4)), '-o',
                      str(folder / 'fleet_prior.yaml'))
    assert again.returncode == 2 and 'exists; refusing to overwrite (use --force)' in again.stderr


def test_identify_with_the_fleet_prior_pulls_toward_it_and_names_it(fleet):
    folder, _ = fleet
    prior_file = folder / 'fleet_prior.yaml'
    done = run_dynid('identify', str(folder / 'second'), '-o', str(folder / 'pulled.yaml'), '--prior',
                     str(prior_file), '--quiet')
    assert done.returncode == 0, done.stderr
    assert f"the base parameters of the fleet prior {prior_file} (4 robots' median, spread by their spread)" in \
        done.stdout
    done = run_dynid('identify', str(folder / 'second'), '-o', str(folder / 'file.yaml'), '--quiet')
    assert done.returncode == 0, done.stderr
    pulled, robot_file = (IdentificationResult.load(folder / name) for name in ('pulled.yaml', 'file.yaml'))
    section = pulled.prior_section
    assert section['used'] and section['source'] == str(prior_file)
    assert section['provenance']['kind'] == 'fleet prior' and section['provenance']['robots'] == 4
    assert section['provenance']['sha256'] == hashlib.sha256(prior_file.read_bytes()).hexdigest()
    # s = 1, the fleet's measured spread, where no weight is given: not cross-validated on the log (FleetPrior)
    assert section['cross_validation'] is None and section['relative_std'] == 1.0
    assert 'over the fleet of 4 robots' in section['rule'] and "s = 1 where not given" in section['rule']
    # the 4 s random motion alone leaves directions to its prior: the fleet's pulls them to its centre
    prior = FleetPriorFile.load(prior_file).of_kind('base')
    names = [name for name in prior if name in pulled.base_expressions]

    def distance(result):
        return float(np.sqrt(np.mean([((result.value(n) - prior[n].centre) / prior[n].spread) ** 2 for n in names])))

    assert distance(pulled) < 0.7 * distance(robot_file), (distance(pulled), distance(robot_file))
    # which parameters the 4 s log decided and which stayed at the fleet's values: posterior σ against the prior's,
    # σ̂·s·σ_b, the prior's rows weighing as rows of the data (σ̂ a row's σ: N·m for ordinary least squares). The
    # fleet's spread is the 12 s excitation's own σ, which 4 s of another motion do not narrow
    informed = section['informed']
    assert informed['pulled'] == len(FleetPriorFile.load(prior_file).of_kind('base'))
    assert len(informed['held_at_prior']) > informed['pulled'] / 2 and not informed['decided_by_data']
    posterior = dict(zip(pulled.parameter_names, section['posterior_std'], strict=True))
    spread = FleetPriorFile.load(prior_file).of_kind('base')
    row = section['data_row_std']
    assert all(posterior[n] > 0.9 * row * spread[n].spread for n in informed['held_at_prior'])
    quiet = run_dynid('identify', str(folder / 'second'), '-o', str(folder / 'again.yaml'), '--prior', str(prior_file))
    assert 'at the spread measured over the fleet' in quiet.stdout
    assert f'of the {informed["pulled"]} parameters it pulls on one by one, the data decided' in quiet.stdout
    # a weight given is kept: --prior-std 5 pulls less
    done = run_dynid('identify', str(folder / 'second'), '-o', str(folder / 'weak.yaml'), '--prior', str(prior_file),
                     '--prior-std', '5', '--quiet')
    assert done.returncode == 0, done.stderr
    weak = IdentificationResult.load(folder / 'weak.yaml')
    assert weak.prior_section['relative_std'] == 5.0 and distance(pulled) < distance(weak)
    # the 12 s excitation the fleet's results were drawn around decides most of them against a prior 100 times wider
    done = run_dynid('identify', str(folder / 'first'), '-o', str(folder / 'excited.yaml'), '--prior', str(prior_file),
                     '--prior-std', '100', '--quiet')
    assert done.returncode == 0, done.stderr
    excited = IdentificationResult.load(folder / 'excited.yaml')
    informed, row = excited.prior_section['informed'], excited.prior_section['data_row_std']
    posterior = dict(zip(excited.parameter_names, excited.prior_section['posterior_std'], strict=True))
    pooled = {**spread, **FleetPriorFile.load(prior_file).of_kind('friction')}
    assert len(informed['decided_by_data']) > informed['pulled'] / 2
    assert not set(informed['decided_by_data']) & set(informed['held_at_prior'])
    assert all(posterior[n] < 0.5 * 100 * row * pooled[n].spread for n in informed['decided_by_data'])


def test_a_load_on_the_flange_its_fleet_does_not_carry_is_left_to_the_data(fleet):
    """A robot carrying a 1.5 kg tool (5 cm out of the flange) its fleet does not: the likelihood ratio frees the last
    link's parameters from the fleet prior, the result records the test and the warning says what the data put on the
    flange (its mass and centre in the flange's frame), and the gravity parameter mx_2R, which the tool's mass moves,
    follows the data (the plain fit of the same log) instead of the fleet's centre; a healthy robot's log frees
    nothing."""
    folder, _ = fleet
    prior_file = folder / 'fleet_prior.yaml'
    for name, extra in (('tool', ('--prior', str(prior_file))), ('tool_plain', ('--no-prior',))):
        done = run_dynid('identify', str(folder / 'tool'), '-o', str(folder / f'{name}.yaml'), '--quiet', *extra)
        assert done.returncode == 0, done.stderr
    tool, plain = (IdentificationResult.load(folder / f'{name}.yaml') for name in ('tool', 'tool_plain'))
    load = tool.prior_section['flange_load']
    assert load['freed'] and load['statistic'] > 10 * load['bound'] and load['degrees_of_freedom'][0] == 10, load
    assert abs(load['mass_kg'] - 1.5) < 0.15, load
    said = [w for w in tool.warnings if 'contradict the fleet prior where a load on the flange' in w]
    assert len(said) == 1 and f'which put {load["mass_kg"]:+.2f} kg on it' in said[0], tool.warnings
    assert 'a tool or gripper its fleet does not carry?' in said[0]
    centre = [float(v) for v in said[0].split('centre of mass at (')[1].split(')')[0].split(', ')]
    assert np.allclose(centre, [0.0, 0.0, 0.05], atol=0.02), centre
    centre = FleetPriorFile.load(prior_file).of_kind('base')['mx_2R']
    assert abs(tool.value('mx_2R') - plain.value('mx_2R')) < 0.1 * abs(centre.centre - plain.value('mx_2R'))
    assert abs(tool.value('mx_2R') - centre.centre) > 100 * centre.spread
    healthy = IdentificationResult.load(folder / 'pulled.yaml') if (folder / 'pulled.yaml').exists() else None
    if healthy is None:
        done = run_dynid('identify', str(folder / 'second'), '-o', str(folder / 'pulled.yaml'), '--prior',
                         str(prior_file), '--quiet')
        assert done.returncode == 0, done.stderr
        healthy = IdentificationResult.load(folder / 'pulled.yaml')
    assert not healthy.prior_section['flange_load']['freed'] and healthy.prior_section['released'] == {}
    assert not any('contradict the fleet prior' in w for w in healthy.warnings)


def _linear_fleet(rng, load=None, unit=1.0):
    """A linear problem as a fleet prior poses it: two links (20 parameters, the base map the identity), each robot's
    truth drawn about the fleet's centre with the fleet's spread (plus ``load`` on the last link's ten), 400 rows of
    unit noise times ``unit`` (the torque's unit), the prior's rows (θ − μ)/σ_b."""
    count, rows = 20, 400
    centre, spread = rng.normal(0, 1, count), rng.uniform(0.05, 0.5, count)
    truth = centre + spread * rng.standard_normal(count) + (np.zeros(count) if load is None else load)
    w = rng.normal(0, 1, (rows, count)) * rng.uniform(0.02, 1.0, count)  # some directions weakly excited
    y = (w @ truth + rng.standard_normal(rows)) * unit
    layout = PhysicalLayout(np.eye(count), 2, 0, np.zeros(0, dtype=int))
    prior = PriorRows(np.diag(1 / spread), centre / spread, [], tuple(f'p{k}' for k in range(count)))
    return layout, ReducedRows.of(w * unit, y, np.ones(rows)), prior


def test_the_flange_load_test_has_its_law_on_robots_as_their_fleet_and_frees_a_load():
    """As its fleet, F = (Λ/q)/(R/r) follows F(10, 10) (mean 10/8, at most one of 300 above its 0.01 % point), the same
    whatever the torque's unit; a load on the last link is freed and measured, the prior left on the other link."""
    statistics = []
    for k in range(300):
        layout, data, prior = _linear_fleet(np.random.default_rng(1000 + k))
        _, record = flange_load_freed(layout, data, prior, 1.0)
        assert record['degrees_of_freedom'] == [10, 10]
        if k < 5:  # the same robot in mN·m: the same statistic
            again = flange_load_freed(*_linear_fleet(np.random.default_rng(1000 + k), unit=1000.0), 1.0)[1]
            assert again['statistic'] == pytest.approx(record['statistic'], rel=1e-6)
        statistics.append(record['statistic'])
    assert 1.05 < np.mean(statistics) < 1.45, np.mean(statistics)
    assert sum(s > record['bound'] for s in statistics) <= 1
    load = np.zeros(20)
    load[10:14] = [10.0, 0.0, 0.0, 1.5]  # 10 kg, 0.15 m out along z; the robot's own draw adds up to 2 of 0.5 each
    layout, data, prior = _linear_fleet(np.random.default_rng(5), load)
    freed, record = flange_load_freed(layout, data, prior, 1.0)
    assert record['freed'] and abs(record['mass_kg'] - 10.0) < 1.0, record
    assert abs(record['first_moments_kg_m'][2] - 1.5) < 1.0, record
    assert np.allclose(freed.a[:10, :10], prior.a[:10, :10]) and not np.allclose(freed.a[10:, 10:], prior.a[10:, 10:])


def test_a_model_that_folds_the_rotor_excess_into_the_links_takes_the_fleet_prior_on_their_link_part(ur5e_model,
                                                                                                     tmp_path):
    """The model choice may identify the rotor inertias' excess (a short log's ordinary route), which folds Ia_1 and
    Ia_2 into Izz_1R and Izz_2R: a fleet pooled without them still gives those rows, on the link part alone (the rotor
    columns 0), where it refused them before; a grouping that differs otherwise is still refused."""
    from types import SimpleNamespace

    from dynid.identify.equations.prepare import structural_base

    prior = fleet_prior(members_of(fleet_results(ur5e_model, 5, seed=13)))
    source = prior_source(str(prior.save(tmp_path / 'fleet.yaml')), ur5e_model)
    base = structural_base(ur5e_model, [[]], 0, True)
    assert base.expressions[base.names.index('Izz_1R')].endswith(' + Ia_1')
    free = [name for name in base.names if name != 'my_2']
    rotor_start, n_rotor = 60, 6
    to_base = np.random.default_rng(1).standard_normal((len(free), rotor_start + n_rotor))
    layout = SimpleNamespace(to_base=to_base, rotor_start=rotor_start, n_rotor=n_rotor)
    problem = SimpleNamespace(rigid_names=list(base.names), base=base, identify_rotor_inertia=True,
                              compensate_rotor=True, drives=ur5e_model.drives, robot=ur5e_model,
                              candidate=SimpleNamespace(friction='load_squared'))
    rows = source.rows(problem, layout, free)
    pooled = prior.of_kind('base')
    pulled = [name for name in free if name in pooled]
    assert len(pulled) == len(pooled) - 1  # every pooled parameter but the one held (my_2)
    assert rows.a.shape == (len(pulled) + n_rotor, rotor_start + n_rotor)  # the rotor rows after the links'
    for name in ('Izz_1R', 'Izz_2R'):
        row = rows.a[pulled.index(name)]
        np.testing.assert_array_equal(row[rotor_start:], 0.0)
        np.testing.assert_allclose(row[:rotor_start], to_base[free.index(name), :rotor_start] / pooled[name].spread)
    other = SimpleNamespace(**{**vars(problem), 'base': SimpleNamespace(
        names=base.names, expressions=tuple(e + ' + Iyy_2' if n == 'Izz_3R' else e
                                            for n, e in zip(base.names, base.expressions, strict=True)))})
    with pytest.raises(InputError, match=r"groups the base parameters \['Izz_3R'\] otherwise"):
        source.rows(other, layout, free)
