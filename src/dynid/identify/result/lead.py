"""The one rule by which ``dynid identify`` (on the model choice's folds) and ``dynid validate`` (on a recording) name
a joint that the robot file's own model predicts as well as or better than the model identified, and the words they
name it with.

Both cut the rows they judge into pieces (identify: its cross-validation folds, each scored held out; validate:
:data:`LEAD_STRETCHES` contiguous stretches of each joint's rows, or as many of two rows or more as a joint with fewer
rows has, one for a joint of one row) and sum, per joint, each model's squared error over the same pieces:

- **ahead**: the robot file's own model has the lower summed error, by any margin; **alike**: the two RMSEs within
  :data:`LEAD_MARGIN` of the identified model's, either way. Such a joint is always named, with both figures and which
  is lower by how much: a lead a user can read off the table is never left unsaid, and two models alike are said to
  predict alike, not one better (the identification gained nothing that counts over the file there).
- **clearly ahead** (a warning): lower on every piece (two models alike do that by chance 1 in 2^K; at least
  :data:`LEAD_PIECES_MIN` pieces) and by at least :data:`LEAD_MARGIN` of the identified model's RMSE over all of
  them. A lead that one piece reverses, or that too few pieces show, is stated with how many pieces it holds on: what
  another stretch of motion may reverse is not claimed as a fault of the model.

The RMSE ratio of identify's folds is √(Σ theirs / Σ mine) of the folds' held-out ‖e_j‖²/‖y_j‖² (the same rows' energy
on both sides).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Contiguous stretches of a recording's rows per joint on which validate judges a lead.
LEAD_STRETCHES = 5
#: Pieces scored by both models a clear lead needs (with two, lower on both happens by chance 1 in 4).
LEAD_PIECES_MIN = 3
#: A lead under this fraction of the identified model's RMSE is "alike"; at least this, on every piece, a warning.
LEAD_MARGIN = 0.05


@dataclass(frozen=True)
class Lead:
    """The robot file's own model against the identified one on one joint: its summed error over the pieces
    (``theirs``), the identified model's (``mine``), the pieces scored by both and those on which it is lower."""

    theirs: float
    mine: float
    pieces: int
    lower_on: int

    @property
    def ahead(self) -> bool:
        return self.pieces > 0 and self.theirs < self.mine

    @property
    def lower_percent(self) -> float:
        """How much lower the robot file's RMSE is than the identified model's [%] (negative: higher)."""
        return 100.0 * (1.0 - np.sqrt(self.theirs / self.mine)) if self.mine > 0 else 0.0

    @property
    def alike(self) -> bool:
        """Within :data:`LEAD_MARGIN` of each other's RMSE, either way."""
        return self.pieces > 0 and self.mine > 0 and abs(self.lower_percent) < 100.0 * LEAD_MARGIN

    @property
    def named(self) -> bool:
        """Ahead or alike: a joint the identification did not predict clearly better than the robot file."""
        return self.ahead or self.alike

    @property
    def clear(self) -> bool:
        """Clearly ahead (module docstring): a claim, worth a warning."""
        return self.ahead and not self.alike and self.lower_on == self.pieces and self.pieces >= LEAD_PIECES_MIN

    def line(self, joint: str, where: str, theirs: float, mine: float, figure: str = 'RMSE', unit: str = ' N·m'
             ) -> str:
        """The sentence naming ``joint`` (``where``: the rows judged, 'this recording'; ``theirs``, ``mine``: the
        robot file's and the identified model's ``figure`` as the caller states them)."""
        own = 'the robot file\'s own model'
        figures = f'{figure} {theirs:.4g}{unit} the robot file\'s against {mine:.4g}{unit} the model identified\'s'
        if self.alike:
            lower = 'the robot file\'s' if self.ahead else 'the model identified\'s'
            return (f'{joint}: the model identified and {own} predict {where} alike ({figures}: {lower} RMSE '
                    f'{abs(self.lower_percent):.2g} % lower, under {100 * LEAD_MARGIN:g} %)')
        if self.clear:
            return (f'{joint}: {own} predicts {where} better than the model identified ({figures}, '
                    f'its RMSE {self.lower_percent:.2g} % lower, and lower on each of {self.pieces} '
                    f'{_pieces(where, self.pieces)})')
        return (f'{joint}: {own} predicts {where} with an RMSE {self.lower_percent:.2g} % lower than the model '
                f'identified\'s ({figures}), but {self.spread(where)}')

    def spread(self, where: str) -> str:
        """Why a lead by :data:`LEAD_MARGIN` or more is not claimed: the pieces it holds on."""
        if self.lower_on == self.pieces:
            return f'on {self.pieces} {_pieces(where, self.pieces)} only: too few to claim a lead'
        return f'lower on {self.lower_on} of {self.pieces} {_pieces(where, self.pieces)} only: a lead another ' \
            f'stretch of motion may reverse'



def summary_line(leads: dict[str, Lead], where: str, figure: str) -> str:
    """One line naming every joint of ``leads`` (joint → :class:`Lead`, none clearly ahead: those are warnings) beside
    the robot file's own model, with both ``figure`` s and how its RMSE compares."""
    def part(joint: str, lead: Lead) -> str:
        compared = f'{abs(lead.lower_percent):.2g} % {"lower" if lead.ahead else "higher"}'
        on = '' if lead.alike else f', {lead.spread(where).split(":")[0]}'
        return f'{joint} ({lead.theirs:.4g} against {lead.mine:.4g}: its RMSE {compared}{on})'
    alike = [part(joint, lead) for joint, lead in leads.items() if lead.alike]
    ahead = [part(joint, lead) for joint, lead in leads.items() if not lead.alike]
    said = ([f'alike (within {100 * LEAD_MARGIN:g} %) on ' + ', '.join(alike)] if alike else []) + \
        (['ahead on ' + ', '.join(ahead)] if ahead else [])
    return f'the robot file\'s own model on {where} ({figure}, its against the model identified\'s): ' + \
        '; '.join(said)


def _pieces(where: str, count: int) -> str:
    if 'fold' in where:
        return 'held-out folds' if count != 1 else 'held-out fold'
    return 'stretches of it' if count != 1 else 'stretch of it'


def judge(mine: np.ndarray, theirs: np.ndarray) -> list[Lead]:
    """Per joint the :class:`Lead` of ``theirs`` over ``mine`` ((pieces, n) errors of the two models on the same
    pieces; NaN where a piece does not score a joint)."""
    mine, theirs = np.asarray(mine, float), np.asarray(theirs, float)
    out = []
    for j in range(mine.shape[1]):
        both = np.isfinite(mine[:, j]) & np.isfinite(theirs[:, j])
        a, b = mine[both, j], theirs[both, j]
        out.append(Lead(float(b.sum()), float(a.sum()), int(both.sum()), int(np.sum(b < a))))
    return out


def stretch_errors(measured: np.ndarray, predicted: np.ndarray, joints: np.ndarray, n: int,
                   stretches: int = LEAD_STRETCHES) -> np.ndarray:
    """(stretches, n) the squared error of contiguous stretches of each joint's rows: ``stretches`` of them, or, for a
    joint with fewer than two rows a stretch, as many of two rows or more as it has (one for a single row: a lead the
    rows show is judged however few they are); NaN past a joint's stretches and for a joint without rows."""
    out = np.full((stretches, n), np.nan)
    for j in range(n):
        rows = np.flatnonzero(joints == j)
        count = min(stretches, max(rows.size // 2, 1)) if rows.size else 0
        if count:
            e = (measured[rows] - predicted[rows]) ** 2
            out[:count, j] = [float(np.sum(e[part])) for part in np.array_split(np.arange(rows.size), count)]
    return out
