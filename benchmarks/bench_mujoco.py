"""dynid on a plant it did not write: identification, held-out validation, feedforward and the MJCF export on
MuJoCo (issue 36).

Run: ``AMENT_PREFIX_PATH=.venv .venv/bin/python -m benchmarks.bench_mujoco [--quick] [--demo]``.

Set-up, per robot (UR5e at 500 Hz, Panda at 1 kHz), on :class:`dynid.sim.mujoco_twin.MujocoTwin` (MuJoCo
computes the motion; dynid's controller and sensors, noise on):

- **Plant.** The robot's URDF through MuJoCo's URDF compiler, written as an MJCF whose joint ``armature`` is
  1.5× the drive data's rotor inertia, ``damping`` 0.5× the twin's viscous friction Fv1 and ``frictionloss``
  1.6× its Coulomb friction Fc0: the identification cannot borrow them from dynid's defaults. No payload.
- **Identification.** An optimized excitation (``dynid excite --optimize``: :func:`design_excitation`, 5
  harmonics, 10 s, 2 starts, 60 iterations; seed 0), two periods recorded; WLS, ``viscous_coulomb``, from
  the motor currents with the rotor inertia identified whole (``--torque current --no-rotor-compensation``:
  the MuJoCo armature is not the drive data's), physically consistent (``--physical``).
- **Held-out.** A different trajectory (a random Fourier design, seed 11, 8 s period), recorded the same way;
  ``nrmse_fit_percent`` per joint of :func:`dynid.identify.validation.validate.validate` (K_τ·i against the result's
  prediction, Coulomb included). Target ≥ 95 % on every joint.
- **Feedforward.** On the held-out trajectory at 1 kHz, the joint controller's own model feedforward off
  (``internal_feedforward: none``): RMS of the link tracking error q − q_d per joint from the start of the
  motion, with rigid_body + rotor_inertia + friction_static of the result (the product's default terms) over
  without (``feedforward_loop``'s settle hold with the feedforward ramped in). Target ratio < 1 on every joint.
- **MJCF export.** :func:`dynid.identify.outputs.mjcf_export.export_mjcf` of the result; MuJoCo's ``mj_inverse`` of
  the written file on the held-out reference states (every 10th sample), friction loss disabled (a constraint
  force: not part of inverse dynamics), against dynid's W_b·χ̂_b + B·q̈ + Fv·q̇ from the same result: RMS of the
  difference over all joints relative to the RMS of dynid's torque. Target ≤ 1 %.
- **Stiffness.** The same plant with flexible joints (:class:`MujocoTwin` ``flexible``: beside each robot joint,
  now the rotor angle θ with the armature, damping and friction loss above, an elastic hinge ``<joint>_elastic`` on
  the same axis with MuJoCo's joint ``stiffness`` α1 and ``damping`` D of the twin's defaults; written out as an
  MJCF and simulated from that file, whose α1 is the truth). The optimized excitation, two periods (one with
  ``--quick``), is recorded on it and identified as above; the online stiffness estimator
  (:class:`dynid.estimate.stiffness.StiffnessEstimator` as estimator_node builds it, with the result's friction
  map and rotor inertia, D of the MJCF, one stiffness term: MuJoCo's joint spring is linear, no α3·φ³; friction
  adaptation off) runs over the recording, and k0 = α̂1 at its end is compared with the MJCF's α1 on every joint
  whose estimate converged (relative standard deviation of α̂1 ≤ 2 %, as the demo judges). Target within 5 %.
  The rotor equation needs B on every joint; the identification cannot give it where Ia_j regroups with a link
  inertia (the UR5e's and Panda's first joint, Ia_1 with Izz_1), and there the estimator takes the drive data's
  B. The JSON figure gives the estimator the MJCF's armature as its drive data (estimator_node's
  ``drives_file``: what a MuJoCo user has); the line with dynid's own drive data (B 1.5× off on that joint) is
  printed beside it.
- **Demo** (``--demo``): ``dynid demo --engine mujoco`` in a subprocess; its wall time and the samples lost it
  reports. null without ``--demo``.

``--quick``: one robot (UR5e), one identification period. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.feedforward_loop import RIGID, sampled, with_settle
from dynid.control import Feedforward
from dynid.estimate.replay import EstimationSettings, build_estimators
from dynid.excite.design import design_excitation
from dynid.excite.home import home_configuration
from dynid.excite.trajectory import PointTrajectory
from dynid.identify.equations.request import ModelSpec, RecordingInput
from dynid.identify.outputs.mjcf_export import dynid_torque, export_mjcf
from dynid.identify.solve.physical import PhysicalSettings
from dynid.identify.steps.run import IdentifyOptions, identify
from dynid.identify.validation.validate import validate
from dynid.io.recorder import read_recording
from dynid.model import load_robot
from dynid.model import mjcf as mjcf_model
from dynid.sim.mujoco_twin import MujocoTwin
from dynid.sim.parameters import ControllerParameters, PlantParameters
from dynid.sim.recording import record_to_dataset
from dynid.sim.twin import trajectory_start

RATES = {'ur5e': 500.0, 'panda': 1000.0}
SCALES = {'armature': 1.5, 'damping': 0.5, 'frictionloss': 1.6}
TARGETS = {'fit': 95.0, 'ratio': 1.0, 'mjcf': 0.01, 'stiffness': 0.05}
FF_RATE = 1000.0
ORDER = 1  # P of the stiffness regressor: MuJoCo's joint spring is linear (α1 alone)


def plant_file(robot, params, folder: Path) -> tuple[Path, dict]:
    """The MJCF of the robot with armature, damping and friction loss off dynid's defaults (module docstring)."""
    truth = {'armature': SCALES['armature'] * params.drives.rotor_inertia,
             'damping': SCALES['damping'] * params.joints.viscous1,
             'frictionloss': SCALES['frictionloss'] * params.joints.coulomb}
    spec = mjcf_model.robot_spec(mjcf_model.robot_urdf_text(robot), robot.joint_names)
    mjcf_model.set_joint_dynamics(spec, robot.joint_names, truth['armature'], truth['damping'], truth['frictionloss'])
    path = folder / f'{robot.name}_plant.xml'
    path.write_text(spec.to_xml())
    return path, truth


def run(params, path: Path, trajectory, seconds: float, rate_hz: float, seed: int):
    start = trajectory_start(trajectory, params.robot.joint_names)
    twin = MujocoTwin(params, rate_hz=rate_hz, seed=seed, initial_q=start, mjcf_path=str(path))
    twin.follow(trajectory, start_time=0.0)
    return twin.run(seconds)


def identify_mujoco(robot, record, label: str):
    """WLS, viscous_coulomb, from the currents, rotor inertia identified, physically consistent (docstring)."""
    return identify(robot, [RecordingInput(record_to_dataset(record, None, {'simulation': label}))],
                    ModelSpec(friction='viscous_coulomb', torque_source='current', rotor_compensation=False,
                              rotor_inertia=True),
                    options=IdentifyOptions('wls', physical=PhysicalSettings(consistency='always')))


def flexible_stiffness(robot, params, path: Path, excitation, seconds: float, rate: float) -> dict:
    """The online stiffness on the flexible MuJoCo plant against its MJCF's α1 (module docstring)."""
    start = trajectory_start(excitation, robot.joint_names)
    flexible = MujocoTwin(params, rate_hz=rate, seed=3, initial_q=start, mjcf_path=str(path), flexible=True)
    written = path.with_name(f'{robot.name}_flexible.xml')
    written.write_text(flexible.to_xml())
    twin = MujocoTwin(params, rate_hz=rate, seed=3, initial_q=start, mjcf_path=str(written), flexible=True)
    twin.follow(excitation, start_time=0.0)
    record = twin.run(seconds)
    result = identify_mujoco(robot, record, 'mujoco, flexible joints')
    dataset = record_to_dataset(record, None, {'simulation': 'mujoco, flexible joints'})
    damping = tuple(float(d) for d in twin.transmission_damping)
    settings = EstimationSettings(friction=False, order=ORDER, damping=damping)
    out = {'alpha1': twin.stiffness, 'phi_max': np.abs(dataset.theta - dataset.q).max(axis=0)}
    for label, drives in (('robot', None), ('mjcf', robot.drives.with_rotor_inertia(twin.armature))):
        estimator = build_estimators(robot, result, settings, rate, drives=drives).stiffness
        estimator.update(dataset.q, dataset.theta, dataset.current, dataset.temperature)
        k0 = estimator.stiffness_at_zero
        out[label] = {'k0': k0, 'error': k0 / twin.stiffness - 1.0, 'converged': estimator.converged}
    return out


def feedforward_tracking(robot, result, params, path: Path, trajectory) -> dict:
    """RMS link tracking error per joint with and without the result's feedforward (module docstring)."""
    closed = PlantParameters.of_twin(robot)
    closed.controller = ControllerParameters(internal_feedforward='none')
    motion = sampled(trajectory, trajectory.duration_s)
    q, dq, ddq, ramp, start = with_settle(motion)
    feedforward = Feedforward(robot, result, RIGID + ['friction_static'], rate_hz=FF_RATE)
    effort = ramp[:, None] * feedforward.evaluate(q, dq, ddq)
    last = np.arange(len(q) + 1).clip(max=len(q) - 1)
    rms = {}
    for label, field in (('without', None), ('with', effort)):
        twin = MujocoTwin(closed, rate_hz=FF_RATE, seed=5, initial_q=q[0], mjcf_path=str(path))
        twin.follow(PointTrajectory(robot.joint_names, np.arange(len(q) + 1) / FF_RATE, q[last], dq[last], ddq[last]),
                    effort=None if field is None else field[last])
        record = twin.run((len(q) - 1) / FF_RATE)
        error = record.measured['q'] - record.reference['q']
        rms[label] = np.sqrt(np.mean(error[start:] ** 2, axis=0))
    return {'rms_without': rms['without'], 'rms_with': rms['with'], 'ratio': rms['with'] / rms['without']}


def robot_benchmark(name: str, quick: bool, folder: Path) -> dict:
    robot = load_robot(name)
    rate = RATES[name]
    params = PlantParameters.of_twin(robot)
    path, truth = plant_file(robot, params, folder)
    start = time.perf_counter()
    excitation = design_excitation(robot, home_configuration(robot), harmonics=5, period_s=10.0, seed=0,
                                   optimize=True, starts=2, iterations=60).trajectory
    excite_s = time.perf_counter() - start
    periods = 1 if quick else 2
    start = time.perf_counter()
    training = run(params, path, excitation, periods * excitation.duration_s, rate, seed=1)
    heldout_trajectory = design_excitation(robot, home_configuration(robot), harmonics=5, period_s=8.0, seed=11,
                                           optimize=False).trajectory
    heldout = run(params, path, heldout_trajectory, heldout_trajectory.duration_s, rate, seed=2)
    simulate_s = time.perf_counter() - start
    start = time.perf_counter()
    result = identify_mujoco(robot, training, 'mujoco')
    identify_s = time.perf_counter() - start
    metrics = validate(result, robot, record_to_dataset(heldout, None, {'simulation': 'mujoco held-out'}))
    fit = np.array([metrics['joints'][j]['nrmse_fit_percent'] for j in robot.joint_names], dtype=float)
    friction = result.friction()
    rotor = result.physical_section.get('rotor_inertia') or {}
    identified = {'armature': np.array([rotor.get(j, np.nan) for j in robot.joint_names]),
                  'damping': np.array([friction[j]['Fv'] for j in robot.joint_names]),
                  'frictionloss': np.array([friction[j]['Fc'] for j in robot.joint_names])}
    tracking = feedforward_tracking(robot, result, params, path, heldout_trajectory)
    export = export_mjcf(result, robot)
    mujoco = mjcf_model.require_mujoco()
    model = mujoco.MjModel.from_xml_string(export.text)
    states = [heldout.reference[k][::10] for k in ('q', 'dq', 'ddq')]
    expected = dynid_torque(result, robot, *states)
    got = mjcf_model.inverse_dynamics(model, export.joints, *states)
    mjcf_error = float(np.sqrt(np.mean((got - expected) ** 2)) / np.sqrt(np.mean(expected ** 2)))
    start = time.perf_counter()
    stiffness = flexible_stiffness(robot, params, path, excitation, periods * excitation.duration_s, rate)
    stiffness_s = time.perf_counter() - start
    return {'stiffness': stiffness, 'stiffness_s': stiffness_s,
            'robot': robot, 'fit': fit, 'truth': truth, 'identified': identified, 'tracking': tracking,
            'mjcf_error': mjcf_error, 'seconds': {'excite': excite_s, 'simulate': simulate_s, 'identify': identify_s},
            'cond': result.condition_number_scaled}


def demo_run(folder: Path) -> tuple[float | None, int | None]:
    """``dynid demo --engine mujoco`` (its defaults: UR5e at 1 kHz, three excitation periods): (wall time [s], samples
    lost in its three recordings: stamp gaps against the rate); (None, None) if it failed."""
    out, namespace = folder / 'demo', 'dynid_bench_mujoco'
    start = time.perf_counter()
    completed = subprocess.run([sys.executable, '-m', 'dynid.cli', 'demo', '--engine', 'mujoco', '-o', str(out),
                                '--namespace', namespace, '--quiet'], capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - start
    if completed.returncode != 0:
        print(f'dynid demo --engine mujoco failed (exit {completed.returncode}): {completed.stderr.strip()[-400:]}')
        return None, None
    print(completed.stdout)
    robot = load_robot('ur5e')
    lost = 0
    for recording in sorted((out / 'recordings').glob('recording_*')):
        lost += read_recording(recording, robot.joint_names, namespace).gaps(1.0 / 1000.0).lost
    return wall, lost


def stiffness_error_max(results: dict) -> float | None:
    """Largest |k0/α1 − 1| over the converged joints of all robots; None if no joint converged."""
    errors = [abs(e) for r in results.values()
              for e, c in zip(r['stiffness']['mjcf']['error'], r['stiffness']['mjcf']['converged'], strict=True) if c]
    return round(float(max(errors)), 4) if errors else None


def joints(values, digits=3) -> str:
    return ' '.join(f'{v:.{digits}g}' for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='UR5e only, one identification period')
    parser.add_argument('--demo', action='store_true', help='also run dynid demo --engine mujoco')
    args = parser.parse_args()
    names = ['ur5e'] if args.quick else ['ur5e', 'panda']
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in names:
            r = results[name] = robot_benchmark(name, args.quick, folder)
            print(f'\n== {name} on MuJoCo {mjcf_model.require_mujoco().__version__} (rate {RATES[name]:g} Hz; '
                  f'cond(W) of the identification {r["cond"]:.3g}; excite {r["seconds"]["excite"]:.0f} s, simulate '
                  f'{r["seconds"]["simulate"]:.0f} s, identify {r["seconds"]["identify"]:.0f} s)')
            for key in ('armature', 'damping', 'frictionloss'):
                print(f'{key:<14} MuJoCo    {joints(r["truth"][key])}')
                print(f'{"":<14} identified {joints(r["identified"][key])}')
            print(f'held-out fit [%]          {joints(r["fit"], 4)}   (target >= {TARGETS["fit"]:g} on every joint)')
            t = r['tracking']
            print(f'tracking RMS without [rad] {joints(t["rms_without"])}')
            print(f'tracking RMS with    [rad] {joints(t["rms_with"])}')
            print(f'ratio                      {joints(t["ratio"])}   (target < 1 on every joint)')
            print(f'MJCF mj_inverse vs dynid, held-out states: {100 * r["mjcf_error"]:.2g} % RMS relative '
                  f'(target <= 1 %)')
            k = r['stiffness']
            print(f'flexible plant ({r["stiffness_s"]:.0f} s): MJCF alpha1 [N·m/rad] {joints(k["alpha1"], 4)}; '
                  f'max |theta - q| [rad] {joints(k["phi_max"], 2)}')
            for label, what in (('mjcf', "B of regrouped joints from the MJCF's armature"),
                                ('robot', "B of regrouped joints from dynid's drive data")):
                e = k[label]
                print(f'  {what}: k0 {joints(e["k0"], 4)}; relative error {joints(e["error"], 2)}; converged '
                      f'{" ".join("yes" if c else "no" for c in e["converged"])}')
            print('  (target within 5 % on the converged joints, with the MJCF\'s armature)')
        demo_wall, lost = demo_run(folder) if args.demo else (None, None)
    if demo_wall is not None:
        print(f'\ndynid demo --engine mujoco: {demo_wall:.0f} s wall (target <= 300 s), {lost} samples lost')
    line = {'benchmark': 'mujoco',
            'heldout_fit_min_percent': round(float(min(r['fit'].min() for r in results.values())), 3),
            'feedforward_tracking_rms_ratio_max': round(float(max(r['tracking']['ratio'].max()
                                                                  for r in results.values())), 4),
            'stiffness_error_max': stiffness_error_max(results),
            'mjcf_torque_rel_error_max': float(f'{max(r["mjcf_error"] for r in results.values()):.3g}'),
            'demo_wall_s': None if demo_wall is None else round(demo_wall, 1), 'samples_lost': lost}
    print(json.dumps(line))


if __name__ == '__main__':
    main()
