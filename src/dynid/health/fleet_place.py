"""A robot's place in its fleet, as its health record keeps it: its identified parameters against the other robots'.

Whoever has the fleet's identification results at hand (``dynid batch --db``, ``dynid health --fleet-report
--fleet-results``) judges each robot against the others (:mod:`dynid.fleet.standing`) and stores the judgement in the
record (the ``standings`` table, schema version 5) as a JSON document::

    {"model": "ur5e", "robots": 32, "result_file": ..., "false_flag_rate": 0.01, "judged": 87,
     "apart": [{"joint", "parameter", "kind", "value", "centre", "spread", "others", "z", "z_own", "threshold",
                "relative_percent", "text"}, ...]}

``robots`` counts the fleet compared with (this robot included), ``judged`` the parameters judged, ``apart`` the ones
standing apart, farthest first, each with the sentence that names it. The judgement is dated (``judged_utc``) and
names the result it judged (``result_sha256``): it does not wait for the robot's own trend, and a newer result of the
robot is judged when the fleet's results are next at hand.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class FleetPlace:
    """One robot's stored standing (module docstring): when it was judged, the result judged and the document."""

    robot: str
    judged_utc: float
    result_sha256: str
    document: dict

    @property
    def apart(self) -> list[dict]:
        """The parameters standing apart from the fleet, farthest first (module docstring)."""
        return list(self.document.get('apart', []))

    @property
    def state(self) -> str:
        """'warn' when a parameter stands apart, else 'ok'."""
        return 'warn' if self.apart else 'ok'

    @property
    def compared(self) -> str:
        """What was compared, in words."""
        d = self.document
        others = int(d.get('robots', 0)) - 1
        rate = float(d.get('false_flag_rate', math.nan))
        return (f'its identification result (sha256 {self.result_sha256[:12]}) against those of the {others} other '
                f'{d.get("model", "")} robots, on {time.strftime("%Y-%m-%d", time.gmtime(self.judged_utc))}: '
                f'{d.get("judged", 0)} parameters judged, each in units of the others\' spread and of that spread '
                f'with its own σ; at most {100 * rate:g} healthy robots in 100 have any parameter named')

    @property
    def text(self) -> str:
        """The judgement in one sentence."""
        apart = self.apart
        if not apart:
            return f'stands with its fleet: no parameter apart ({self.compared})'
        named = '; '.join(entry['text'] for entry in apart)
        count = f'{len(apart)} parameter{"s" if len(apart) > 1 else ""}'
        return f'stands apart from its fleet in {count}: {named} ({self.compared})'

    def to_dict(self) -> dict:
        return {'state': self.state, 'judged_utc': self.judged_utc, 'result_sha256': self.result_sha256,
                'text': self.text, **self.document}

    def encode(self) -> str:
        return json.dumps(self.document)

    @classmethod
    def decode(cls, robot: str, judged_utc: float, result_sha256: str, text: str) -> FleetPlace | None:
        """The stored standing; None when its document is not one (damaged: judged again when the fleet's results
        are next at hand)."""
        try:
            document = json.loads(text)
        except (TypeError, ValueError, RecursionError):
            return None
        if not isinstance(document, dict) or not isinstance(document.get('apart', []), list) or not all(
                isinstance(e, dict) and isinstance(e.get('text'), str) for e in document.get('apart', [])):
            return None
        return cls(robot, float(judged_utc), str(result_sha256), document)
