"""The URDF and MJCF exports and ``IdentificationResult.coulomb_viscous`` read a law's friction through its roles
(``FrictionLaw.roles``), not its symbol names: a law registered with its own symbols exports the friction
viscous_coulomb exports on the same data; a law whose roles give no Coulomb level or viscous coefficient is named
where its friction is left out; a law physical identification does not take is named when the export is refused."""

import dataclasses
import io
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from builders import identified, synthetic_recording
from dynid.cli import main
from dynid.errors import InputError
from dynid.friction.law import ONE, SIGN, VELOCITY, Feature, FrictionLaw
from dynid.friction.laws import register_law, unregister_law
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.outputs.urdf_export import export_urdf
from dynid.identify.result.result import IdentificationResult
from dynid.identify.solve.physical import PhysicalSettings
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.model import load_robot, mjcf

mujoco = pytest.importorskip('mujoco')
from dynid.identify.outputs.mjcf_export import export_mjcf  # noqa: E402  (needs mujoco)

#: Coulomb + viscous + offset under symbols of its own: the columns of viscous_coulomb, named otherwise
OWN_NAMES = FrictionLaw('own_names', 'Coulomb + viscous + offset, own symbols', ('c0', 'b1', 'off'),
                        {'c0': SIGN, 'b1': VELOCITY, 'off': ONE}, non_negative=('c0', 'b1'),
                        roles={'Fc': 'c0', 'Fv': 'b1', 'tau0': 'off'})
#: tanh-smoothed Coulomb friction with no roles: nothing a joint's friction field is said to hold
NO_ROLES = FrictionLaw('no_roles', 'Coulomb smoothed by tanh(ω/0.01)', ('Ft',),
                       {'Ft': Feature('tanh_10mrad', lambda w, s: np.tanh(w / 0.01))}, non_negative=('Ft',))

ROBOT = load_robot('ur5e')


def _physical(friction: str) -> IdentificationResult:
    return identify(ROBOT, [RecordingInput(synthetic_recording(ROBOT, seconds=6.0))],
                    ModelSpec(friction=friction, torque_source='joint_torque'),
                    options=IdentifyOptions('wls', physical=PhysicalSettings(consistency='always')))


@pytest.fixture(scope='module')
def results():
    """The results of each law, the two laws registered in this process while the module's tests run."""
    register_law(OWN_NAMES)
    register_law(NO_ROLES)
    try:
        yield {law: _physical(law) for law in ('viscous_coulomb', 'own_names', 'no_roles')}
    finally:
        unregister_law('own_names')
        unregister_law('no_roles')


def _text(urdf: str):
    return io.StringIO(urdf)


def _urdf_dynamics(text: str) -> dict[str, tuple[float, float]]:
    return {joint.get('name'): (float(joint.find('dynamics').get('friction')),
                                float(joint.find('dynamics').get('damping')))
            for joint in ElementTree.fromstring(text).iter('joint') if joint.find('dynamics') is not None}


def test_a_law_with_its_own_symbols_exports_the_friction_viscous_coulomb_does(results):
    # The same columns under other names: the same estimate up to round-off (1e-9 relative), so the same joints'
    # friction and damping in both files; what no joint holds (the offset) is named under the law's own symbol.
    reference, own = results['viscous_coulomb'], results['own_names']
    levels = own.coulomb_viscous()
    for joint, values in reference.coulomb_viscous().items():
        assert set(levels[joint]) == {'Fc', 'Fv'} and values['Fc'] > 0.5
        for part in ('Fc', 'Fv'):
            assert levels[joint][part] == pytest.approx(values[part], rel=1e-9)
    urdf = mjcf.robot_urdf_text(ROBOT)
    written, expected = (_urdf_dynamics(export_urdf(r, _text(urdf), label='ur5e')) for r in (own, reference))
    assert set(written) == set(ROBOT.joint_names) == set(expected)
    for joint in ROBOT.joint_names:
        np.testing.assert_allclose(written[joint], expected[joint], rtol=1e-9)
    export, export_reference = export_mjcf(own, ROBOT), export_mjcf(reference, ROBOT)
    np.testing.assert_allclose(export.frictionloss, export_reference.frictionloss, rtol=1e-9)
    np.testing.assert_allclose(export.damping, export_reference.damping, rtol=1e-9)
    assert export.frictionloss.min() > 0.5 and export.damping.min() > 0.1
    assert export.not_expressed == [name.replace('tau0', 'off') for name in export_reference.not_expressed]
    assert export.friction_note == ''


def test_a_law_without_roles_is_written_without_friction_and_named(results, tmp_path, capsys):
    # physically identified, so its inertials are exported; its friction is in no joint and said so, by name
    result = results['no_roles']
    assert result.coulomb_viscous() == {joint: {} for joint in ROBOT.joint_names}
    symbols = [f'Ft_{j}' for j in range(1, 7)]
    text = export_urdf(result, _text(mjcf.robot_urdf_text(ROBOT)), label='ur5e')
    assert _urdf_dynamics(text) == {}
    comments = [c.text for c in ElementTree.fromstring(text, ElementTree.XMLParser(
        target=ElementTree.TreeBuilder(insert_comments=True))).iter(ElementTree.Comment)]
    said = [c for c in comments if "friction law 'no_roles'" in c]
    assert len(said) == 1 and 'Coulomb level or viscous coefficient' in said[0] and 'roles: none' in said[0]
    assert all(symbol in said[0] for symbol in symbols)
    export = export_mjcf(result, ROBOT)
    assert not export.damping.any() and not export.frictionloss.any()
    assert export.not_expressed == sorted(symbols) and "friction law 'no_roles'" in export.friction_note
    assert f'<!-- dynid: {export.friction_note} -->' in export.text
    # the CLI prints it too
    path = result.save(tmp_path / 'result.yaml')
    robot_file = tmp_path / 'ur5e.urdf'
    robot_file.write_text(mjcf.robot_urdf_text(ROBOT))
    assert main(['export-urdf', str(path), '--robot', str(robot_file), '-o', str(tmp_path / 'out.urdf')]) == 0
    assert "friction law 'no_roles'" in capsys.readouterr().out
    assert main(['export-mjcf', str(path), '--robot', 'ur5e', '-o', str(tmp_path / 'out.xml')]) == 0
    assert "friction law 'no_roles'" in capsys.readouterr().out


def test_a_law_physical_identification_does_not_take_is_refused_by_name():
    # Hamon's law is identified without physical consistency: "identify with --physical" would not help, so the
    # refusal names the law and the laws that can
    result = identified(ROBOT, 'hamon', {'cm': 1.0, 'Fv': 0.5})
    for export in (lambda: export_urdf(result, _text(mjcf.robot_urdf_text(ROBOT)), label='ur5e'),
                   lambda: export_mjcf(result, ROBOT)):
        with pytest.raises(InputError, match=r"friction law 'hamon' is not one physical identification takes "
                                             r"\(none, viscous_coulomb, .*comprehensive.*\); identify with one "):
            export()


def test_a_result_whose_law_is_gone_saves_and_names_it_where_its_friction_is_read(results, tmp_path):
    # a law registered in this process and forgotten since (a file of it then no longer loads: its model.friction is
    # checked against the installed laws)
    result = IdentificationResult.load(results['own_names'].save(tmp_path / 'own.yaml'))
    unregister_law('own_names')
    try:
        assert result.version == 1 and result.power_velocity is None and (result.power_exponents() == 1).all()
        result.save(tmp_path / 'again.yaml')
        for read in (result.coulomb_viscous, lambda: export_mjcf(result, ROBOT)):
            with pytest.raises(InputError, match="unknown friction law 'own_names'"):
                read()
    finally:
        register_law(OWN_NAMES)


def test_a_registered_law_with_a_viscous_power_term_keeps_its_form_and_exports_its_levels():
    # the comprehensive law's columns without its load term, under other symbols and marked power_viscous: the result
    # records the power term's v_s as the comprehensive law's does (identified in the shifted form, read in it), and
    # its Coulomb level at ω → 0 is c − v·v_s at α = 1 (Box-Cox form about v_s: (c − v·v_s)·sgn(ω) + v·ω above v_s)
    from dynid.friction.power_law import power_term

    law = FrictionLaw('power_renamed', 'Coulomb + viscous power term + offset, own symbols', ('c', 'v', 'o'),
                      {'c': SIGN, 'o': ONE}, shaped=lambda w, s, context: {
                          'v': power_term(w, context.exponents, context.power_velocity)},
                      shaped_symbols=('v',), non_negative=('c', 'v'), roles={'Fc': 'c', 'Fv': 'v', 'tau0': 'o'},
                      power_viscous=True)
    register_law(law)
    try:
        result = _physical('power_renamed')
        comprehensive = _physical('comprehensive')
        levels, export = result.coulomb_viscous(), export_mjcf(result, ROBOT)
        assert result.power_velocity == comprehensive.power_velocity == pytest.approx(0.02)
        assert result.version == comprehensive.version == 3 and (result.power_exponents() == 1.0).all()
    finally:
        unregister_law('power_renamed')
    assert result.model['power_form'] == 'shifted' and result.model['power_velocity'] == pytest.approx(0.02)
    table = result.friction()
    for k, joint in enumerate(ROBOT.joint_names):
        c, v = table[joint]['c'], table[joint]['v']
        assert levels[joint] == {'Fc': c - v * 0.02, 'Fv': v}
        assert export.frictionloss[k] == pytest.approx(c - v * 0.02, rel=1e-12)


def test_a_law_whose_fc_is_not_its_coulomb_role_is_refused_by_name():
    # a parameter named Fc with no role would read as the joint's Coulomb level (the name the exports write): refused,
    # naming the law; with the role it is exported
    plain = FrictionLaw('fc_unroled', 'Coulomb alone, no roles', ('Fc',), {'Fc': SIGN}, non_negative=('Fc',))
    register_law(plain)
    try:
        result = _physical('fc_unroled')
        with pytest.raises(InputError, match=r"friction law 'fc_unroled': its parameters \['Fc'\] .*roles: none"):
            export_mjcf(result, ROBOT)
        with pytest.raises(InputError, match="friction law 'fc_unroled'"):
            export_urdf(result, _text(mjcf.robot_urdf_text(ROBOT)), label='ur5e')
    finally:
        unregister_law('fc_unroled')
    register_law(dataclasses.replace(plain, roles={'Fc': 'Fc'}))
    try:
        export = export_mjcf(result, ROBOT)
    finally:
        unregister_law('fc_unroled')
    np.testing.assert_array_equal(export.frictionloss, [result.value(f'Fc_{j}') for j in range(1, 7)])
    assert export.frictionloss.min() > 0.5 and export.friction_note == '' and export.not_expressed == []
