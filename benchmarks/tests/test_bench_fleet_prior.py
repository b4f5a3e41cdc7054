"""bench_fleet_prior end to end on the smallest fleet it takes (4 robots at 125 Hz, no extra fleet, 20 result files
timed): it ends with the issue's JSON line, each figure there, and says what it did not measure (null)."""

import json
import re

from benchmarks import bench_fleet_prior
from dynid.errors import InputError

KEYS = ('benchmark', 'robots', 'short_log_s', 'heldout_over_robot_file_prior_median',
        'heldout_over_robot_file_prior_max', 'heldout_over_full_excitation_median', 'outliers_found',
        'false_flags_per_100_robots', 'prior_seconds_1000_robots', 'real_sessions_heldout_over_robot_file_prior')


def test_a_small_fleet_runs_end_to_end_and_ends_with_the_json_line(capsys, monkeypatch):
    """Robot-02's production log refused by the defaults (as dynid identify refuses a log too weak to identify):
    named in the JSON, left out of the ratios, the run goes on."""
    identified = bench_fleet_prior.identified

    def refusing(robot, dataset, name, output, prior='', **kwargs):
        if output.name == 'production-02-robot_file_prior.yaml':
            raise InputError('the data cannot identify the model (for the test)')
        return identified(robot, dataset, name, output, prior=prior, **kwargs)

    monkeypatch.setattr(bench_fleet_prior, 'identified', refusing)
    assert bench_fleet_prior.main(['--robots', '4', '--extra-seeds', '0', '--prior-robots', '20',
                                   '--rate', '125']) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(lines[-1])
    assert list(summary)[:len(KEYS)] == list(KEYS)
    assert summary['benchmark'] == 'fleet_prior' and summary['robots'] == 4 and summary['short_log_s'] == 15.0
    assert re.fullmatch(r'[0-2]_of_2', summary['outliers_found'])  # the friction fault and the tool: robots 1, 3
    for key in ('heldout_over_robot_file_prior_median', 'heldout_over_robot_file_prior_max',
                'heldout_over_full_excitation_median'):
        assert summary[key] > 0
    assert summary['heldout_over_robot_file_prior_max'] >= summary['heldout_over_robot_file_prior_median']
    assert summary['prior_seconds_1000_robots'] is None and summary['prior_timing']['robots'] == 20
    assert summary['real_sessions_heldout_over_robot_file_prior'] is None
    assert '--ur10e DIR' in summary['real_sessions']['status']
    assert any(line.startswith('| heldout_over_robot_file_prior_median |') for line in lines)
    assert summary['standing_results'].startswith('commissioning') and 'IDIM-TLS' in summary['standing_results']
    assert [f['robot'] for f in summary['standings'][0]['faults']] == ['robot-01', 'robot-03']
    assert summary['production_refused'] == {
        'robot-02': {'robot_file_prior': 'the data cannot identify the model (for the test)'}}
    detail = {robot['robot']: robot for robot in summary['robots_detail']}
    assert detail['robot-02']['fleet_over_robot_file'] is None and detail['robot-02']['fleet_over_full'] > 0
    assert all(detail[f'robot-{r:02d}']['fleet_over_robot_file'] > 0 for r in (0, 1, 3))
