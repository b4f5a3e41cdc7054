"""The twin every plug-in check fits on: the UR5e's shipped excitation simulated by dynid's digital twin
(:class:`dynid.sim.twin.DigitalTwin`, its default plant and controller, noisy sensors), 8 s at 200 Hz, once without a
payload and once with a known 3 kg payload off the flange axis (what the drive-gain methods scale by: Gautier & Briot
2014 eq. (17)), made once per process; and the identification a check runs on it, through the path ``dynid identify``
runs (:func:`dynid.identify.identify_and_save`), the last quarter of each recording held out.
"""

from __future__ import annotations

import functools
import itertools
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

#: length [s] and rate [Hz] of each twin recording: each check's fit stays within a few seconds
SECONDS, RATE_HZ = 8.0, 200.0
#: the known payload of the second recording: mass [kg] and centre of mass [m] in the flange frame
PAYLOAD_KG, PAYLOAD_COM = 3.0, (0.05, 0.05, 0.05)
#: the fraction of each recording's time held out of the fit and validated on
HOLDOUT = 0.25


@dataclass(frozen=True)
class Twin:
    """``robot`` (the UR5e); ``plain``, ``loaded``: the recordings (:class:`dynid.io.dataset.Dataset`) without and
    with ``payload``; ``folder``: a directory the checks write their files into, removed at the process's end."""

    robot: object
    plain: object
    loaded: object
    payload: object
    workspace: tempfile.TemporaryDirectory = field(
        default_factory=lambda: tempfile.TemporaryDirectory(prefix='dynid_plugin_checks_'))

    @property
    def folder(self) -> Path:
        return Path(self.workspace.name)

    def recordings(self, with_payload: bool = False) -> list:
        """The recordings a fit takes (:class:`~dynid.identify.RecordingInput`): the plain one, and
        the loaded one beside it where ``with_payload``."""
        from dynid.identify import RecordingInput

        plain = [RecordingInput(self.plain, name='twin')]
        return plain + [RecordingInput(self.loaded, payload=self.payload, name='twin_payload')] if with_payload \
            else plain



@functools.cache
def twin() -> Twin:
    """The twin's recordings (module docstring), simulated on the first call of the process."""
    from dynid.excite.trajectory import builtin_excitation_path, load_trajectory
    from dynid.model import load_robot
    from dynid.model.inertial import Payload

    robot = load_robot('ur5e')
    trajectory = load_trajectory(builtin_excitation_path('ur5e'))
    payload = Payload(PAYLOAD_KG, PAYLOAD_COM)
    return Twin(robot, _simulated(robot, trajectory, None, 0), _simulated(robot, trajectory, payload, 1), payload)


def _simulated(robot, trajectory, payload, seed: int):
    from dynid.sim.parameters import PlantParameters
    from dynid.sim.recording import record_to_dataset
    from dynid.sim.twin import DigitalTwin, trajectory_start

    params = PlantParameters.of_twin(robot, payload, seed=seed)
    plant = DigitalTwin(params, rate_hz=RATE_HZ, seed=seed, initial_q=trajectory_start(trajectory, robot.joint_names))
    plant.follow(trajectory, start_time=0.0)
    return record_to_dataset(plant.run(SECONDS), payload, {'simulation': f'dynid.testing twin, seed {seed}'})


def fit(method: str = 'wls', friction: str = 'viscous_coulomb', with_payload: bool = False, prior=None,
        linear: bool = False):
    """(the result, its file): the twin identified with ``method`` and ``friction`` as ``dynid identify`` does (the
    last :data:`HOLDOUT` of each recording held out), written into the twin's folder; the loaded recording taken
    beside the plain one where ``with_payload`` and by the drive-gain methods. ``prior``: a
    :class:`~dynid.identify.PriorSource` in place of the robot file's; ``linear``: the method's
    own solution alone, no prior and no physical consistency (IdentifyOptions.physical None). The same method and law
    objects fitted alike are fitted once per process."""
    from dynid.friction.laws import friction_law
    from dynid.identify import physical_settings
    from dynid.identify.registry import identification_method

    plugins = (identification_method(method), friction_law(friction))
    with_payload = with_payload or plugins[0].drive_gains
    if prior is not None:
        return _fitted(method, friction, with_payload, {'physical': physical_settings(prior_source=prior)},
                       f'{method}_{friction}_prior_{next(_NUMBERS)}')
    key = (*map(id, plugins), with_payload, linear)
    if key not in _FITS:  # the plug-ins kept beside their result: their ids stay theirs
        _FITS[key] = (plugins, _fitted(method, friction, with_payload, {'physical': None} if linear else {},
                                       f'{method}_{friction}_{next(_NUMBERS)}'))
    return _FITS[key][1]


#: {(id of the method, id of the law, with the payload, linear): ((the method, the law), (the result, its file))}
_FITS: dict = {}
#: each fit's file its own number
_NUMBERS = itertools.count()


def _fitted(method: str, friction: str, with_payload: bool, physical: dict, name: str):
    from dynid.identify import Identification, IdentifyOptions, ModelSpec, identify_and_save

    data = twin()
    identification = Identification(ModelSpec(friction=friction), options=IdentifyOptions(method=method, **physical),
                                    holdout=HOLDOUT)
    path = data.folder / f'{name}.yaml'
    result, _ = identify_and_save(data.robot, data.recordings(with_payload), identification, path, 'ur5e')
    return result, path
