"""What every check asks of an identification's result on the twin (:mod:`dynid.testing.twin`): finite values, the
held-out torque fitted within a bound, the file read back and written again to the same text, and the URDF and MJCF
export (``dynid export-urdf``, ``dynid export-mjcf``) either written or refused by an InputError that says why."""

from __future__ import annotations

import numpy as np

from dynid.testing.assertions import PluginCheck


def check_fitted(checking: PluginCheck, result, bound: float) -> float:
    """The result's values finite and its held-out relative residual ‖τ − τ̂‖/‖τ‖ on the twin's last quarter below
    ``bound``; returns that residual."""
    checking.that(np.all(np.isfinite(result.values)),
                  f'the fit on the twin gave non-finite values: '
                  f'{[n for n, v in zip(result.parameter_names, result.values, strict=True) if not np.isfinite(v)]}')
    residual = (result.metrics.get('holdout') or {}).get('relative_residual')
    checking.that(residual is not None and np.isfinite(residual) and residual < bound,
                  f'the fit on the twin predicts the held-out torque with a relative residual of {residual} '
                  f'(bound {bound:.3g})')
    return float(residual)


def check_round_trip(checking: PluginCheck, result, path) -> None:
    """The result file read back (:meth:`IdentificationResult.load`) holds the result's parameters, and written again
    gives the same text."""
    from dynid.identify import IdentificationResult

    with checking.step('reading the result file back'):
        loaded = IdentificationResult.load(path)
        again = loaded.save(path.with_name(path.stem + '_again.yaml'))
    checking.that(list(loaded.parameter_names) == list(result.parameter_names) and
                  np.array_equal(loaded.values, result.values, equal_nan=True) and
                  np.array_equal(loaded.std, result.std, equal_nan=True),
                  'the result file read back holds other parameters than the result written')
    checking.that(again.read_text() == path.read_text(), f'the result read back from {path} and written again '
                                                         'differs from the file')


def check_export(checking: PluginCheck, result, robot, folder, law=None) -> list[str]:
    """URDF and MJCF of the result: written (the URDF reproducing the result's torques to 1e-6 of their scale, as
    ``dynid export-urdf`` checks), or refused by an InputError: naming the ``physical`` field where the result holds no
    physically consistent parameters, else naming ``law`` (the law the formats cannot hold). Returns what was
    written ('urdf', 'mjcf')."""
    from dynid.errors import InputError
    from dynid.identify import export_mjcf, export_urdf, round_trip_error
    from dynid.model.mjcf import robot_urdf_text

    urdf = folder / f'{robot.name}.urdf'
    urdf.write_text(robot_urdf_text(robot))
    written = []
    for kind, export in (('urdf', lambda: export_urdf(result, urdf)), ('mjcf', lambda: export_mjcf(result, robot))):
        try:
            text = export()
        except InputError as error:
            _check_refusal(checking, kind, error, result, law)
            continue
        except Exception as error:
            raise checking.failed(f'{kind} export raised {type(error).__name__}: {error}') from error
        if kind == 'urdf':
            error = round_trip_error(result, urdf, text)
            checking.that(error < 1e-6, f'the exported URDF reproduces the result\'s torques to {error:.2g} of their '
                                        'scale, not 1e-6')
        written.append(kind)
    return written


def _check_refusal(checking: PluginCheck, kind: str, error, result, law) -> None:
    if result.physical_section is None:
        checking.that('physical' in error.fields, f'{kind} export of a result without physically consistent '
                                                  f'parameters was refused without naming the field physical: {error}')
    else:
        checking.that(law is not None and law in str(error),
                      f'{kind} export was refused without naming the friction law {law!r}: {error}')
