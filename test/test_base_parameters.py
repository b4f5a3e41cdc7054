"""Base parameters: counts from the seeds, regrouping correctness, names, optional columns."""

import numpy as np
import pytest

from dynid.model import DHJoint, RobotModel, build_dh_model, compute_base_parameters


def _pa10(seed: int = 1) -> RobotModel:
    """Mitsubishi PA-10, modified DH of the PA-10 report Table 2.1 (the PA-10 report).

    The report gives no lengths; d3 = 0.45, d5 = 0.48, d7 = 0.07 m are the commonly cited values
    (the count does not depend on them). Inertial parameters are random: the count is generic.
    """
    alpha_deg = [0, -90, 90, -90, 90, -90, 90]
    d = [0.0, 0.0, 0.45, 0.0, 0.48, 0.0, 0.07]
    rng = np.random.default_rng(seed)
    joints = [DHJoint(f'j{i + 1}', a=0.0, alpha=np.deg2rad(alpha_deg[i]), d=d[i],
                      inertial=tuple(rng.uniform(0.1, 1.0, 10))) for i in range(7)]
    return RobotModel(build_dh_model(joints, 'modified', name='pa10'))


def test_ur5e_has_36_base_parameters_with_vertical_base(ur5e):
    # Thesis ch.5 (P2-8): 7·6 − 3 − 1 − 2 = 36 with the joint-1 axis parallel to gravity.
    assert ur5e.base.rank == 36


def test_ur5e_has_38_base_parameters_when_tilted(ur5e):
    # Thesis ch.5: 38 when the base axis is not parallel to gravity (n_g0 = 0).
    tilted = ur5e.with_gravity([0.0, -9.81 * np.sin(0.3), -9.81 * np.cos(0.3)])
    assert tilted.base.rank == 38


def test_pa10_has_43_base_parameters():
    # PA-10 report §2.5: 70 standard parameters reduce to 43 base parameters.
    assert _pa10().base.rank == 43


def test_pa10_regrouping_carries_m7_down_the_chain():
    # Erratum of the PA-10 report (the PA-10 report, §4.4): m_R5 must include m7, so the mass of
    # link 7 reaches the regrouped first moment of link 2 through d3.
    base = _pa10().base
    expressions = dict(zip(base.names, base.expressions, strict=True))
    assert '0.45*m_7' in expressions['my_2R']
    assert expressions['Izz_1R'] == 'Izz_1 + Iyy_2'


def test_example_robot_data_counts(ur5, panda):
    assert ur5.base.rank == 36
    assert panda.base.rank == 43  # 7 revolute joints, vertical first axis: 7·7 − 4 − 2


def test_base_regressor_reproduces_full_regressor_for_random_parameters(robot):
    rng = np.random.default_rng(11)
    q, dq, ddq = robot.random_states(40, seed=99)  # states other than those that found the base
    y = robot.regressor(q, dq, ddq)
    for _ in range(3):
        standard = rng.normal(size=10 * robot.n)  # need not be physical: the identity is linear
        full = y @ standard
        reduced = robot.base.columns(y) @ robot.base.from_standard(standard)
        assert np.abs(full - reduced).max() <= 1e-9 * max(1.0, np.abs(full).max())


def test_regrouping_matrix_has_identity_on_base_columns(ur5e):
    base = ur5e.base
    np.testing.assert_array_equal(base.regrouping[:, base.indices], np.eye(base.rank))
    assert list(base.indices) == sorted(base.indices)


def test_ur5e_names_follow_the_thesis_table(ur5e):
    # Thesis ch.5 Table 3: ZZR_1 first, then per link XXR, XY, XZ(R), YZ, ZZR, mXR, mY(R).
    base = ur5e.base
    assert base.names[0] == 'Izz_1R'
    assert base.expressions[0].startswith('Izz_1 + Iyy_2')
    link2 = {name for name in base.names if name.split('_')[1].startswith('2')}
    assert link2 == {'mx_2R', 'my_2', 'Ixx_2R', 'Ixy_2', 'Ixz_2R', 'Iyz_2', 'Izz_2R'}
    expressions = dict(zip(base.names, base.expressions, strict=True))
    assert '0.425*m_3' in expressions['mx_2R']
    assert set(base.unidentifiable) == {'m_1', 'mx_1', 'my_1', 'mz_1', 'Ixx_1', 'Ixy_1', 'Iyy_1',
                                        'Ixz_1', 'Iyz_1', 'm_2', 'mz_2'}


def test_joint_terms_and_payload_columns(ur5e):
    assert ur5e.base_parameters(joint_terms=('offset', 'coulomb', 'viscous')).rank == 36 + 18
    # Link j spins about its own axis at q̇j alone for j = 1 and for j = 2 (axis 2 ⊥ axis 1), so
    # Ia_1 and Ia_2 act exactly like Izz_1R and Izz_2R and regroup with them: 4 new, not 6.
    with_rotor = ur5e.base_parameters(joint_terms=('rotor_inertia',))
    assert with_rotor.rank == 36 + 4
    expressions = dict(zip(with_rotor.names, with_rotor.expressions, strict=True))
    assert expressions['Izz_1R'].endswith('+ Ia_1') and expressions['Izz_2R'].endswith('+ Ia_2')
    assert {'Ia_3', 'Ia_4', 'Ia_5', 'Ia_6'} <= set(with_rotor.names)
    # A flange payload only adds to link 6's parameters: no new base parameter.
    assert ur5e.base_parameters(payload=True).rank == 36
    names = ur5e.parameter_names(payload=True, joint_terms=('coulomb',))
    assert names[60:63] == ['m_P', 'mx_P', 'my_P'] and names[70] == 'Fc_1' and len(names) == 76


def test_joint_term_columns_act_on_their_own_joint(ur5e):
    dq = np.array([[0.5, -0.2, 0.0, 1.0, -1.0, 0.3]])
    ddq = np.full((1, 6), 2.0)
    y = ur5e.joint_term_regressor(('offset', 'coulomb', 'viscous', 'rotor_inertia'), dq, ddq)
    assert y.shape == (6, 24)
    np.testing.assert_array_equal(y[:, 0:6], np.eye(6))
    np.testing.assert_array_equal(np.diag(y[:, 6:12]), np.sign(dq[0]))
    np.testing.assert_array_equal(np.diag(y[:, 12:18]), dq[0])
    np.testing.assert_array_equal(np.diag(y[:, 18:24]), ddq[0])


def test_compute_base_parameters_on_a_known_matrix():
    # Columns: a, b, a + 2b, 0 → rank 2; c3 regroups into a and b; c4 is unidentifiable.
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 50))
    w = np.column_stack([a, b, a + 2 * b, np.zeros(50)])
    base = compute_base_parameters(w, ['p1', 'p2', 'p3', 'p4'])
    assert base.rank == 2
    np.testing.assert_allclose(base.regrouping, [[1, 0, 1, 0], [0, 1, 2, 0]], atol=1e-12)
    assert base.expressions == ('p1 + p3', 'p2 + 2*p3')
    assert base.names == ('p1R', 'p2R') and base.unidentifiable == ('p4',)


def test_compute_base_parameters_refuses_bad_input():
    with pytest.raises(ValueError, match='does not match'):
        compute_base_parameters(np.ones((4, 3)), ['a', 'b'])
    with pytest.raises(ValueError, match='NaN'):
        compute_base_parameters(np.full((4, 2), np.nan), ['a', 'b'])
