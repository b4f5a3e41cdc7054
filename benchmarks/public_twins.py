"""The weakly exciting twin cases of ``bench_public.py``: logs a user records when the arm may hardly move (a chirp per
joint, a short log, multi-sines about one pose; 30–100 Hz), each identified by ``dynid identify`` with the defaults
and with every fixed choice of method × friction law × (the prior, no prior, physical consistency), and scored on
another motion of the same arm (a random 5-harmonic Fourier motion, 20 s, another seed).

The arm's true links are its robot file's with every link off by 20–40 % (mass, first moment and inertia; a CAD
file is off so), so the robot file given to dynid is not the truth and its prior is what a user's is. The twin logs
joint torque (a torque sensor's view; positions, velocities, torque). Per case: the default's held-out relative
residual ‖y − ŷ‖/‖y‖ over the best fixed choice's (picked afterwards on the held-out motion), and the identified
gravity torque against the truth's at the held-out poses, per joint (a least-squares scale; joints whose true
gravity torque there is below 1 % of the largest left out): a scale below 0.5 that no warning of the default's run
names (the joint beside 'gravity' or 'offset') is **unsaid**; the least scale of each fixed choice is kept beside
(the fixed laws keep a constant offset per joint, which the default's choice may drop). Each remedy a warning of the
default's run gives is followed as written: whether it is given again, and the held-out residual after it
(``weak_advice_worse_held_out``: remedies that made it worse; on a twin the data hold no fault, so advice is a
false alarm), and the scale, unit or gravity claims of each run (``weak_false_claims``:
``public_diagnosis.false_claims``; the twin logs joint torque in N·m, its robot file's links off by tens of percent
only).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from benchmarks.public_diagnosis import false_claims
from benchmarks.public_scoring import Call, remedies, way_out

#: (name, robot, motion, seconds, rate [Hz], amplitude or sweep); motion: 'chirp', 'fourier' (5 harmonics, 10 s)
CASES = (
    ('UR5e chirp 0.05–1.5 Hz, 20 s at 100 Hz', 'ur5e', 'chirp', 20.0, 100.0, 0.3),
    ('UR5e short log, 8 s at 30 Hz', 'ur5e', 'fourier', 8.0, 30.0, 1.0),
    ('UR5e multi-sines about its home pose, 60 s at 100 Hz', 'ur5e', 'fourier', 60.0, 100.0, 0.08),
    ('Panda chirp 0.05–1 Hz, 15 s at 50 Hz', 'panda', 'chirp', 15.0, 50.0, 0.25),
    ('Panda short log, 6 s at 100 Hz', 'panda', 'fourier', 6.0, 100.0, 1.0),
    ('UR10e multi-sines about one pose, 30 s at 50 Hz', 'ur10e', 'fourier', 30.0, 50.0, 0.1),
)
QUICK = (0, 2, 4)
FIXED_METHODS, FIXED_FRICTION = ('ols', 'wls', 'irls'), ('viscous_coulomb', 'comprehensive')
FIXED_VARIANTS = {'prior': (), 'no prior': ('--no-prior',), 'physical': ('--physical',)}
HELD_SECONDS, HELD_SEED, TRAIN_SEED = 20.0, 57, 31


def perturbed(robot, seed: int = 11):
    """``robot`` with every link off by 20–40 % (module docstring)."""
    from dynid.sim.parameters import cad_like

    return cad_like(robot, seed)


def _chirp(robot, seconds: float, amplitude: float, f1: float):
    """A linear chirp 0.05 → ``f1`` Hz on every joint about the home pose, phase-shifted joint by joint."""
    from dynid.excite.trajectory import PointTrajectory
    from dynid.sim.twin import home_configuration

    t = np.arange(0.0, seconds + 1.0, 0.005)
    f0, rate = 0.05, (f1 - 0.05) / seconds
    phase = 2 * np.pi * (f0 * t + 0.5 * rate * t ** 2)[:, None] + np.arange(robot.n)[None, :] * 0.7
    ramp = np.clip(t / 1.0, 0, 1)[:, None]  # from rest
    q = home_configuration(robot)[None, :] + amplitude * ramp * (np.sin(phase) - np.sin(phase[:1]))
    dq = np.gradient(q, t, axis=0)
    ddq = np.gradient(dq, t, axis=0)
    return PointTrajectory(tuple(robot.joint_names), t + 0.01, q, dq, ddq)


def _fourier(robot, seed: int, amplitude: float):
    from dynid.excite.fourier import FourierDesign, default_limits, random_design
    from dynid.sim.twin import home_configuration

    home = home_configuration(robot)
    design = FourierDesign(robot.joint_names, 5, 10.0)
    x = random_design(design, home, default_limits(robot, home), np.random.default_rng(seed),
                      np.linspace(0.0, 10.0, 2000, endpoint=False)).reshape(robot.n, -1).copy()
    x[:, 1:] *= amplitude
    return design.trajectory(x.reshape(-1))


def record(truth, trajectory, seconds: float, rate: float, seed: int):
    """The twin of ``truth`` following ``trajectory``: a Dataset of joint torque (module docstring)."""
    from dynid.sim.parameters import PlantParameters
    from dynid.sim.recording import record_to_dataset
    from dynid.sim.twin import DigitalTwin, trajectory_start

    if 'duration_s' in {f.name for f in dataclasses.fields(trajectory)}:
        trajectory = dataclasses.replace(trajectory, duration_s=max(seconds, trajectory.duration_s))
    twin = DigitalTwin(PlantParameters.defaults(truth), rate_hz=rate, seed=seed,
                       initial_q=trajectory_start(trajectory, truth.joint_names))
    twin.follow(trajectory, start_time=0.0)
    data = record_to_dataset(twin.run(seconds), None, {'simulation': 'bench_public'})
    return dataclasses.replace(data, current=None, theta=None, dtheta=None, temperature=None, source={})


def _gravity_scales(result, robot, truth, q: np.ndarray) -> dict:
    from dynid.identify.result.torque import RigidBodyTorque

    zeros = np.zeros_like(q)
    true = truth.inverse_dynamics(q, zeros, zeros)
    identified = RigidBodyTorque(result, robot)(q, zeros, zeros)
    size = np.sqrt(np.mean(true ** 2, axis=0))
    return {joint: float(true[:, j] @ identified[:, j] / (true[:, j] @ true[:, j]))
            for j, joint in enumerate(robot.joint_names) if size[j] > 0.01 * size.max()}


def run_case(case, folder: Path, runner, quick: bool) -> dict:
    """One twin case (module docstring)."""
    from dynid.identify.result.result import IdentificationResult
    from dynid.identify.validation.validate import validate
    from dynid.io.bag import write_bag
    from dynid.model import load_robot

    name, robot_name, motion, seconds, rate, amplitude = case
    robot = load_robot(robot_name)
    truth = perturbed(robot)
    trajectory = (_chirp(robot, seconds, amplitude, 1.5 if robot_name != 'panda' else 1.0) if motion == 'chirp'
                  else _fourier(robot, TRAIN_SEED, amplitude))
    tag = re.sub(r'\W+', '_', name)[:40]
    bag = write_bag(folder / f'twin_{tag}', record(truth, trajectory, seconds, rate, TRAIN_SEED))
    held = record(truth, _fourier(robot, HELD_SEED, 0.8), HELD_SECONDS, rate, HELD_SEED)

    def identify(label: str, *options: str) -> tuple[Call, float | None, object]:
        path = folder / f'twin_{tag}_{label}.yaml'
        call = runner(['identify', str(bag), '--robot', robot_name, *options, '-o', str(path)])
        if call.code != 0:
            return call, None, None
        result = IdentificationResult.load(path)
        return call, validate(result, robot, held)['relative_residual'], result

    call, default, result = identify('defaults')
    row = {'case': name, 'identify_exit': call.code, 'warnings': call.warnings}
    if call.code != 0:  # refused: the first way out against --force, then the default is what --force gives
        option = way_out(call.text.strip()[-600:])
        forced = identify('force', '--force')
        out = identify('way_out', *option.split()) if option else (None, None, None)
        row['refusal'] = {'refusal': call.last_line[:300], 'way_out': option, 'force': forced[1],
                          'way_out_residual': out[1],
                          'worse_than_force': out[1] is None or (forced[1] is not None and out[1] > forced[1])}
        call, default, result = forced
    row['advice'], row['claims'] = [], false_claims('twin', call.warnings)
    for k, option in enumerate(remedies(call.warnings)):  # each remedy followed as written (bench_public.py)
        after, residual, _ = identify(f'advice{k}', *option.split())
        row['advice'].append({'remedy': option, 'exit': after.code, 'residual': residual,
                              'repeated': after.code == 0 and option in remedies(after.warnings),
                              'claims': false_claims('twin', after.warnings)})
    fixed, fixed_gravity = {}, {}
    methods = FIXED_METHODS[:2] if quick else FIXED_METHODS
    for method in methods:
        for friction in FIXED_FRICTION[:1] if quick else FIXED_FRICTION:
            for variant, options in FIXED_VARIANTS.items():
                done = identify(f'{method}_{friction}_{variant}'.replace(' ', '_'), '--method', method,
                                '--friction', friction, *options, '--force')
                if done[1] is not None:
                    label = f'{method} {friction} {variant}'
                    fixed[label] = done[1]
                    scales = _gravity_scales(done[2], robot, truth, held.q[::10])
                    fixed_gravity[label] = min(scales.values()) if scales else None
    best = min(fixed, key=fixed.get) if fixed else None
    row.update(default=default, fixed=fixed, best_fixed=best, fixed_gravity_scale_min=fixed_gravity,
               ratio=None if default is None or best is None else default / fixed[best])
    if result is not None:
        row['method'], row['friction'] = result.method, result.model['friction']
        scales = _gravity_scales(result, robot, truth, held.q[::10])
        said = ' '.join(call.warnings + list(result.warnings))
        low = {joint: s for joint, s in scales.items() if s < 0.5}
        row['gravity_scale'] = scales
        row['gravity_below_half_unsaid'] = sorted(
            joint for joint in low if not (joint in said and ('gravity' in said or 'offset' in said)))
    return row


def run_all(folder: Path, runner, quick: bool, say) -> dict:
    """Every case (``quick``: :data:`QUICK`, fewer fixed choices) and the section's figures."""
    rows = []
    for k in QUICK if quick else range(len(CASES)):
        say(f'weak twin case: {CASES[k][0]}')
        rows.append(run_case(CASES[k], folder, runner, quick))
    ratios = np.array([r['ratio'] for r in rows if r.get('ratio') is not None])
    return {'rows': rows, 'weak_twin_cases': len(rows),
            'weak_default_over_best_fixed_median': float(np.median(ratios)) if ratios.size else None,
            'weak_default_over_best_fixed_max': float(ratios.max()) if ratios.size else None,
            'weak_gravity_below_half_unsaid': sum(len(r.get('gravity_below_half_unsaid', [])) for r in rows),
            'weak_refusals_way_out_worse_than_force': sum(bool((r.get('refusal') or {}).get('worse_than_force'))
                                                          for r in rows),
            'weak_warnings_repeated_after_advice': sum(entry['repeated'] for r in rows for entry in r['advice']),
            'weak_false_claims': sum(len(r['claims']) + sum(len(e['claims']) for e in r['advice']) for r in rows),
            'weak_advice_worse_held_out': sum(1 for r in rows for entry in r['advice'] if entry['residual'] is not None
                                              and r['default'] is not None and entry['residual'] > r['default'])}
