"""A log with several torque sources (a joint torque sensor and motor currents read through the drive gains): the
channels that carry nothing (:mod:`dynid.diagnosis.channels`) and which source predicts motion it did not see.

- A dead channel of the source the identification reads is refused, naming the joint and the ways out that work as
  written: leaving its equations out (``exclude_joints``), or the other source where its channel carries torque;
  a dead channel of a source it does not read is a warning.
- Where the source was left to dynid (``auto``) and both are there and live, each is identified with one fixed model
  (:data:`COMPARED_MODEL`: WLS, Coulomb + viscous friction; the rest as given, so that the sources and not the model
  choice are compared, at a fifth of the choice's cost) on the first part of each recording's time and scored on
  the last :data:`~dynid.identify.job.ways_out.HOLDOUT_SHARE`
  (:func:`dynid.identify.job.ways_out.held_out_error`: ‖y − ŷ‖/‖y‖, each source against its own torque); the one
  with the smaller error is named. The source identification reads is not changed: ``torque_source`` changes it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from dynid.diagnosis.channels import SOURCE_WORDS, DeadChannel, dead_channels
from dynid.diagnosis.effort import Recording
from dynid.errors import InputError
from dynid.identify.equations.prepare import read_torque_source
from dynid.identify.job.ways_out import HOLDOUT_SHARE, held_out_error
from dynid.identify.registry import identification_method

#: the model (friction law, method) each source is identified with for the comparison
COMPARED_MODEL = ('viscous_coulomb', 'wls')
#: the two sources a log can hold side by side (motor_torque reads the same channel as joint_torque)
SOURCES = ('joint_torque', 'current')


def source_read(robot, recordings: Sequence, identification, drives) -> str:
    """The torque source the identification reads (:func:`dynid.identify.equations.prepare.read_torque_source`)."""
    method = identification.options.method
    gains = drives is not None or robot.drives is not None or (
        method != 'auto' and identification_method(method).drive_gains)
    return read_torque_source(recordings, identification.spec.torque_source, gains)


def usable_sources(robot, recordings: Sequence, drives) -> tuple[str, ...]:
    """The sources every recording holds: the joint torque, and the currents where there are drive gains."""
    has = {'joint_torque': all(r.dataset.tau is not None for r in recordings),
           'current': all(r.dataset.current is not None for r in recordings)
           and (drives is not None or robot.drives is not None)}
    return tuple(source for source in SOURCES if has[source])


def check_channels(robot, recordings: Sequence, identification, drives) -> tuple[list[str], list[DeadChannel]]:
    """(warnings, dead channels) of the recordings' torque channels (module docstring); InputError naming the dead
    channels of the source the identification reads, with the ways out."""
    skip = identification.spec.exclude_joints or ()
    dead = dead_channels([Recording(r.dataset, r.payload, r.name, r.payload_mass) for r in recordings], robot,
                         drives, skip)
    read = source_read(robot, recordings, identification, drives)
    read = 'joint_torque' if read == 'motor_torque' else read  # the same channel, read with the rotor's inertia
    refused = [channel for channel in dead if channel.source == read]
    if refused:
        joints = [channel.joint for channel in refused]
        others = [s for s in usable_sources(robot, recordings, drives)
                  if s != read and not any(c.source == s and c.joint in joints for c in dead)]
        ways = [f'leave {"its" if len(joints) == 1 else "their"} equations out ({{exclude_joints}} {",".join(joints)})']
        ways += [f'read the {SOURCE_WORDS[s]}s instead, which carry torque there ({{torque_source}} {s})'
                 for s in others]
        raise InputError('; '.join(channel.line() for channel in refused) + ': ' + ', or '.join(ways),
                         fields=('exclude_joints', 'torque_source'))
    return [f'{channel.line()} (the identification reads the {SOURCE_WORDS[read]}s)' for channel in dead], dead


def compare_sources(robot, recordings: Sequence, identification, drives, read: str,
                    progress: Callable[[str], None]) -> dict | None:
    """Which source predicts the held-out rows better (module docstring): {'scores': {source: error or None},
    'read': the source identified from, 'better': the source with the smaller error, or None where one is not
    scored}, or None where there is nothing to compare (the source given, fewer than two sources)."""
    sources = usable_sources(robot, recordings, drives)
    if identification.spec.torque_source != 'auto' or len(sources) < 2:
        return None
    scores = {}
    for source in sources:
        progress(f'scoring the torque source {source} on the last {HOLDOUT_SHARE:.0%} of each recording')
        variant = compared_identification(identification, source)
        scores[source] = held_out_error(robot, recordings, variant, drives)
    scored = all(score is not None for score in scores.values())
    return {'scores': scores, 'read': read, 'better': min(scores, key=scores.get) if scored else None}


def compared_identification(identification, source: str):
    """``identification`` reading ``source``, with :data:`COMPARED_MODEL` (module docstring)."""
    law, method = COMPARED_MODEL
    return dataclasses.replace(
        identification, spec=dataclasses.replace(identification.spec, torque_source=source, friction=law),
        options=identification.options.for_method(method))


def comparison_line(comparison: dict, spelling: dict) -> str:
    """The sentence of :func:`compare_sources`' ``comparison``: 'of the torque sources, joint_torque predicts the last
    30 % of each recording better (rel. 0.110 against current's 0.129; each identified on the rest): --torque
    joint_torque'; ``spelling``: how the front end writes ``torque_source`` ('--torque {}')."""
    scores, best = comparison['scores'], comparison['better']
    share = f'the last {100 * HOLDOUT_SHARE:g} % of each recording'
    if best is None:
        return (f'the torque sources ({", ".join(scores)}) not compared: the recordings are too short to identify '
                f'on the first part and score {share}')
    [other] = [source for source in scores if source != best]
    told = spelling.get('torque_source', 'torque_source {}').format(best)
    advice = f': {told}' if best != comparison['read'] else '; identified from it'
    return (f'of the torque sources, {best} predicts {share} better (rel. {scores[best]:.3g} against {other}\'s '
            f'{scores[other]:.3g}; each identified on the rest, WLS with Coulomb + viscous friction){advice}')
