"""What today's UR drivers publish and take, on the digital twin: each effort mode read right, and direct torque.

Run: ``.venv/bin/python -m benchmarks.bench_effort_semantics [--quick]`` (a few minutes; ``--quick`` halves the
recordings).

Set-up: the UR5e twin (full friction model, sensor noise) with a 2 kg tool (centre of mass 5 cm out), the shipped
optimized excitation, two runs: training (twin seed 1) and held-out (twin seed 4), at 250 Hz.

1. **Effort modes** (``cases``). Each run is written as a bag of what the UR driver publishes on joint_states
   (q, q̇, effort; no rotor encoders, currents or temperatures), with dynid's record of what the effort holds
   (as identifier_node under ``ur.launch.py`` writes it), in each mode (docs/backends/ur.md):
   motor current (``use_currents_as_efforts:=true``); the drive torque K·i; UR's gravity-compensated
   ``actual_current_as_torque`` with the tool set right on the robot, and set wrong (no payload set); and as UR's
   RTDE publisher records it (``rtde/<field>`` Float64MultiArray topics joined by ``rtde/timestamp``, the payload
   set on the robot on ``rtde/payload*``). Each is read by the commands' reader without flags
   (``dynid.cli.reading.read_bag``). **Read right**: the meaning read is the one written, the signal is the
   driver's (current, or K·i [N·m] with the gravity added back), the RTDE recording's temperatures are the
   twin's, and a wrongly set payload is named (a rightly set one not). Then each training reading is
   identified (WLS, viscous + Coulomb friction, the tool known) and validated on the held-out run read the
   same way; ``heldout_fit_gap_points_max``: the largest difference, over joints and cases, of the held-out NRMSE
   fit [%] from that of the same runs read from the twin's joint torque (target ≤ 1 point).
2. **Direct torque** (``ur_direct_torque_tracking_ratio_max``). The twin's joint controller without its own model
   torque (a PD on the motor side, the loop around the torque) follows one period of the excitation (10 s at
   500 Hz; 5 s with ``--quick``) while UR applies the command as ``direct_torque()`` does (dynid.sim.ur_modes
   eq. (2): its gravity with the payload set, its friction model scaled by the FrictionModelController's
   factors). Baseline: no dynid command, UR's friction scales 0.
   With dynid: the feedforward of the joint-torque identification without gravity, with each of the two friction
   plans of :func:`dynid.control.ur_direct_torque.ur_friction_plan` (``ur``: UR's model scaled to the identified
   friction, clamped to [0, 1], no friction in the feedforward; ``dynid``: UR's set to 0, dynid's own); the plan
   dynid would choose for the result is printed. The ratio is the RMS tracking error with dynid over the
   baseline's, per joint after the first second; the JSON has the largest over joints and both plans (target < 1).
   ``friction_scales_set``: the ``SetFrictionModelParameters`` request built for the ``ur`` plan (a stand-in of
   ur_msgs' class, which is not installable here) carries the factors dynid computed, each in [0, 1], not all 0,
   and they are the ones the twin applies.
3. ``set_payload_inertia_ok``: ``dynid payload``'s request for the tool (with its inertia) built into stand-ins of
   both ur_msgs shapes (main: ``payload`` geometry_msgs/Inertia + ``transition_time``; Kilted/Jazzy: ``mass``,
   ``center_of_gravity``, ``ixx`` … + ``transition_time``) carries mass, centre of mass, inertia and the transition
   time.

The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from dynid.cli.reading import read_bag as read_for_commands
from dynid.control.feedforward import Feedforward
from dynid.control.ur_direct_torque import (
    friction_model_request,
    identified_friction,
    set_payload_request,
    ur_friction_plan,
)
from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import validate
from dynid.io.bag import read_bag, write_bag
from dynid.io.gravity_restore import payload_record
from dynid.io.rtde import write_rtde
from dynid.model import Payload, load_robot
from dynid.payload.robot_calls import ur_set_payload
from dynid.sim.parameters import PlantParameters
from dynid.sim.recording import SimulationSettings, simulate_recording
from dynid.sim.twin import DigitalTwin
from dynid.sim.ur_modes import URDirectTorque, as_driver_recording, driver_effort, run_direct_torque

ROBOT = load_robot('ur5e')
TOOL = Payload(2.0, [0.0, 0.0, 0.05], np.diag([0.004, 0.004, 0.002]))
RATE_HZ = 250.0
#: case: (meaning written, payload set on the robot, read through the RTDE publisher)
CASES = {'current': ('current', None, False), 'current_as_torque': ('current_as_torque', None, False),
         'gravity_compensated_payload_right': ('gravity_compensated_torque', TOOL, False),
         'gravity_compensated_payload_wrong': ('gravity_compensated_torque', None, False),
         'rtde_publisher': ('gravity_compensated_torque', TOOL, True)}


def _twin_runs(folder: Path, duration_s: float) -> dict:
    out = {}
    for name, seed in (('train', 1), ('held', 4)):
        bag = simulate_recording(ROBOT, folder / name, builtin_excitation_path('ur5e'),
                                 SimulationSettings(duration_s=duration_s, rate_hz=RATE_HZ, seed=seed,
                                                    payload_kg=TOOL.mass, payload_com=tuple(TOOL.com)), quiet=True)
        out[name] = read_bag(bag, ROBOT.joint_names)
    return out


def _identify(dataset):
    return identify(ROBOT, [RecordingInput(dataset, payload=TOOL)], ModelSpec(), drives=ROBOT.drives,
                    options=IdentifyOptions('wls'))


def _fits(result, held) -> dict:
    metrics = validate(result, ROBOT, held, payload=TOOL)
    return {name: float(m['nrmse_fit_percent']) for name, m in metrics['joints'].items()}


def _write(folder: Path, name: str, dataset, meaning, payload_set, rtde: bool) -> Path:
    if rtde:
        field = driver_effort(ROBOT, meaning, dataset.q, None, dataset.current, payload_set)
        return write_rtde(folder / name, dataset, payload_record(payload_set), tau=field)
    return write_bag(folder / name, as_driver_recording(dataset, ROBOT, meaning, payload_set))


def _read_right(read, twin, meaning, payload_set, rtde, wrong) -> tuple[bool, str]:
    """Whether ``read`` is what the driver published, read as it means (module docstring, 1)."""
    drive_torque = ROBOT.drives.current_to_joint_torque(twin.current)
    if meaning == 'current':
        ok = read.tau is None and np.allclose(read.current, twin.current)
        return ok, 'current as current' if ok else 'current not read as current'
    as_recorded = read.source.get('effort_as_recorded', read.source.get('joint_states_effort'))
    if as_recorded != meaning:
        return False, f'read as {as_recorded}, written as {meaning}'
    torque = read.tau if read.tau is not None else ROBOT.drives.current_to_joint_torque(read.current)
    if not np.allclose(torque, drive_torque, atol=1e-6 * np.abs(drive_torque).max()):
        return False, 'torque not restored to K·i'
    if rtde and not np.array_equal(read.temperature, twin.temperature):
        return False, 'RTDE temperatures not joined'
    if meaning == 'gravity_compensated_torque':
        warning = read.source['payload_set_check']['warning']
        if wrong != (warning is not None):
            return False, f'payload set {"wrong not named" if wrong else "right but called wrong"}'
        if wrong:
            return True, f'restored; named: {warning}'
    return True, 'read right'


def effort_cases(folder: Path, runs: dict) -> dict:
    reference = _identify(runs['train'])
    reference_fits = _fits(reference, runs['held'])
    rows = {}
    for case, (meaning, payload_set, rtde) in CASES.items():
        readings = {}
        for part in ('train', 'held'):
            bag = _write(folder, f'{case}_{part}', runs[part], meaning, payload_set, rtde)
            readings[part] = read_for_commands(bag, ROBOT, None, warn=False)
        right, why = _read_right(readings['train'], runs['train'], meaning, payload_set, rtde,
                                 case.endswith('wrong'))
        fits = _fits(_identify(readings['train']), readings['held'])
        gap = max(abs(fits[j] - reference_fits[j]) for j in fits)
        rows[case] = {'read_right': right, 'why': why, 'fits': fits, 'gap_points': gap}
        print(f'{case:<36} read right {right!s:<5} held-out fit gap {gap:5.2f} points  ({why})')
    print('held-out NRMSE fit [%] read from the joint torque: '
          + ', '.join(f'{j} {f:.2f}' for j, f in reference_fits.items()))
    return {'reference': reference, 'reference_fits': reference_fits, 'cases': rows}


class _FrictionRequest:  # a stand-in of ur_msgs/srv/SetFrictionModelParameters.Request
    def __init__(self):
        self.parameters = SimpleNamespace(viscous_scale=[], coulomb_scale=[])


class _PayloadMain:  # main's ur_msgs: payload (geometry_msgs/Inertia) + transition_time
    def __init__(self):
        self.payload = SimpleNamespace(m=0.0, com=SimpleNamespace(x=0.0, y=0.0, z=0.0), ixx=0.0, iyy=0.0, izz=0.0,
                                       ixy=0.0, ixz=0.0, iyz=0.0)
        self.transition_time = SimpleNamespace(sec=0, nanosec=0)


class _PayloadKilted:  # Kilted/Jazzy ur_msgs: flat fields + transition_time
    def __init__(self):
        self.mass = 0.0
        self.center_of_gravity = SimpleNamespace(x=0.0, y=0.0, z=0.0)
        self.ixx = self.iyy = self.izz = self.ixy = self.ixz = self.iyz = 0.0
        self.transition_time = SimpleNamespace(sec=0, nanosec=0)


def _tracking(params, trajectory, scales, commands, samples) -> np.ndarray:
    """RMS tracking error [rad] per joint after the first second, UR applying ``commands`` with ``scales``."""
    twin = DigitalTwin(params, rate_hz=500.0, seed=1, initial_q=trajectory.evaluate(np.zeros(1))[0][0])
    twin.follow(trajectory, start_time=0.0)
    run = run_direct_torque(twin, URDirectTorque.of_twin(params, *scales, payload_set=TOOL), commands, samples)
    q_ref = trajectory.evaluate(run['t'])[0]
    keep = run['t'] >= 1.0
    return np.sqrt(np.mean((run['q'][keep] - q_ref[keep]) ** 2, axis=0))


def direct_torque(reference, duration_s: float) -> dict:
    trajectory = load_trajectory(builtin_excitation_path('ur5e'))
    params = PlantParameters.of_twin(ROBOT, TOOL, seed=1, internal_feedforward='none')
    fv, fc = identified_friction(reference, ROBOT.joint_names)
    samples = int(duration_s * 500.0)
    t = np.arange(1, samples + 1) / 500.0
    q_r, dq_r, ddq_r = trajectory.evaluate(t)
    baseline = _tracking(params, trajectory, (0.0, 0.0), None, samples)
    chosen = ur_friction_plan(fv, fc, params.joints.viscous1, params.joints.coulomb)
    print(f'direct torque: the plan dynid chooses for this result: {chosen.mode} ({chosen.reason})')
    out, scales_set = {}, False
    for mode in ('ur', 'dynid'):
        plan = ur_friction_plan(fv, fc, params.joints.viscous1, params.joints.coulomb, mode=mode)
        request = friction_model_request(_FrictionRequest, plan)
        applied = (np.array(request.parameters.viscous_scale), np.array(request.parameters.coulomb_scale))
        in_range = all(np.all((a >= 0) & (a <= 1)) for a in applied)
        if mode == 'ur':  # the factors dynid computes from its identified friction, set through the request
            scales_set = bool(in_range and np.allclose(applied[0], plan.viscous_scale)
                              and np.allclose(applied[1], plan.coulomb_scale) and np.any(applied[0] > 0))
        feedforward = Feedforward(ROBOT, reference, compensate_gravity=False,
                                  compensate_friction=plan.feedforward_friction, rate_hz=500.0,
                                  warn=lambda text: None)
        errors = _tracking(params, trajectory, applied, feedforward.evaluate(q_r, dq_r, ddq_r), samples)
        ratio = errors / baseline
        out[mode] = ratio
        print(f'  plan {mode}: scales viscous ' + ', '.join(f'{v:.2f}' for v in applied[0]) + '; coulomb '
              + ', '.join(f'{c:.2f}' for c in applied[1]) + f' ({plan.reason})')
        for j, name in enumerate(ROBOT.joint_names):
            print(f'    {name:<22} RMS tracking error {1e3 * baseline[j]:7.3f} mrad -> {1e3 * errors[j]:7.3f} mrad '
                  f'(ratio {ratio[j]:.3f})')
    return {'ratio_max': float(max(r.max() for r in out.values())), 'scales_set': scales_set, 'plan': chosen.mode}


def payload_requests() -> bool:
    values = ur_set_payload(ROBOT, TOOL, inertia_identified=True)['request']
    main = set_payload_request(_PayloadMain, values, transition_time_s=1.5)
    kilted = set_payload_request(_PayloadKilted, values, transition_time_s=1.5)
    inertia = [values[k] for k in ('ixx', 'iyy', 'izz', 'ixy', 'ixz', 'iyz')]
    ok_main = (main.payload.m == values['mass'] and [main.payload.ixx, main.payload.iyy, main.payload.izz,
                                                      main.payload.ixy, main.payload.ixz, main.payload.iyz] == inertia
               and main.payload.com.z == values['center_of_gravity']['z']
               and (main.transition_time.sec, main.transition_time.nanosec) == (1, 500_000_000))
    ok_kilted = (kilted.mass == values['mass'] and [kilted.ixx, kilted.iyy, kilted.izz, kilted.ixy, kilted.ixz,
                                                     kilted.iyz] == inertia
                 and (kilted.transition_time.sec, kilted.transition_time.nanosec) == (1, 500_000_000))
    print(f'set_payload request: main shape {ok_main}, Kilted/Jazzy shape {ok_kilted}; inertia {inertia}')
    return bool(ok_main and ok_kilted and any(v != 0 for v in inertia))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='shorter recordings (half)')
    args = parser.parse_args(argv)
    duration = 15.0 if args.quick else 30.0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix='dynid_effort_') as folder:
        runs = _twin_runs(Path(folder), duration)
        cases = effort_cases(Path(folder), runs)
    torque = direct_torque(cases['reference'], 5.0 if args.quick else 10.0)  # the excitation's period: 10 s
    payload_ok = payload_requests()
    rows = cases['cases']
    rtde = rows['rtde_publisher']
    line = {'benchmark': 'effort_semantics', 'cases': len(rows),
            'read_right': sum(r['read_right'] for r in rows.values()),
            'heldout_fit_gap_points_max': round(max(r['gap_points'] for r in rows.values()), 3),
            'rtde_publisher_ok': bool(rtde['read_right'] and rtde['gap_points'] <= 1),
            'ur_direct_torque_tracking_ratio_max': round(torque['ratio_max'], 4),
            'friction_scales_set': torque['scales_set'], 'set_payload_inertia_ok': payload_ok}
    print(f'({time.perf_counter() - started:.0f} s)', file=sys.stderr)
    print(json.dumps(line))
    return 0


if __name__ == '__main__':
    sys.exit(main())
