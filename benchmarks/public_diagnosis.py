"""What dynid says about the public datasets, against what their authors say (issue 31, the public part).

``public_datasets.py`` identifies each dataset with the defaults (and only what reading it needs) and writes each
result to ``FOLDER/<entry>.yaml``. This module reads every warning of those results and counts the ones the data's
authors contradict: the diagnosis's findings about the effort's meaning, sign, time or units where the authors
document another. Findings about the robot file (a link, a payload, a drive gain, another arm's file) are true or
false of the file, not of the log: the authors do not judge them, and they are listed as such. Other warnings
(poorly excited parameters, held parameters, the robot file's links left out of the prior) are claims about the
identification, not about the data's meaning.

What each dataset's authors document (:data:`AUTHORS`):

- unisa-acg UR10: Petrone et al. 2025 model the logged effort as the drives' torque K_τ·i, friction included
  (their friction sigmoid is part of the model of the effort): a motor-side torque.
- unisa-acg Panda: Franka's link-side joint torque sensors (Gaz et al. 2019 fit their model to them).
- figaroh TIAGo: motor currents, turned into torque by their gear ratios and motor constants.
- dynamic_calibration UR10e: motor currents, turned into torque by the drive gains in ``main.m``.
- FloBaRoID KUKA LWR4+: the joint torque sensors.

The logs' signs are the robot files' in every case (each authors' own identification uses the file's sign).

The datasets ``public_diagnosis`` does not judge from result files are documented too, for :func:`false_claims`:
Gaz et al. 2019's Panda log and the LBR Med 7's hold their joint torque sensors' readings, the TX40's motor torques
times the gear ratios (FIGAROH's model of them: a drive torque, friction included), and the twin of
``public_twins.py`` logs joint torque.

:func:`false_claims` (issue 71): a scale, unit or gravity claim of identify or validate on these logs, read in their
authors' units, is false by construction (:data:`SCALE_CLAIMS`): the drive-gain or torque-sensor scale of a joint,
a robot file "not at the recording's scale", a gravity torque "an order of magnitude off"; so is a meaning the
authors contradict.
"""

from __future__ import annotations

import re
from pathlib import Path

#: entry: (meanings the authors document, whether the authors' sign is the robot file's)
AUTHORS = {
    'unisa_ur10': (('motor torque',), True),
    'unisa_panda': (('joint torque',), True),
    'figaroh_tiago': (('motor current',), True),
    'dyncal_ur10e': (('motor current',), True),
    'flobaroid_kuka': (('joint torque',), True),
}
#: the meanings of the logs judged by their warnings only (module docstring)
DOCUMENTED = {**{entry: meanings for entry, (meanings, _) in AUTHORS.items()}, 'gaz_panda': ('joint torque',),
              'lbr_med7': ('joint torque',), 'figaroh_plus_tx40': ('motor torque',), 'twin': ('joint torque',)}
#: the words of a scale, unit or gravity claim: a joint's drive gain or torque sensor scale and a robot file not at
#: the recording's scale (dynid.diagnosis.diagnosis), a gravity torque off by an order of magnitude
#: (dynid.identify.steps.plausibility)
SCALE_CLAIMS = (re.compile(r"× the robot file's (?:torque )?while the other joints agree"),
                re.compile(r"is not at the robot file's scale"),
                re.compile(r"the identified gravity torque is .*× the robot file's"))
#: the meaning a 'meaning' finding claims, by the words of its text (dynid.diagnosis.diagnosis)
CLAIMS = (('looks like motor current', 'motor current'), ('looks like joint torque', 'joint torque'),
          ('holds no gravity torque', 'torque estimate'), ("carries the drive's friction", 'motor torque'))
DATA_KINDS = ('meaning', 'sign', 'time', 'positions')
FILE_KINDS = ('link', 'payload', 'drive', 'robot_file')


def judged(entry: str, result_path: Path) -> dict:
    """The warnings of one result and the findings its authors contradict."""
    from dynid.identify.result.result import IdentificationResult

    result = IdentificationResult.load(result_path)
    meanings, signs_kept = AUTHORS[entry]
    findings = (result.diagnosis_section or {}).get('findings') or []
    contradicted, about_file = [], []
    for finding in findings:
        kind, text = finding.get('kind'), finding.get('text', '')
        if kind == 'meaning':
            claim = next((meaning for words, meaning in CLAIMS if words in text), 'another meaning')
            if claim not in meanings:
                contradicted.append(f'meaning: {claim} ({", ".join(finding.get("joints") or [])})')
        elif kind == 'sign' and signs_kept:
            contradicted.append(f'sign: {", ".join(finding.get("joints") or [])} flipped')
        elif kind in ('time', 'positions'):  # the authors log SI units on their own stamps
            contradicted.append(f'{kind}: {text[:120]}')
        elif kind in FILE_KINDS:
            about_file.append(f'{kind}: {", ".join(finding.get("joints") or [])}')
    return {'warnings': len(result.warnings), 'findings': [f.get('kind') for f in findings],
            'contradicted_by_authors': contradicted, 'about_the_robot_file': about_file}


def false_claims(entry: str, lines) -> list[str]:
    """The lines (identify's and validate's warnings) of a log of ``entry`` (:data:`DOCUMENTED`) that claim a scale,
    a unit or a gravity scale, or a meaning its authors do not document (module docstring), each once."""
    meanings = DOCUMENTED[entry]
    out = []
    for line in lines:
        claimed = next((meaning for words, meaning in CLAIMS if words in line), None)
        if (claimed is not None and claimed not in meanings) or any(p.search(line) for p in SCALE_CLAIMS):
            if line not in out:
                out.append(line)
    return out


def words(rows: dict) -> dict[str, list]:
    """Of the rows of ``bench_public.py`` (or its motions): each advice that made the pooled held-out error worse
    when followed, or was refused when followed as written ([row, remedy, before, after or None]), and each false
    claim (:func:`false_claims`) of the defaults' run and of each advice's ([row, 'defaults' or the remedy, line])."""
    worse, claims = [], []
    for key, row in rows.items():
        claims += [[key, 'defaults', line] for line in row.get('claims', ())]
        for entry in row.get('advice', ()):
            claims += [[key, entry['remedy'], line] for line in entry.get('claims', ())]
            before, after = entry.get('pooled_before'), entry.get('pooled_after')
            if entry.get('exit') != 0 or (before is not None and after is not None and after > before):
                worse.append([key, entry['remedy'], before, after])
    return {'advice_worse_when_followed': worse, 'false_claims_clean': claims}


def judge_all(folder: Path, public: dict) -> dict:
    """{entry: judged(...)} of every entry of ``public`` (public_datasets.run) that wrote a result in ``folder``."""
    out = {}
    for entry in public:
        path = folder / f'{entry}.yaml'
        if entry in AUTHORS and path.is_file():
            out[entry] = judged(entry, path)
    return out
