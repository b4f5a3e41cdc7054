"""``dynid export-mjcf``: a physically consistent result as a MuJoCo model (MJCF) with the identified dynamics."""

from __future__ import annotations

import argparse

from dynid.cli.shared import EXIT_OK, output_file, result_joints
from dynid.errors import InputError

SUMMARY = ('write a MuJoCo model (MJCF) with the physically consistent identification in it (inertials, armature, '
           'damping, friction loss)')

#: Largest relative RMS difference between MuJoCo's mj_inverse of the written file and dynid's torque accepted
#: (MJCF numbers are written to 6 significant digits).
TORQUE_TOLERANCE = 1e-4


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('result', help='result file of dynid identify --physical')
    parser.add_argument('--robot', default=None,
                        help='robot identified (as for dynid model: a built-in, a .urdf or a robot .yaml; default: '
                             'the result\'s robot)')
    parser.add_argument('-o', '--output', required=True, help='MJCF file to write (.xml)')
    parser.add_argument('--force', action='store_true', help='overwrite an existing output file')


def run(args: argparse.Namespace) -> int:
    import os
    import tempfile

    from dynid.identify import IdentificationResult, export_mjcf, mjcf_torque_error
    from dynid.model import load_robot
    from dynid.model.mjcf import require_mujoco

    output = output_file(args.output, '-o', args.force)
    require_mujoco()
    result = IdentificationResult.load(args.result)
    robot = load_robot(args.robot or result.robot, joints=result_joints(args, result))
    robot.name = result.robot  # the robot the user names is checked by the torques below, not by its name
    export = export_mjcf(result, robot)
    error = mjcf_torque_error(export, result, robot)
    if not error < TORQUE_TOLERANCE:
        raise InputError(f'MuJoCo\'s inverse dynamics of the written model differ from the result\'s torques by '
                         f'{error:.2g} (RMS, relative): not the robot model the result was identified on?')
    handle, temporary = tempfile.mkstemp(dir=output.resolve().parent, prefix=f'.{output.name}.', suffix='.tmp')
    try:
        with os.fdopen(handle, 'w') as stream:
            stream.write(export.text)
        os.replace(temporary, output)
    except BaseException:
        os.unlink(temporary)
        raise
    print(f'wrote {output}: {len(export.joints)} joints; MuJoCo\'s mj_inverse on it (friction loss off) reproduces '
          f'dynid\'s torque to {error:.1e} RMS of its scale')
    sources = sorted(set(export.armature_source))
    print(f'  armature from: {", ".join(sources)}; damping = Fv, frictionloss = Fc')
    if export.not_expressed:
        print(f'  not expressible in MuJoCo, left out: {", ".join(export.not_expressed)}')
    if export.friction_note:
        print(f'  {export.friction_note}')
    return EXIT_OK
