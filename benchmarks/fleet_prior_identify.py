"""Identification as ``dynid identify`` runs it with the defaults, for ``bench_fleet_prior.py``: one recording, the
result saved as a file, and a fleet's results brought to one friction law where the defaults chose several."""

from __future__ import annotations

import collections
from pathlib import Path

from dynid.fleet.prior import SHARED_MODEL_KEYS
from dynid.identify.equations.request import IdentifyOptions, ModelSpec, RecordingInput
from dynid.identify.job.workflow import Identification, identify_and_save, physical_settings
from dynid.identify.result.result import IdentificationResult
from dynid.identify.solve.prior_source import prior_source


def identified(robot, dataset, name: str, output: Path, prior: str = '', friction: str = 'auto',
               robot_spec: str = 'ur5e', drives_file: str | None = None,
               prior_std: float | None = None) -> IdentificationResult:
    """``dataset`` identified as ``dynid identify`` does with the defaults, the result saved to ``output``;
    ``prior``: ``--prior FILE``, ``friction``: ``--friction``, ``drives_file``: ``--drives``, ``prior_std``:
    ``--prior-std`` (None: cross-validated)."""
    source = prior_source(prior, robot) if prior else None
    identification = Identification(ModelSpec(friction=friction), drives_file=drives_file, options=IdentifyOptions(
        method='auto', physical=physical_settings(prior_relative_std=prior_std, prior_source=source)))
    result, _ = identify_and_save(robot, [RecordingInput(dataset, name=name)], identification, output, robot_spec)
    return result


def commissioned(robot, free, loaded, payload_kg: float, name: str, output: Path, friction: str = 'auto',
                 robot_spec: str = 'ur5e') -> IdentificationResult:
    """A commissioning result: ``free`` and ``loaded`` (the same motion carrying a payload of known mass ``payload_kg``)
    identified together with IDIM-TLS, the drive gains with the parameters (``dynid identify FREE LOADED
    --payload-mass 0,KG --method tls``), the result saved to ``output``."""
    identification = Identification(ModelSpec(friction=friction), options=IdentifyOptions(
        method='tls', physical=physical_settings()))
    recordings = [RecordingInput(free, name=f'{name} free'), RecordingInput(loaded, payload_mass=payload_kg,
                                                                            name=f'{name} with {payload_kg:g} kg')]
    result, _ = identify_and_save(robot, recordings, identification, output, robot_spec)
    return result


def _signature(path: Path) -> tuple:
    """The law, its terms and every other model key a fleet prior needs alike (:data:`SHARED_MODEL_KEYS`: the rotor
    inertias' excess folded in or not, ...)."""
    model = IdentificationResult.load(path).model
    rest = tuple(repr(model.get(key)) for key in SHARED_MODEL_KEYS if key not in ('friction', 'friction_symbols'))
    return model['friction'], tuple(model.get('friction_symbols') or ()), rest


def one_law(paths: list[Path], refit) -> dict:
    """A fleet prior pools results of one friction law and its terms (a Stribeck excess the model choice kept on
    some robots only is another set of terms): where the defaults chose several, the results of ``paths`` off the
    most common law are identified again with it given (``refit(k, law)`` writing ``paths[k]`` anew; a law given
    tries no Stribeck excess), and, where that gives other terms than the most common ones, every other result
    too; what the defaults chose and how many were identified again."""
    chosen = [_signature(path) for path in paths]
    laws = collections.Counter(chosen)
    common = laws.most_common(1)[0][0]
    refits = [k for k, signature in enumerate(chosen) if signature != common]
    done = set()
    for k in refits:
        paths[k].unlink()
        refit(k, common[0])
        done.add(k)
        given = _signature(paths[k])
        if given != common:  # the law given makes other terms: every result identified with it given
            for j in range(len(paths)):
                if j not in done and _signature(paths[j]) != given:
                    paths[j].unlink()
                    refit(j, common[0])
                    done.add(j)
            common = given
    named = collections.Counter(f'{law} ({"+".join(symbols)})' for law, symbols, _ in chosen)
    return {'laws_chosen': dict(named), 'model_settings_chosen': len(laws),
            'law': f'{common[0]} ({"+".join(common[1])})', 'law_refits': len(done)}
