"""What ``dynid demo`` reports, once the suite has stopped. No ROS here.

:func:`conclude` validates the identified model on the held-out recording, saves the result, writes
the report and prints the summary: the identification table (:func:`identification_table`) and the
whole loop (:class:`LoopSummary`): estimates against the twin's truth, tracking without and with the
feedforward, as a terminal table and a report page (``loop.html``).

Tolerances (stated, checked by the tests on the demo's own output): the online stiffness estimate
k0 = α̂1 (Madsen, Rosenlund, Brandt and Zhang 2019, eq. (9)) within ``STIFFNESS_TOLERANCE`` of the
twin's true α1 on every joint where the estimator converged (standard deviation of α̂1 at most
``CONVERGED_RELATIVE_STD`` of it, :attr:`StiffnessEstimator.relative_std`). A joint the motion never
deflected beyond the estimator's dead zone while moving (on the UR5e twin the wrist_3 joint: its
torque stays below 0.15 N·m, α1 times the dead zone) has no estimate; the table says "not excited" instead of a number.
The adaptive friction scale α̂1 (Madsen 2020, ch.6 eq. (24)) within ``FRICTION_TOLERANCE`` of the twin's
true Coulomb scale, which is 1 (no wear scheduled: the identified Coulomb level holds).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from dynid.control.inputs import labelled_table
from dynid.control.tracking import Tracking, tracking_error
from dynid.demo.plan import HOLDOUT_PERIOD_S, DemoError, DemoSettings
from dynid.errors import InputError
from dynid.estimate.stiffness import CONVERGED_RELATIVE_STD
from dynid.files import write_text, written
from dynid.identify import IdentificationResult, validate, write_report
from dynid.io.recorder import read_recording
from dynid.sim.parameters import PlantParameters

STIFFNESS_TOLERANCE = 0.10  # relative
FRICTION_TOLERANCE = 0.25  # absolute, on the Coulomb scale [-]


@dataclass(frozen=True)
class EstimateHistory:
    """One estimator table over time: ``time_s`` (M,) [s since the first], ``values`` (M, n, Q) in the
    robot's joint order, ``quantities`` (Q,) the column names."""

    time_s: np.ndarray
    values: np.ndarray
    quantities: tuple[str, ...]

    def latest(self, quantity: str) -> np.ndarray:
        return self.values[-1, :, self.quantities.index(quantity)]

    def series(self, quantity: str) -> np.ndarray:
        return self.values[:, :, self.quantities.index(quantity)]


def estimate_history(tables: Sequence[tuple[float, Sequence[str], Sequence[int], Sequence[float]]],
                     joint_names: Sequence[str]) -> EstimateHistory | None:
    """The history of the estimator's labelled tables [(receive time [s], layout labels, layout sizes,
    data)] (a Float64MultiArray's, :func:`dynid.control.inputs.labelled_table`) in ``joint_names`` order;
    tables that do not read, or whose quantities differ from the first, are left out; None when nothing
    usable arrived."""
    times, rows, quantities = [], [], None
    for received, labels, sizes, data in tables:
        try:
            joints, columns, table = labelled_table(labels, sizes, data)
            order = [joints.index(name) for name in joint_names]
        except (InputError, ValueError):
            continue
        if quantities is not None and tuple(columns) != quantities:
            continue
        quantities = tuple(columns)
        times.append(received)
        rows.append(table[order])
    if not rows:
        return None
    return EstimateHistory(np.array(times) - times[0], np.array(rows), quantities)


@dataclass(frozen=True)
class LoopSummary:
    """What the demo's loop measured (module docstring); any part may be None when it did not run."""

    joint_names: tuple[str, ...]
    without: Tracking
    with_feedforward: Tracking
    stiffness: EstimateHistory | None
    friction: EstimateHistory | None
    true_alpha1: np.ndarray  # [N·m/rad]; inf: rigid joints (the MuJoCo plant)
    #: per run: trajectory messages the twin received after their start (it started them late)
    late: Mapping[str, int] = field(default_factory=dict)

    def tracking_ratio(self) -> np.ndarray:
        """RMS with / without the feedforward, per joint (< 1: better with it)."""
        return self.with_feedforward.rms / self.without.rms

    def stiffness_error(self) -> np.ndarray | None:
        """Relative error of the latest k0 against the true α1, per joint."""
        if self.stiffness is None:
            return None
        return self.stiffness.latest('k0') / self.true_alpha1 - 1.0

    def relative_std(self) -> np.ndarray:
        """Latest relative standard deviation of α̂1 per joint; NaN where it never learned (or not published)."""
        if self.stiffness is None or 'relative_std' not in self.stiffness.quantities:
            return np.full(len(self.joint_names), np.nan)
        return self.stiffness.latest('relative_std')

    def converged(self) -> np.ndarray:
        """Per joint: the stiffness estimate converged (relative_std ≤ CONVERGED_RELATIVE_STD)."""
        spread = self.relative_std()
        return np.isfinite(spread) & (spread <= CONVERGED_RELATIVE_STD)

    def stiffness_status(self) -> list[str]:
        """Per joint: 'converged', 'not converged', or 'not excited' (no sample learned from)."""
        spread, converged = self.relative_std(), self.converged()
        return ['converged' if c else 'not excited' if not np.isfinite(r) else 'not converged'
                for r, c in zip(spread, converged, strict=True)]

    def friction_error(self) -> np.ndarray | None:
        """Latest friction α̂1 minus the true Coulomb scale (1), per joint, where the adaptation ran."""
        if self.friction is None:
            return None
        return self.friction.latest('alpha1') - 1.0

    def as_dict(self) -> dict:
        """The figures (plain data, for ``loop.yaml``): per joint tracking RMS [rad] and ratio, latest
        estimates, the true values and the tolerances."""
        def per_joint(values):
            return None if values is None else {n: float(v) for n, v in zip(self.joint_names, values, strict=True)}

        stiffness, friction = self.stiffness, self.friction
        return {
            'tracking': {'side': self.without.side, 'window_s': float(np.diff(self.without.window_s)[0]),
                         'rms_without_rad': per_joint(self.without.rms),
                         'rms_with_feedforward_rad': per_joint(self.with_feedforward.rms),
                         'ratio': per_joint(self.tracking_ratio()), 'late_trajectories': dict(self.late)},
            'stiffness': {'k0': per_joint(None if stiffness is None else stiffness.latest('k0')),
                          'fit_percent': per_joint(None if stiffness is None else stiffness.latest('fit')),
                          'relative_std': per_joint(self.relative_std()),
                          'status': dict(zip(self.joint_names, self.stiffness_status(), strict=True)),
                          'converged': {n: bool(c) for n, c in zip(self.joint_names, self.converged(), strict=True)},
                          'true_alpha1': per_joint(self.true_alpha1),
                          'relative_error': per_joint(self.stiffness_error()),
                          'tolerance': STIFFNESS_TOLERANCE, 'converged_relative_std': CONVERGED_RELATIVE_STD},
            'friction': {'alpha1': per_joint(None if friction is None else friction.latest('alpha1')),
                         'alpha2': per_joint(None if friction is None else friction.latest('alpha2')),
                         'true_coulomb_scale': 1.0, 'tolerance': FRICTION_TOLERANCE},
        }

    def table(self) -> str:
        side = self.without.side
        lines = [f'tracking RMS on the held-out trajectory ({side} side, last '
                 f'{self.without.window_s[1] - self.without.window_s[0]:.1f} s), twin without its own model torque; '
                 f'online estimates at the end against the twin\'s truth',
                 f'{"joint":<22}{"without [mrad]":>15}{"with ff [mrad]":>15}{"ratio":>7}'
                 f'{"k0 [kN·m/rad]":>15}{"true α1":>9}{"error %":>9}{"std %":>7}{"fit %":>8}{"friction α̂1":>13}']
        stiffness, friction = self.stiffness, self.friction
        k_error, converged, spread = self.stiffness_error(), self.converged(), self.relative_std()
        state = self.stiffness_status()
        alpha1 = [f'{a / 1e3:.2f}' if np.isfinite(a) else 'rigid' for a in self.true_alpha1]
        for j, name in enumerate(self.joint_names):
            k0 = 'n/a' if stiffness is None else 'not excited' if state[j] == 'not excited' else \
                f'{stiffness.latest("k0")[j] / 1e3:.2f}'
            error = f'{100 * k_error[j]:+.1f}' if k_error is not None and converged[j] else '—'
            std = f'{100 * spread[j]:.2f}' if np.isfinite(spread[j]) else '—'
            fit = f'{stiffness.latest("fit")[j]:.1f}' if stiffness is not None else 'n/a'
            alpha = f'{friction.latest("alpha1")[j]:.3f}' if friction is not None else 'n/a'
            lines.append(f'{name:<22}{1e3 * self.without.rms[j]:>15.3f}{1e3 * self.with_feedforward.rms[j]:>15.3f}'
                         f'{self.tracking_ratio()[j]:>7.2f}{k0:>15}{alpha1[j]:>9}{error:>9}'
                         f'{std:>7}{fit:>8}{alpha:>13}')
        lines.append(f'tolerances: k0 within ±{100 * STIFFNESS_TOLERANCE:.0f} % of the true α1 where converged (std of '
                     f'α̂1 ≤ {100 * CONVERGED_RELATIVE_STD:g} % of it; "not excited": never deflected beyond the dead '
                     f'zone while moving, no estimate), friction α̂1 within ±{FRICTION_TOLERANCE:g} of 1 (no wear in '
                     f'the twin)')
        for run, count in self.late.items():
            if count:
                lines.append(f'warning: the twin received {count} trajectory message(s) of the {run.replace("_", " ")} '
                             f'after their start and started them late: that run\'s tracking RMS counts the delay '
                             f'(a longer lead time sends them earlier)')
        return '\n'.join(lines)


def write_loop_page(folder: Path, summary: LoopSummary) -> Path:
    """``folder/loop.html`` with the tracking errors and the estimates over time; returns its path. The page and
    its plots are written whole or not at all (:func:`dynid.files.written`; other files of the folder kept)."""
    with written(folder) as staging:
        staging.mkdir()
        _write_loop_files(staging, summary)
    return Path(folder) / 'loop.html'


def _write_loop_files(folder: Path, summary: LoopSummary) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    n = len(summary.joint_names)
    figure, axes = plt.subplots(n, 1, figsize=(9, 1.6 * n), sharex=False, squeeze=False)
    for j, axis in enumerate(axes[:, 0]):
        for run, label in ((summary.without, 'without feedforward'), (summary.with_feedforward, 'with feedforward')):
            axis.plot(run.time_s - run.time_s[0], 1e3 * run.error[:, j], lw=0.7, label=label)
        axis.set_ylabel(f'{summary.joint_names[j]}\n[mrad]', fontsize=7)
    axes[0, 0].legend(fontsize=7, loc='upper right')
    axes[-1, 0].set_xlabel('time in the trajectory [s]')
    figure.suptitle(f'tracking error ({summary.without.side} side)')
    figure.tight_layout()
    figure.savefig(folder / 'loop_tracking.png', dpi=90)
    plt.close(figure)
    images = ['<img src="loop_tracking.png" alt="tracking error">']
    if summary.stiffness is not None:
        figure, axes = plt.subplots(n, 1, figsize=(9, 1.6 * n), squeeze=False)
        for j, axis in enumerate(axes[:, 0]):
            axis.plot(summary.stiffness.time_s, summary.stiffness.series('k0')[:, j] / 1e3, lw=0.8, label='k0 = α̂1')
            axis.axhline(summary.true_alpha1[j] / 1e3, color='k', ls='--', lw=0.8, label='twin α1')
            axis.set_ylim(0.0, 2.0 * summary.true_alpha1[j] / 1e3)
            axis.set_ylabel(f'{summary.joint_names[j]}\n[kN·m/rad]', fontsize=7)
        axes[0, 0].legend(fontsize=7, loc='upper right')
        axes[-1, 0].set_xlabel('time since the estimator\'s first message [s]')
        figure.suptitle('online joint stiffness (estimator_node ~/stiffness)')
        figure.tight_layout()
        figure.savefig(folder / 'loop_stiffness.png', dpi=90)
        plt.close(figure)
        images.append('<img src="loop_stiffness.png" alt="stiffness estimates">')
    page = folder / 'loop.html'
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>dynid demo: the loop</title></head><body>'
        '<h1>Estimation and feedforward on the twin</h1>'
        f'<pre>{html.escape(summary.table())}</pre>' + ''.join(images)
        + '<p><a href="index.html">identification report</a></p></body></html>', encoding='utf-8')


def coverage(dataset, rate_hz: float) -> str:
    """'N samples, none lost' or with the samples lost (stamp gaps against the twin's rate [Hz])."""
    gaps = dataset.gaps(1.0 / rate_hz)
    return f'{gaps.samples} samples, ' + (f'{gaps.lost} lost in {len(gaps.gaps)} gap(s)' if gaps.lost else 'none lost')


def number(value, spec: str) -> str:
    """A metric for the table; n/a where nothing was scored (None)."""
    return 'n/a' if value is None else format(value, spec)


def identification_table(result: IdentificationResult, settings: DemoSettings, training, holdout) -> str:
    """The demo's identification summary: the run, condition number and relative residuals, then per
    joint the identified Coulomb and viscous friction and the fit on the training and held-out
    recordings (datasets ``training``, ``holdout``)."""
    train = result.metrics['train']
    held = result.metrics['validation']
    friction = result.coulomb_viscous()  # Fc, Fv of any law that has them (the comprehensive law's too)
    lines = [
        f'dynid demo: {result.robot} {"digital twin" if settings.engine == "twin" else "in MuJoCo"} at '
        f'{settings.rate:g} Hz, {result.method.upper()}, '
        f'{result.model.get("friction", settings.friction)} friction'
        + (' (chosen by cross-validation)' if result.model.get('choice') else ''),
        f'training: optimized excitation, {training.t[-1]:.1f} s ({coverage(training, settings.rate)}); '
        f'held-out: random Fourier trajectory (seed {settings.holdout_seed}), {holdout.t[-1]:.1f} s '
        f'({coverage(holdout, settings.rate)})',
        f'{len(result.parameter_names)} parameters, cond(W) = {result.condition_number:.4g}; relative residual: '
        f'training {train["relative_residual"]:.4f}, held-out {held["relative_residual"]:.4f}',
        '',
        f'{"joint":<22}{"Fc [N·m]":>10}{"Fv [N·m·s]":>12}{"train fit %":>13}{"held-out fit %":>16}'
        f'{"held-out RMSE [N·m]":>21}',
    ]
    for name in result.joint_names:
        f = friction.get(name, {})
        lines.append(f'{name:<22}{f.get("Fc", float("nan")):>10.4g}{f.get("Fv", float("nan")):>12.4g}'
                     f'{number(train["joints"][name]["nrmse_fit_percent"], ".2f"):>13}'
                     f'{number(held["joints"][name]["nrmse_fit_percent"], ".2f"):>16}'
                     f'{number(held["joints"][name]["rmse"], ".4g"):>21}')
    return '\n'.join(lines)


def loop_summary(robot, recorded: Mapping[str, object], sent: Mapping[str, list], estimates: Mapping[str, list],
                 late: Mapping[str, int] | None = None, rigid: bool = False) -> LoopSummary:
    """Tracking of the held-out trajectory without and with feedforward_node (the same trajectory, the
    approach before it left out) and the estimator's tables, against the twin's truth.

    ``recorded``: the runs' datasets by excitation name; ``sent``: what the joint controller was sent in
    each run, [(start stamp [ns], PointTrajectory)]; ``estimates``: the estimator's ``stiffness`` and
    ``friction`` tables as :func:`estimate_history` takes them; ``late``: per run, the trajectory messages the
    twin received after their start; ``rigid``: the plant's joints are rigid (MuJoCo), the true α1 infinite.
    DemoError if a run cannot be scored.
    """
    tracking = {}
    for name, trajectories in sent.items():
        try:
            tracking[name] = tracking_error(recorded[name], trajectories, last_s=HOLDOUT_PERIOD_S)
        except InputError as error:
            raise DemoError(f'{name}: cannot score the tracking: {error}') from None
    truth = PlantParameters.defaults(robot).joints  # the twin's joints, as sim_node builds them
    alpha1 = np.full(robot.n, np.inf) if rigid else truth.alpha1
    return LoopSummary(robot.joint_names, tracking['holdout_excitation'], tracking['feedforward_excitation'],
                       estimate_history(estimates['stiffness'], robot.joint_names),
                       estimate_history(estimates['friction'], robot.joint_names), alpha1, dict(late or {}))


def conclude(settings: DemoSettings, robot, result: IdentificationResult, training_folder: Path,
             runs: Mapping[str, tuple[Path, list]], estimates: Mapping[str, list],
             say: Callable[[str], None], late: Mapping[str, int] | None = None) -> IdentificationResult:
    """The demo's end (module docstring): ``result`` validated on the held-out recording and saved with
    it as ``output/result.yaml``, the report and the loop page in ``output/report``, ``output/loop.yaml``,
    the tables printed. ``runs``: {excitation: (its recording folder, what was sent, as for
    :func:`loop_summary`)} for the held-out run and the feedforward run; ``late`` as for :func:`loop_summary`.
    Returns ``result``."""
    output = Path(settings.output)
    say('validating on the held-out recording')
    training = read_recording(training_folder, robot.joint_names, settings.namespace)
    recorded = {name: read_recording(folder, robot.joint_names, settings.namespace)
                for name, (folder, _) in runs.items()}
    holdout = recorded['holdout_excitation']
    result.metrics['validation'] = validate(result, robot, holdout)
    result.provenance.update({'demo': {'training': str(training_folder),
                                       'held_out': str(runs['holdout_excitation'][0]),
                                       'feedforward': str(runs['feedforward_excitation'][0])}})
    path = result.save(output / 'result.yaml')
    loop = loop_summary(robot, recorded, {name: sent for name, (_, sent) in runs.items()}, estimates, late,
                        rigid=settings.engine == 'mujoco')
    say('writing the report')
    report = write_report(output / 'report', result, robot, [training], [holdout])
    loop_page = write_loop_page(output / 'report', loop)
    write_text(output / 'loop.yaml', yaml.safe_dump(loop.as_dict(), sort_keys=False))
    print(identification_table(result, settings, training, holdout))
    print()
    print(loop.table())
    print(f'samples lost: feedforward run {coverage(recorded["feedforward_excitation"], settings.rate)}')
    for warning in result.warnings:
        print(f'warning: {warning}')
    print(f'wrote {path}, {report} and {loop_page}')
    return result
