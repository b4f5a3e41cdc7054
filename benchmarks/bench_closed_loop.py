"""The loop closed (issue 90): the controller's reference read from each kind of log, IDIM-LS (WLS) against IDIM-IV
and DIDIM on closed-loop data (Janot, Vandanjon & Gautier 2014; Gautier, Janot & Vandanjon 2013; the seeds' claim,
Madsen 2020 §1: they remove least squares' bias where the filtering cannot be tuned well, and do not improve on it
where it can), the Durbin–Wu–Hausman test's verdicts, and ``dynid contact`` with the recorded reference.

Parts (``--parts``): ``sources`` (:mod:`benchmarks.closed_loop_sources`), ``dwh`` (:mod:`benchmarks.closed_loop_dwh`),
``contact`` (:mod:`benchmarks.closed_loop_contact`) and ``methods``, below.

**Methods.** The UR5e follows its shipped excitation under a PD on the motor encoders whose gains the script knows
(the twin's internal feedforward off, so that the controller is the PID the closed-loop methods model), Coulomb +
viscous joint friction, at 1 kHz, 250 Hz and 100 Hz, with the twin's sensors (encoders, torque and current noise) and
with a coarse link encoder (0.01 rad) that makes the regressor noisy. Per row: the relative error ‖χ̂ − χ*‖/‖χ*‖ of
the arm's base parameters against the twin's truth (no prior: the robot file is the truth), the held-out relative
torque error on another motion (logged with the twin's own encoders: it scores the model, not the encoder), the
iterations and the time; "floor": IV with the instruments of the loop simulated with the TRUE parameters (what IV
reaches with a perfect start). ``--controllers model`` runs the plants' default controller (``pd``: the PD above):
their PID with the model-based feedforward of the reference (nominal inverse dynamics, rotor inertia, Coulomb and
viscous friction), the closed-loop methods given no gains file (the controller identified from the recording, as a
user without its gains runs them; its floor with the true gains and the feedforward identified).

Ends with a JSON line: the issue's ``reference_sources_read``, ``iv_over_ls_param_error_100hz`` (the better of IV and
DIDIM over LS at 100 Hz with the plants' own sensors, at the worst plant and controller; ``_coarse``: with the coarse
encoder), ``dwh_flags_biased``, ``dwh_flags_unbiased``, ``iv_over_ls_heldout_1khz`` (the farthest from 1), then each
part's figures (the ``pd`` ones under the names they had, the ``model`` ones with ``_model``, MuJoCo's with
``_mujoco``) and the rows.

    AMENT_PREFIX_PATH=.venv PYTHONPATH=src python -m benchmarks.bench_closed_loop [--seconds 20]
        [--rates 1000,250,100] [--controllers pd,model] [--parts methods,sources,dwh,contact]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import yaml

from benchmarks import closed_loop_contact, closed_loop_dwh, closed_loop_sources
from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
from dynid.identify.closed_loop.fit import least_squares_start
from dynid.identify.closed_loop.instruments import (
    ClosedLoopSettings,
    controller_of,
    instrumental_estimate,
    simulated_problem,
)
from dynid.identify.equations.problem import problem_for
from dynid.identify.equations.request import IdentifyOptions, ModelSpec, RecordingInput
from dynid.identify.steps.run import identify
from dynid.identify.validation.validate import validate
from dynid.model import load_robot
from testing.closed_loop import base_parameter_error, closed_loop_recording, fourier_motion, true_values

SPEC = ModelSpec(friction='viscous_coulomb')
COARSE_RAD = 1e-2


def run_method(robot, dataset, heldout, method: str, gains_file: str) -> dict:
    """One method's row (``gains_file`` '': the controller identified from the recording)."""
    method_options = {} if method == 'wls' or not gains_file else {'controller_gains': gains_file}
    options = IdentifyOptions(method=method, physical=None, method_options=method_options)
    start = time.perf_counter()
    result = identify(robot, [RecordingInput(dataset, name='twin')], SPEC, options=options)
    seconds = time.perf_counter() - start
    return {'error': base_parameter_error(robot, result.parameter_names, result.values), 'time_s': round(seconds, 2),
            'iterations': (result.provenance.get('iterations') or {}).get('count'),
            'heldout': validate(result, robot, heldout)['relative_residual']}


def floor(robot, dataset, gains_file: str) -> float:
    """The base-parameter error of IV with the instruments of the loop simulated with the true parameters, under the
    controller the methods take (``gains_file``'s, or '': identified from the recording)."""
    problem = problem_for(robot, [RecordingInput(dataset)], SPEC)
    start, w, y, joints, _ = least_squares_start(problem, IdentifyOptions(physical=None), lambda _: None)
    truth = true_values(problem, robot)
    controllers = [controller_of(problem, ClosedLoopSettings(controller_gains=gains_file), 0)]
    z = simulated_problem(problem, truth, controllers).equations(truth[:len(problem.rigid_names)])[0]
    iv = instrumental_estimate(w, z, y, start.row_weights, problem.parameter_names())
    return base_parameter_error(robot, iv.names, iv.values)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=20.0)
    parser.add_argument('--rates', default='1000,250,100')
    parser.add_argument('--methods', default='wls,idim_iv,didim')
    parser.add_argument('--engines', default='twin,mujoco', help='plants: twin, mujoco (needs pip install mujoco)')
    parser.add_argument('--controllers', default='pd,model', help="pd (a PD alone), model (the plants' default "
                                                                  'controller: a PID with its model-based feedforward)')
    parser.add_argument('--parts', default='methods,sources,dwh,contact',
                        help='methods (LS against IV and DIDIM), sources (the reference read back from each kind of '
                             "log), dwh (the Durbin-Wu-Hausman test's verdicts), contact (dynid contact with the "
                             'reference read from a logger\'s columns)')
    parser.add_argument('--dwh-seeds', type=int, default=20, help='cases per scenario of the dwh part')
    parser.add_argument('--contact-runs', type=int, default=6, help='runs with pushes per plant of the contact part')
    args = parser.parse_args(argv)
    parts = args.parts.split(',')
    figures: dict = {}
    if 'sources' in parts:
        figures.update(closed_loop_sources.main())
    if 'dwh' in parts:
        figures.update({k: v for k, v in closed_loop_dwh.main(['--seeds', str(args.dwh_seeds)]).items()
                        if k.startswith('dwh_')})
    if 'contact' in parts:
        figures.update(closed_loop_contact.main(['--engines', args.engines, '--runs', str(args.contact_runs)]))
    rows = methods_part(args) if 'methods' in parts else []
    figures.update(summary(rows))
    first = headline(rows, figures)  # the names first
    print(json.dumps({**first, **{k: v for k, v in figures.items() if k not in first}, 'rows': rows}, default=str))
    return figures


def methods_part(args) -> list[dict]:
    """LS, IV, DIDIM and IV's floor on every plant, controller, rate and encoder (module docstring)."""
    robot = load_robot('ur5e')
    excitation = load_trajectory(builtin_excitation_path(robot.name))
    rows = []
    print(f'{"plant":6}  {"ctrl":5}  {"rate":>6}  {"encoder":8}  {"method":8}  {"param err":>9}  {"held-out":>8}  '
          f'{"iter":>4}  {"time":>6}')
    with tempfile.TemporaryDirectory() as folder:
        for controller in args.controllers.split(','):
            for engine in args.engines.split(','):
                for rate in (float(r) for r in args.rates.split(',')):
                    for encoder, resolution in (('twin', None), ('coarse', COARSE_RAD)):
                        rows += case(robot, excitation, args, (engine, controller), rate, encoder, resolution,
                                     Path(folder))
    return rows


def headline(rows: list[dict], figures: dict) -> dict:
    """The issue's five figures first: ``iv_over_ls_param_error_100hz`` the better of IV and DIDIM over LS at 100 Hz
    with the plants' own sensors, at the worst plant and controller (``_coarse``: with the coarse encoder);
    ``iv_over_ls_heldout_1khz`` IV's held-out error over LS's at 1 kHz, the farthest from 1."""
    ratio = _ratios(rows)
    plants = dict.fromkeys((r['engine'], r['controller']) for r in rows)

    def better(encoder: str):
        ratios = [min((v for v in (ratio(p, 100.0, encoder, m, 'error') for m in ('idim_iv', 'didim'))
                       if v is not None), default=None) for p in plants]
        return max((v for v in ratios if v is not None), default=None)

    heldout = [v for v in (ratio(p, 1000.0, 'twin', 'idim_iv', 'heldout') for p in plants) if v is not None]
    return {'reference_sources_read': figures.get('reference_sources_read'),
            'iv_over_ls_param_error_100hz': better('twin'), 'iv_over_ls_param_error_100hz_coarse': better('coarse'),
            'dwh_flags_biased': figures.get('dwh_flags_biased'),
            'dwh_flags_unbiased': figures.get('dwh_flags_unbiased'),
            'iv_over_ls_heldout_1khz': max(heldout, key=lambda v: abs(v - 1.0)) if heldout else None}


def case(robot, excitation, args, plant: tuple[str, str], rate: float, encoder: str, resolution: float | None,
         folder: Path) -> list[dict]:
    """The rows of one plant (engine, controller), rate and encoder: each method's, then IV's floor."""
    engine, controller = plant
    dataset, gains = closed_loop_recording(robot, excitation, args.seconds, rate, resolution, engine=engine,
                                           controller=controller)
    heldout, _ = closed_loop_recording(robot, fourier_motion(robot, 7), 10.0, rate, None, seed=1, engine=engine,
                                       controller=controller)
    gains_file = folder / 'gains.yaml'
    gains_file.write_text(yaml.safe_dump(gains))
    given = str(gains_file) if controller == 'pd' else ''
    rows = []
    for method in [*args.methods.split(','), 'floor']:
        row = {'engine': engine, 'controller': controller, 'rate_hz': rate, 'encoder': encoder, 'method': method}
        row.update({'error': floor(robot, dataset, given)} if method == 'floor' else
                   run_method(robot, dataset, heldout, method, given))
        rows.append(row)
        print(f'{engine:6}  {controller:5}  {rate:6.0f}  {encoder:8}  {method:8}  {row["error"]:9.4f}  '
              f'{row.get("heldout", float("nan")):8.4f}  {row.get("iterations") or "":>4}  '
              f'{row.get("time_s", float("nan")):6.1f}', flush=True)
    return rows


def _ratios(rows: list[dict]):
    """``ratio(plant, rate, encoder, method, key)``: the method's ``key`` ('error', 'heldout') over WLS's on the same
    plant (engine, controller), rate and encoder; None where either row is missing."""
    value = {(r['engine'], r['controller'], r['rate_hz'], r['encoder'], r['method']): r for r in rows}

    def ratio(plant, rate, encoder, method, key):
        a, b = value.get((*plant, rate, encoder, method)), value.get((*plant, rate, encoder, 'wls'))
        return None if a is None or b is None else a[key] / b[key]
    return ratio


def summary(rows: list[dict]) -> dict:
    """The issue's figures per plant and controller: IV's (and DIDIM's) parameter error over LS's at 100 Hz (twin
    sensors and coarse encoder) and IV's held-out error over LS's at 1 kHz."""
    ratio = _ratios(rows)
    figures = {}
    for plant in dict.fromkeys((r['engine'], r['controller']) for r in rows):
        tail = ('' if plant[0] == 'twin' else f'_{plant[0]}') + ('' if plant[1] == 'pd' else f'_{plant[1]}')
        figures.update({f'idim_iv_over_ls_param_error_100hz{tail}': ratio(plant, 100.0, 'twin', 'idim_iv', 'error'),
                        f'didim_over_ls_param_error_100hz{tail}': ratio(plant, 100.0, 'twin', 'didim', 'error'),
                        f'idim_iv_over_ls_param_error_100hz_coarse{tail}': ratio(plant, 100.0, 'coarse', 'idim_iv',
                                                                                 'error'),
                        f'didim_over_ls_param_error_100hz_coarse{tail}': ratio(plant, 100.0, 'coarse', 'didim',
                                                                               'error'),
                        f'idim_iv_over_ls_heldout_1khz{tail}': ratio(plant, 1000.0, 'twin', 'idim_iv', 'heldout')})
    return figures


if __name__ == '__main__':
    main()
