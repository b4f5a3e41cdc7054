"""Bad inputs to the contact monitor's calibration on ``bench_contact.py``'s own data, each refused or flagged by name
(the checks of :mod:`dynid.contact.calibration` and :mod:`dynid.contact.monitor`; docs/methods/contact.md, "What
calibration checks of what it is given").

On the UR10e's logs (:func:`contact_real.ur10e_logs`):

- **contacts**: the free runs of one fold (:func:`contact_real.halves`) with a push recording among them
  (``collision/ur-20_01_22-push_pose_{1,2}``): refused, the push recording named;
- **short**: one free run (``validation_data/ur-20_01_17-p1``, about 10 s): flagged short (``too short``);
- **another robot's**: the calibration file of all free runs loaded for the UR5e: refused (``calibrates robot``);
- **another result**: the same file loaded with another result file (the UR5e twin's true model): refused
  (``calibrated with another result``);
- **a result of another arm**: the observer given the UR5e twin's result on a UR10e run: refused (the robot named);
- **torques beyond limits**: the currents logged in mA read as A (×1000): refused (``beyond the joints' effort
  limits``).

On each simulated plant (the first contact-free run and the first run with contacts of part 1): **contacts** (the
free run with the contact run, refused naming ``contacts 0``) and **short** (the free run alone, flagged).
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import contact_real
from benchmarks import contact_sim as sim
from dynid.contact.monitor import ContactMonitor, load_calibration, save_calibration
from dynid.errors import InputError
from dynid.model import load_robot

SHORT_RUN = 'ur-20_01_17-p1'


def attempt(case: str, expected: str, call) -> dict:
    """Run ``call`` (it raises InputError to refuse, or returns a text that flags); the case is caught when the
    refusal's or the flag's text holds ``expected`` (the name it must give)."""
    try:
        said, how = call() or '', 'flagged'
    except InputError as error:
        said, how = str(error), 'refused'
    caught = bool(said) and expected in said
    return {'case': case, 'caught': caught, 'how': how if said else 'accepted', 'expected': expected,
            'said': said[:300]}


def _quiet(call, *args, **kwargs) -> str:
    """``call`` for what it raises: nothing flagged where it returns."""
    call(*args, **kwargs)
    return ''


def _calibrate(monitor, runs: dict) -> str:
    """Calibrate on ``runs`` (name → signals); the short flag's text ('' if none)."""
    return monitor.calibrate([{**signals, 'what': name} for name, signals in runs.items()]).shortness()


def ur10e_cases(root: Path, folder: Path, settings) -> list[dict]:
    """The UR10e's cases (module docstring)."""
    robot, result, free, pushes, rate = contact_real.ur10e_logs(root, folder)
    result_file = folder / 'ur10e_result.yaml'
    fold = contact_real.halves(list(free), 0)[0]

    def monitor(of=result):
        return ContactMonitor(of, robot, settings, rate, wrench=False)

    rows = [attempt(f'contacts ({push})', push, lambda p=push: _calibrate(
        monitor(), {**{n: free[n] for n in fold}, p: pushes[p]})) for push in sorted(pushes)]
    rows.append(attempt('short', 'too short', lambda: _calibrate(monitor(), {SHORT_RUN: free[SHORT_RUN]})))
    whole = monitor()
    calibration = whole.calibrate([free[n] for n in sorted(free)])
    saved = folder / 'inputs_ur10e_calibration.yaml'
    save_calibration(calibration, saved, robot, settings, str(result_file), 'current')
    ur5e = load_robot('ur5e')
    rows.append(attempt('another robot', "calibrates robot 'ur10e'", lambda: _quiet(load_calibration, saved, ur5e)))
    other = sim.true_model_result(ur5e, 'current')
    other_file = folder / 'inputs_ur5e_result.yaml'
    other.save(other_file)
    rows.append(attempt('another result', 'calibrated with another result',
                        lambda: _quiet(load_calibration, saved, robot, str(other_file))))
    signals = free[SHORT_RUN]
    rows.append(attempt('a result of another arm', "'ur5e'", lambda: _quiet(monitor(other).run, **signals)))
    rows.append(attempt('torques beyond limits (mA read as A)', "beyond the joints' effort limits",
                        lambda: _quiet(monitor().run, **{**signals, 'current': 1000.0 * signals['current']})))
    return rows


def sim_cases(engine: str, monitor_of, free, contact) -> list[dict]:
    """A simulated plant's cases (module docstring): ``monitor_of(payload)`` a fresh monitor, ``free`` and ``contact``
    part 1's runs (:class:`contact_sim.Run`)."""
    def runs(*chosen):
        return {run.name: {**run.signals(), 'reference_velocity': run.reference.get('dq'),
                           'reference_position': run.reference.get('q')} for run in chosen}

    return [attempt(f'{engine}: contacts', contact.name, lambda: _calibrate(monitor_of(free.payload),
                                                                           runs(free, contact))),
            attempt(f'{engine}: short', 'too short', lambda: _calibrate(monitor_of(free.payload), runs(free)))]


def count(rows: list[dict]) -> str:
    """'k_of_n': the cases caught of those tried."""
    return f'{sum(row["caught"] for row in rows)}_of_{len(rows)}'
