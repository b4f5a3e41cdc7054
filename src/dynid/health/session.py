"""One estimation session as the health record keeps it: per joint, the settled estimates and their spread.

An estimator's α̂ moves while it converges; a session's value is what it settled to: the median of
the estimates over the last ``1 − settle_share`` of the session's time, with the robust spread
(1.4826·MAD) over the same stretch as its standard deviation. The same reduction serves a replayed
recording (:func:`session_from_history`, every described sample) and a running node
(:class:`SessionAccumulator`, snapshots taken at a low rate).

Friction: α̂1 is the factor on the identified no-load Coulomb level Fc (Madsen 2020, ch.6 eq. (24)),
so the record keeps Fc beside it; the friction trend is of α̂1·Fc, comparable across results.
"""

from __future__ import annotations

import hashlib
import math
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dynid import __version__
from dynid.health.record import JointSession, Session

SETTLE_SHARE = 0.5  # the first half of a session's time is convergence; the second half is summarized
MAD_TO_SIGMA = 1.4826


def file_sha256(path) -> str:
    """sha256 of a file's bytes ('' when there is no file)."""
    if not path:
        return ''
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def settled(time_s: np.ndarray, values: np.ndarray, settle_share: float = SETTLE_SHARE
            ) -> tuple[np.ndarray, np.ndarray]:
    """(median, robust standard deviation) per column of ``values`` (N, J) over the rows with
    time >= t0 + settle_share·(t_end − t0); NaN for a column without finite values there."""
    time_s = np.asarray(time_s, dtype=float)
    values = np.asarray(values, dtype=float)
    if time_s.size == 0:
        nan = np.full(values.shape[1:], np.nan)
        return nan, nan.copy()
    part = values[time_s >= time_s[0] + settle_share * (time_s[-1] - time_s[0])]
    with warnings.catch_warnings():  # an all-NaN column (a joint not estimated) gives NaN, said here
        warnings.simplefilter('ignore', RuntimeWarning)
        median = np.nanmedian(part, axis=0)
        spread = MAD_TO_SIGMA * np.nanmedian(np.abs(part - median), axis=0)
    return median, spread


EARLIEST_UTC = 946684800.0  # 2000-01-01: stamps before it are a simulation's clock, not a date


def recording_start_utc(dataset, path) -> tuple[float, str]:
    """(start [s since 1970 UTC], note) of a recording: its first stamp, or where the stamps are a
    simulation's clock (before 2000), the modification time of its file or folder, with a note saying so."""
    start = dataset.source.get('start_ns', 0) / 1e9 + float(dataset.t[0]) if dataset.t.size else 0.0
    if start >= EARLIEST_UTC:
        return start, ''
    modified = Path(path).stat().st_mtime
    return modified, (f'dated by the file, {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(modified))}: its '
                      'stamps are not dates (simulation time?)')


def identified_levels(result, joint_names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(Coulomb level Fc [N·m], viscous coefficient Fv [N·m·s/rad]) per joint from a result's friction
    parameters (the IDIM friction model's Fc, Fv, or fc, fv of the comprehensive law:
    :meth:`IdentificationResult.coulomb_viscous`); NaN where it has none, or without a result."""
    if result is None:
        nan = np.full(len(joint_names), np.nan)
        return nan, nan.copy()
    table = result.coulomb_viscous()
    value = lambda joint, symbol: float(table.get(joint, {}).get(symbol, math.nan))  # noqa: E731
    return (np.array([value(j, 'Fc') for j in joint_names]), np.array([value(j, 'Fv') for j in joint_names]))


def joint_sessions(joint_names: Sequence[str], *, temperature_c=None, stiffness=None, stiffness_std=None,
                   friction=None, friction_std=None, coulomb=None, viscous=None, stiffness_residual=None,
                   friction_residual=None, samples: int = 0, load_rms_nm=None) -> tuple[JointSession, ...]:
    """One :class:`JointSession` per joint from per-joint arrays (None: not estimated).

    friction, friction_std: (J, 2) α̂ = (α1, α2) and their spread. A stiffness <= 0 (α̂1 never left its
    start value: the joint did not deflect enough) is recorded as none.
    """
    n = len(joint_names)

    def column(values, k=None):
        if values is None:
            return np.full(n, np.nan)
        a = np.asarray(values, dtype=float)
        return a[:, k] if k is not None else a.reshape(n)

    k, k_std = column(stiffness), column(stiffness_std)
    learned = np.isfinite(k) & (k > 0)
    k, k_std = np.where(learned, k, np.nan), np.where(learned, k_std, np.nan)
    columns = {'temperature_c': column(temperature_c), 'stiffness': k, 'stiffness_std': k_std,
               'friction_scale': column(friction, 0), 'friction_scale_std': column(friction_std, 0),
               'viscous_excess': column(friction, 1), 'viscous_excess_std': column(friction_std, 1),
               'coulomb_nm': column(coulomb), 'viscous_nms': column(viscous),
               'stiffness_residual_rms': column(stiffness_residual),
               'friction_residual_rms': column(friction_residual), 'load_rms_nm': column(load_rms_nm)}
    return tuple(JointSession(name, **{key: float(values[j]) for key, values in columns.items()},
                              samples=int(samples)) for j, name in enumerate(joint_names))


def load_rms(tau) -> np.ndarray | None:
    """(J,) RMS of each joint's torque over a recording [N·m] (the load of the load-dependent Coulomb
    friction, Madsen 2020 ch.6 eq. (20)), or None without a torque signal."""
    if tau is None:
        return None
    tau = np.asarray(tau, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)
        return np.sqrt(np.nanmean(tau**2, axis=0))


def mounting_text(gravity) -> str:
    """The base's gravity vector [m/s²] as the record keeps it ('x y z')."""
    return ' '.join(f'{float(g):.4g}' for g in gravity)


def session_from_history(history, *, robot: str, model: str, started_utc: float, temperature_c=None,
                         result=None, result_file: str = '', source: str = 'replay', input: str = '',
                         operating_hours: float = math.nan, notes: str = '', load_rms_nm=None,
                         payload_kg: float = math.nan, mounting: str = '', effort_meaning: str = '',
                         robot_file: str = '') -> Session:
    """The record's session of a replay (:class:`dynid.estimate.replay.EstimationHistory`; module docstring).

    Args:
        history: the replay's estimates.
        robot: the robot's name in the record; model: its model's name.
        started_utc: when the recording started [s since 1970 UTC].
        temperature_c: (N, J) or (J,) joint temperatures of the recording [°C], or None.
        result, result_file: the identification result estimated against, and its file (sha256 recorded).
        source, input: what the session came from (e.g. 'replay' and the bag's path).
        load_rms_nm: (J,) RMS joint torque of the recording [N·m] (:func:`load_rms`) or None.
        payload_kg, mounting, effort_meaning, robot_file: the session's conditions (robot_file's sha256 recorded).
    """
    names = history.joint_names
    stiffness = std = friction = friction_std = None
    if history.stiffness_alpha is not None:
        stiffness, std = settled(history.time, history.stiffness_alpha[:, :, 0])
    if history.friction_alpha is not None:
        friction, friction_std = settled(history.time, history.friction_alpha)
    temperature = None
    if temperature_c is not None:
        t = np.asarray(temperature_c, dtype=float)
        temperature = t if t.ndim == 1 else np.nanmean(t, axis=0)
    coulomb, viscous = identified_levels(result, names)
    duration = float(history.time[-1] - history.time[0]) if history.time.size else math.nan
    return Session(robot, model, tuple(names), float(started_utc),
                   joint_sessions(names, temperature_c=temperature, stiffness=stiffness, stiffness_std=std,
                                  friction=friction, friction_std=friction_std, coulomb=coulomb, viscous=viscous,
                                  stiffness_residual=history.residual_rms.get('stiffness'),
                                  friction_residual=history.residual_rms.get('friction'),
                                  samples=int(history.time.size), load_rms_nm=load_rms_nm),
                   duration_s=duration, operating_hours=operating_hours, source=source, input=input,
                   result_file=str(result_file or ''), result_sha256=file_sha256(result_file),
                   software=f'dynid {__version__}', notes=notes, payload_kg=float(payload_kg), mounting=mounting,
                   effort_meaning=effort_meaning, robot_file=str(robot_file or ''),
                   robot_sha256=file_sha256(robot_file) if robot_file and Path(robot_file).is_file() else '')
