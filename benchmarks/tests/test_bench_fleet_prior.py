"""bench_fleet_prior end to end on the smallest fleet it takes (4 robots at 125 Hz, no extra fleet, 20 result files
timed): it ends with the issue's JSON line, each figure there, and says what it did not measure (null)."""

import json
import re

from benchmarks import bench_fleet_prior

KEYS = ('benchmark', 'robots', 'short_log_s', 'heldout_over_robot_file_prior_median',
        'heldout_over_robot_file_prior_max', 'heldout_over_full_excitation_median', 'outliers_found',
        'false_flags_per_100_robots', 'prior_seconds_1000_robots', 'real_sessions_heldout_over_robot_file_prior')


def test_a_small_fleet_runs_end_to_end_and_ends_with_the_json_line(capsys):
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
