"""config/suite.yaml is the per-job parameter files composed (dynid.suite.config), not a copy that drifts."""

import yaml

from dynid.suite.config import CONFIG, PARTS, compose, main


def test_the_shipped_suite_file_is_the_composition_of_the_parts():
    assert main(['--check']) == 0, 'run python -m dynid.suite.config'
    suite = yaml.safe_load((CONFIG / 'suite.yaml').read_text())
    parts = {}
    for part in PARTS:
        for node, section in yaml.safe_load((CONFIG / part).read_text()).items():
            assert node not in parts, f'{node} in two parts'
            parts[node] = section
    assert suite == parts


def test_a_changed_part_is_seen(tmp_path):
    for part in PARTS:
        (tmp_path / part).write_text((CONFIG / part).read_text())
    (tmp_path / 'suite.yaml').write_text(compose(tmp_path))
    assert main(['--check', '--config', str(tmp_path)]) == 0
    estimation = tmp_path / 'estimation.yaml'
    estimation.write_text(estimation.read_text().replace('publish_rate: 10.0', 'publish_rate: 20.0'))
    assert main(['--check', '--config', str(tmp_path)]) == 1
    assert main(['--config', str(tmp_path)]) == 0  # regenerated
    assert yaml.safe_load((tmp_path / 'suite.yaml').read_text())['/**/estimator_node']['ros__parameters'][
        'publish_rate'] == 20.0
