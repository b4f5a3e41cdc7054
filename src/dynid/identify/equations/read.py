"""The read step of an identification: the recordings as the equations take them.

Each recording's joints put in the robot's order (a recording without one of them is refused), its lost samples
bridged over short gaps and the recording split at the others into contiguous pieces
(:mod:`dynid.identify.equations.bridging`); pieces of one recording share its payload parameters.
:class:`RecordingGaps` counts, per recording as given, what was lost, bridged and used (the prepare step,
:mod:`dynid.identify.equations.prepare`, fills in the pieces it could use).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynid.errors import InputError
from dynid.identify.equations.bridging import bridge_gaps
from dynid.identify.equations.request import RecordingInput
from dynid.io.gaps import GapSummary, nominal_period
from dynid.model.robot import RobotModel
from dynid.signal.preprocess import FilterSettings

#: Below this share of a recording used, its line is a loud warning.
USED_WARNING_FRACTION = 0.9


@dataclass
class RecordingGaps:
    """One recording as given: its lost samples (``summary``), the gaps bridged before filtering
    (:mod:`dynid.identify.equations.bridging`), how many of the contiguous pieces left enter the problem (``used``;
    the others are too short for the filters and the decimation) and how much of it they hold."""

    name: str
    summary: GapSummary
    source: dict = field(default_factory=dict)
    payload_mass_known: float | None = None
    payload_known: float | None = None
    used: int = 0
    longest_piece: int = 0  # samples of the longest piece found too short
    needed: int = 0         # samples a piece needs
    pieces: int = 1         # contiguous pieces after bridging
    bridged_gaps: int = 0
    bridged_samples: int = 0
    bridge_s: float = 0.0
    used_samples: int = 0   # samples (filled ones included) in the pieces used
    used_recorded: int = 0  # of those, the recording's own samples (the others filled in over its gaps)

    @property
    def skipped(self) -> int:
        return self.pieces - self.used

    @property
    def lost_any(self) -> bool:
        """Whether any of the recording's span is not used (a gap kept as a split, a piece skipped): only then
        is its line a warning; gaps that were all bridged lose nothing."""
        return self.used_samples < self.summary.expected

    @property
    def used_fraction(self) -> float:
        """The share of the recording's span (its samples and those lost in its gaps) in the pieces used."""
        return self.used_samples / max(1, self.summary.expected)

    def line(self, loud: bool = True) -> str:
        """One line for people, e.g. 'rec: used 99.1 % of the recording (5645 of its 5700 samples and 310
        filled in over its gaps); 310 of 6010 samples lost (5.2 %) in 290 gaps, longest 9 ms: 289 bridged (up to
        20 ms), 1 kept as a split; used 2 of 2 contiguous pieces'; 'rec: only 62 % of the recording was
        used (…; less than 90 %)' when less than 90 % was used (and ``loud``). The samples counted are the
        recording's own (as its file holds them) and, apart, those filled in over bridged gaps."""
        percent = 100.0 * self.used_fraction
        filled = self.used_samples - self.used_recorded
        counts = f'{self.used_recorded} of its {self.summary.samples} samples' + (
            f' and {filled} filled in over its gaps' if filled > 0 else '')
        text = f'{self.name}: used {percent:.4g} % of the recording ({counts})'
        if loud and percent < 100.0 * USED_WARNING_FRACTION:
            text = (f'{self.name}: only {percent:.3g} % of the recording was used ({counts}; less than '
                    f'{100 * USED_WARNING_FRACTION:g} %)')
        if self.summary.gaps:
            lost = self.summary.line(self.name)[len(self.name) + 2:]
            split = len(self.summary.gaps) - self.bridged_gaps
            text += (f'; {lost}: {self.bridged_gaps} bridged (up to {1e3 * self.bridge_s:.3g} ms), {split} kept as '
                     f'split{"s" if split != 1 else ""}')
        if self.pieces > 1:
            text += f'; used {self.used} of {self.pieces} contiguous pieces'
            text += f' ({self.skipped} too short for the filters, skipped)' if self.skipped else ''
        return text

    def to_dict(self) -> dict:
        """The gap summary, the gaps bridged, the pieces used and the share used, for result files."""
        return {**self.summary.to_dict(), 'bridged_gaps': self.bridged_gaps, 'bridged_samples': self.bridged_samples,
                'bridge_s': self.bridge_s, 'pieces': self.pieces, 'pieces_used': self.used,
                'pieces_skipped': self.skipped, 'used_samples': self.used_samples,
                'used_recorded': self.used_recorded, 'lost_any': self.lost_any,
                'used_fraction': self.used_fraction, 'summary': self.line()}


@dataclass(frozen=True)
class Reading:
    """The recordings as contiguous pieces in the robot's joint order (``pieces``), each piece's recording
    (``origins``: an index into the recordings as given), the gaps of each recording as given (``gaps``, nothing used
    yet) and each recording's own stamps (``stamps``: bridging adds samples, which are not the recording's)."""

    pieces: tuple[RecordingInput, ...]
    origins: tuple[int, ...]
    gaps: tuple[RecordingGaps, ...]
    stamps: tuple[np.ndarray, ...]


def read(robot: RobotModel, recordings: list[RecordingInput], settings: FilterSettings) -> Reading:
    """The recordings bridged over their short gaps and split into their contiguous pieces (module docstring)."""
    if not recordings:
        raise InputError('identification needs at least one recording')
    pieces, origins, gaps, stamps = [], [], [], []
    for i, r in enumerate(_checked_joints(robot, recordings)):
        dataset = r.dataset.reordered(robot.joint_names) if r.dataset.joint_names != robot.joint_names else r.dataset
        name = r.name or dataset.source.get('bag') or f'recording {i + 1}'
        period = nominal_period(np.diff(dataset.t))
        bridged = bridge_gaps(dataset, settings.validated(1.0 / period).bridge_s, period)
        stamps.append(dataset.t)
        gaps.append(RecordingGaps(name, bridged.summary, dataset.source, r.payload_mass,
                                  None if r.payload is None else float(r.payload.mass), pieces=bridged.split_gaps + 1,
                                  bridged_gaps=bridged.bridged_gaps, bridged_samples=bridged.bridged_samples,
                                  bridge_s=bridged.limit_s))
        for k, (a, b) in enumerate(bridged.pieces):
            pieces.append(RecordingInput(bridged.dataset.sliced(a, b), r.payload, r.payload_mass,
                                         name if len(bridged.pieces) == 1 else f'{name} part {k + 1}'))
            origins.append(i)
    return Reading(tuple(pieces), tuple(origins), tuple(gaps), tuple(stamps))


def _checked_joints(robot: RobotModel, recordings: list[RecordingInput]) -> list[RecordingInput]:
    for r in recordings:
        missing = [j for j in robot.joint_names if j not in r.dataset.joint_names]
        if missing:
            raise InputError(f'{r.name or r.dataset.source.get("bag", "recording")}: joints {missing} of robot '
                             f'{robot.name!r} are not in the recording ({list(r.dataset.joint_names)})')
    return recordings
