"""The twin's robot simulated by MuJoCo instead of dynid's own plant (``engine: mujoco``).

:class:`MujocoTwin` is a :class:`~dynid.sim.twin.DigitalTwin` whose plant is a MuJoCo model: the same
reference (joint_trajectory_controller semantics), joint controller (:mod:`dynid.sim.controller`:
PID + the controller's own model torque, current saturation, K_τ of the nominal drives), sensors
(:mod:`dynid.sim.sensors`, one seeded noise stream), output samples (:class:`SimulationRecord`) and
external effort input. What differs is the physics:

- **Model.** The robot's URDF through MuJoCo's URDF compiler (:mod:`dynid.model.mjcf`), or an MJCF a
  user gives (``mjcf``: its joints named as the robot's; its own armature, damping, friction loss,
  gravity and contacts; its actuators are disabled, the drive torque is applied as a joint force).
- **Joints.** Rigid by default: the rotor is the link, θ = q, so ``motor_states`` repeat ``joint_states``
  through the motor encoder. With ``flexible`` each robot joint j gets a second hinge ``j_elastic``
  (:data:`ELASTIC_SUFFIX`) in the same body, on the same axis: the robot's joint is then the rotor angle θ
  (it carries the armature, the friction and the drive torque), the elastic joint the link's deflection
  q − θ, held by a joint spring of MuJoCo's ``stiffness`` α1 and ``damping`` D (the plant's), so that the
  link turns by q = θ + (q − θ) and the transmission torque is τ_j = α1·(θ − q) + D·(θ̇ − q̇) (the
  flexible-joint model of Spong 1987, linear: MuJoCo's joint spring has no α3·φ³). The rotor inertia is
  MuJoCo's ``armature`` (the true drives' B), viscous friction its ``damping`` (the plant's Fv1), Coulomb
  friction its ``frictionloss`` (the plant's Fc0), a dry-friction constraint (time constant two steps,
  the stiffest MuJoCo resolves); Stribeck, load- and
  temperature-dependent friction and the E-GMS pre-sliding of dynid's plant are not modelled, nor is
  heating: the temperature stays at ambient. Scheduled joint changes (stiffness, wear) are refused.
  The joint spring is explicit in MuJoCo's Euler step: a flexible plant takes internal steps of at most
  :data:`FLEXIBLE_STEP_S` (the UR5e wrist_3 link, 2.6e-4 kg·m² on a 7.5e3 N·m/rad spring with D = 1.9 N·m·s/rad,
  needs steps below 0.27 ms).
- **Drive.** The motor current i [A] (the controller's, zero-order hold) gives the joint force
  K_τ,true·i (``qfrc_applied``).
- **Integration.** MuJoCo's semi-implicit Euler (``eulerdamp`` off: damping explicit, so
  q̇_{k+1} = q̇_k + h·q̈_k exactly) at the twin's internal step h. The step after a sample integrates the
  forward dynamics the sample computed with the new command (``mj_Euler``) instead of computing them again.
- **Samples.** At each output sample, the current is the mean of the commands before and after it (as
  in the twin), and θ̈, q̈, the joint torque τ_j = K_τ·i − B·θ̈ − f (what a link-side torque sensor reads:
  M(q)·q̈ + c + g of the links) and the friction f are the means of MuJoCo's forward dynamics at the
  sample's state with either command, so that K_τ·ī = τ̄_j + B·θ̈̄ + f̄ holds at the sample.
- **Payload.** A body on the flange (the robot's flange frame, a body of the MuJoCo model) with the
  payload's mass, centre of mass and inertia; :meth:`set_payload` rebuilds the model keeping the state.
- **Contacts.** A contact load (:class:`dynid.sim.contacts.ContactLoad`, :meth:`DigitalTwin.apply_contact`) is the
  ``xfrc_applied`` of the body its link moves with, at every internal step (the wrench moved to the body's centre of
  mass); an obstacle (:meth:`MujocoTwin.add_obstacle`) is a box in the world that a sphere at the tool
  (:data:`TOOL_RADIUS_M` about the flange, no mass) collides with. The truth's ``external_torque`` is the loads'
  Jᵀ·w plus the contact forces' Jᵀ·f at each sample, and those contact forces are kept out of ``friction`` and the
  joint torque.
"""

from __future__ import annotations

import numpy as np

from dynid.errors import InputError
from dynid.excite.home import home_configuration
from dynid.excite.reference import ReferenceGenerator
from dynid.friction.stiffness import OddPolynomialStiffness
from dynid.model import mjcf
from dynid.model.inertial import Payload
from dynid.sim.contacts import ContactSchedule
from dynid.sim.controller import JointController, feedback_law
from dynid.sim.parameters import PlantParameters
from dynid.sim.sensors import Sensors
from dynid.sim.settings import ENGINES
from dynid.sim.twin import MEASURED_FIELDS, REFERENCE_FIELDS, TRUTH_FIELDS, DigitalTwin, SimulationRecord

#: The name of the payload body added to the flange.
PAYLOAD_BODY = 'dynid_payload'
#: Time constant of the friction-loss constraint in internal steps (MuJoCo's default is 0.02 s, whose soft dry
#: friction falls short of Fc at a few 0.1 rad/s).
FRICTION_TIME_STEPS = 2.0
#: Stiffness the controller assumes [N·m/rad]: rigid joints, its set-points θ_r = q_r (deflection ~1e-10 rad).
RIGID_STIFFNESS = 1e12
#: The name of joint j's elastic joint (its link-side deflection) is j + ELASTIC_SUFFIX.
ELASTIC_SUFFIX = '_elastic'
#: Longest internal step of a flexible plant [s] (module docstring).
FLEXIBLE_STEP_S = 1e-4
#: [m] radius of the tool sphere that meets obstacles, centred on the flange.
TOOL_RADIUS_M = 0.03
TOOL_GEOM = 'dynid_tool'
CONTACT_TYPES = ('mjCNSTR_CONTACT_FRICTIONLESS', 'mjCNSTR_CONTACT_PYRAMIDAL', 'mjCNSTR_CONTACT_ELLIPTIC')


class _Plant:
    """What :class:`JointController` reads of a plant: its stiffness model (α1 of the joint springs, or rigid) and
    the true gravity torque."""

    def __init__(self, twin: MujocoTwin, alpha1: np.ndarray | None) -> None:
        self.twin = twin
        alpha1 = np.full(twin.n, RIGID_STIFFNESS) if alpha1 is None else alpha1
        self.stiffness = OddPolynomialStiffness(np.column_stack([alpha1, np.zeros(twin.n)]))

    def gravity_torque(self, q: np.ndarray) -> np.ndarray:
        return self.twin.gravity_torque(q)


class MujocoTwin(DigitalTwin):
    """The twin's interface with MuJoCo as the plant (module docstring).

    Args:
        params: the robot, true drives (K_τ, B), joints (Fc0 → frictionloss, Fv1 → damping, unless ``mjcf``
            gives its own), payload, sensors and controller.
        rate_hz, max_step_s, seed, initial_q: as for :class:`DigitalTwin`.
        joint_changes: must be empty (refused: the MuJoCo plant has no joint changes).
        mjcf: an MJCF file to simulate instead of the robot's URDF (module docstring), or None.
        flexible: elastic joints (module docstring): the MJCF's ``<joint>_elastic`` joints where it has them, else
            added with the plant's α1 (``params.joints.alpha1``) and transmission damping D.
    """

    def __init__(self, params: PlantParameters, rate_hz: float = 1000.0, max_step_s: float = 1e-3, seed: int = 0,
                 initial_q: np.ndarray | None = None, joint_changes=(), mjcf_path: str | None = None,
                 flexible: bool = False) -> None:
        self.mujoco = mjcf.require_mujoco()
        if joint_changes:
            raise InputError('joint changes (stiffness, friction wear) are not simulated on the MuJoCo plant '
                             '(use the twin)')
        self.flexible = bool(flexible)
        self._set_up(params, rate_hz, min(max_step_s, FLEXIBLE_STEP_S) if self.flexible else max_step_s)
        self.mjcf_path = mjcf_path
        self.obstacles: list[tuple[np.ndarray, np.ndarray]] = []
        self.contacts = ContactSchedule(self.robot)
        self._spec = self._make_spec()
        self._set_payload_body(params.payload)
        self._compile()
        self.plant = _Plant(self, self.stiffness if self.flexible else None)
        self.sensors = Sensors(params.sensors, params.drives.gear_ratio, seed)
        self.controller = JointController(params, self.plant, self.sensors.motor_resolution)
        self.reference = ReferenceGenerator(self.robot.joint_names)
        self.effort_command = np.zeros(self.n)
        self.time, self.samples = 0.0, 0
        self._reference_block = None
        self.joint_changes, self.applied_joint_changes, self._pending_changes = [], [], []
        self._next_change_sample = -1
        self.reset(initial_q)

    # ------------------------------------------------------------------------------ the model
    def _make_spec(self):
        mujoco, robot = self.mujoco, self.robot
        if self.mjcf_path is None:
            spec = mjcf.robot_spec(mjcf.robot_urdf_text(robot), robot.joint_names)
            joints = self.params.joints
            mjcf.set_joint_dynamics(spec, robot.joint_names, self.params.drives.rotor_inertia, joints.viscous1,
                                    joints.coulomb)
            for name in robot.joint_names:  # the stiffest friction loss the step resolves (MuJoCo: 2 steps)
                spec.joint(name).solref_friction = [FRICTION_TIME_STEPS * self.step_s, 1.0]
        else:
            try:
                spec = mujoco.MjSpec.from_file(str(self.mjcf_path))
            except ValueError as error:
                raise InputError(f'MuJoCo cannot read {self.mjcf_path}: {str(error).strip().splitlines()[0]}') \
                    from None
            missing = [name for name in robot.joint_names if spec.joint(name) is None]
            if missing:
                raise InputError(f'{self.mjcf_path} has no joints {missing} of robot {robot.name!r}')
        if self.flexible:
            self._add_elastic_joints(spec)
        spec.option.timestep = self.step_s
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER
        spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_EULERDAMP | mujoco.mjtDisableBit.mjDSBL_ACTUATION)
        return spec

    def _add_elastic_joints(self, spec) -> None:
        """Joint j's elastic joint in j's body, on its axis (module docstring), where the spec has none."""
        joints = self.params.joints
        for k, name in enumerate(self.robot.joint_names):
            if spec.joint(name + ELASTIC_SUFFIX) is not None:
                continue
            rotor = spec.joint(name)
            if rotor.type != self.mujoco.mjtJoint.mjJNT_HINGE:
                raise InputError(f'joint {name!r} of the MuJoCo model is not a hinge: no elastic joint for it')
            rotor.parent.add_joint(name=name + ELASTIC_SUFFIX, type=self.mujoco.mjtJoint.mjJNT_HINGE,
                                   axis=rotor.axis, pos=rotor.pos, stiffness=float(joints.alpha1[k]),
                                   springref=0.0, damping=[float(joints.damping[k]), 0.0, 0.0])

    def _flange_body(self):
        spec, robot = self._spec, self.robot
        body = spec.body(robot.flange)
        if body is None:  # a user's MJCF without the flange frame: the last joint's body
            body = spec.joint(robot.joint_names[-1]).parent
        return body

    def _set_payload_body(self, payload: Payload | None) -> None:
        old = self._spec.body(PAYLOAD_BODY)
        if old is not None:
            self._spec.delete(old)
        if payload is None or payload.mass <= 0:
            return
        inertia = np.asarray(payload.inertia, dtype=float)
        body = self._flange_body().add_body(name=PAYLOAD_BODY)
        body.mass = payload.mass
        body.ipos = payload.com
        if np.any(inertia != 0):
            body.fullinertia = [inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2],
                                inertia[1, 2]]
        else:  # a point mass
            body.inertia = [0.0, 0.0, 0.0]
        body.explicitinertial = True

    def add_obstacle(self, center, half_size) -> None:
        """A box [m] (centre, half sizes, world frame, axes of the world) the tool sphere collides with; the model is
        rebuilt with the state kept."""
        center, half = np.asarray(center, dtype=float).reshape(3), np.asarray(half_size, dtype=float).reshape(3)
        if not (np.all(np.isfinite(center)) and np.all(np.isfinite(half)) and np.all(half > 0)):
            raise InputError(f'an obstacle needs a finite centre and half sizes > 0 m, got {center}, {half}')
        spec, mujoco = self._spec, self.mujoco
        if spec.geom(TOOL_GEOM) is None:
            tool = self._flange_body().add_geom(name=TOOL_GEOM, type=mujoco.mjtGeom.mjGEOM_SPHERE,
                                                size=[TOOL_RADIUS_M, 0.0, 0.0], contype=1, conaffinity=1)
            tool.mass = 0.0
        spec.worldbody.add_geom(name=f'dynid_obstacle_{len(self.obstacles)}', type=mujoco.mjtGeom.mjGEOM_BOX,
                                size=half.tolist(), pos=center.tolist(), contype=1, conaffinity=1)
        self.obstacles.append((center, half))
        qpos, qvel, time = self.data.qpos.copy(), self.data.qvel.copy(), self.data.time
        self._compile()
        self.data.qpos[:], self.data.qvel[:], self.data.time = qpos, qvel, time
        self.mujoco.mj_forward(self.model, self.data)
        self._forwarded = False

    def _contact_torque(self) -> np.ndarray:
        """Jᵀ·f of the contact constraints at the data's state (all dofs) [N·m]."""
        data, mujoco = self.data, self.mujoco
        out = np.zeros(self.model.nv)
        if data.nefc == 0:
            return out
        kinds = [int(getattr(mujoco.mjtConstraint, name)) for name in CONTACT_TYPES]
        force = np.where(np.isin(data.efc_type, kinds), data.efc_force, 0.0)
        if np.any(force):
            mujoco.mj_mulJacTVec(self.model, data, out, force)
        return out

    def _apply_loads(self, time_s: float, q: np.ndarray) -> None:
        """The contact loads at ``time_s`` [s] as the bodies' xfrc_applied (module docstring), links at q [rad]."""
        data = self.data
        data.xfrc_applied[:] = 0.0
        for joint, point, force, moment in self.contacts.world_wrenches(time_s, q):
            body = self.model.jnt_bodyid[self._joint_ids[joint - 1]]
            data.xfrc_applied[body, :3] += force
            data.xfrc_applied[body, 3:] += moment + np.cross(point - data.xipos[body], force)

    def _compile(self) -> None:
        try:
            self.model = self._spec.compile()
        except ValueError as error:
            raise InputError(f'MuJoCo cannot compile the model: {str(error).strip().splitlines()[0]}') from None
        self.data = self.mujoco.MjData(self.model)
        self._qpos, self._dofs = mjcf.joint_addresses(self.model, self.robot.joint_names)
        self._joint_ids = [self.mujoco.mj_name2id(self.model, self.mujoco.mjtObj.mjOBJ_JOINT, name)
                           for name in self.robot.joint_names]
        if self.flexible:
            elastic = [name + ELASTIC_SUFFIX for name in self.robot.joint_names]
            self._eqpos, self._edofs = mjcf.joint_addresses(self.model, elastic)
            ids = [self.mujoco.mj_name2id(self.model, self.mujoco.mjtObj.mjOBJ_JOINT, name) for name in elastic]
            self.stiffness = self.model.jnt_stiffness[ids].copy()
            self.transmission_damping = self.model.dof_damping[self._edofs].copy()
        self.armature = self.model.dof_armature[self._dofs].copy()
        self.damping = self.model.dof_damping[self._dofs].copy()
        self.frictionloss = self.model.dof_frictionloss[self._dofs].copy()

    def describe(self) -> dict:
        """The MuJoCo plant for truth.yaml: model source, per-joint armature, damping, friction loss."""
        described = {'engine': 'mujoco', 'mujoco_version': self.mujoco.__version__,
                     'model': self.mjcf_path or "the robot's URDF through MuJoCo's URDF compiler",
                     'joints': 'rigid (theta = q); no heating', 'armature': self.armature.tolist(),
                     'damping': self.damping.tolist(), 'frictionloss': self.frictionloss.tolist(),
                     'timestep_s': self.step_s, 'integrator': 'Euler, damping explicit'}
        if self.flexible:
            described.update(joints='flexible: a joint spring between rotor and link (linear); no heating',
                             stiffness=self.stiffness.tolist(), transmission_damping=self.transmission_damping.tolist())
        return described

    def to_xml(self) -> str:
        """The simulated model as MJCF text (with the elastic joints and the payload body where there are)."""
        return self._spec.to_xml()

    def gravity_torque(self, q: np.ndarray) -> np.ndarray:
        """g(q) [N·m] of the MuJoCo model (with payload) at link position q, the robot's other joints at their
        reference (elastic joints undeflected)."""
        data = self.mujoco.MjData(self.model)
        data.qpos[self._qpos] = q
        self.mujoco.mj_forward(self.model, data)
        return data.qfrc_bias[self._dofs].copy()

    # ------------------------------------------------------------------------------ commands
    def reset(self, q: np.ndarray | None = None) -> None:
        """Start again at rest at q (default home), time 0, holding position, no effort command."""
        q = home_configuration(self.robot) if q is None else np.asarray(q, dtype=float).reshape(-1)
        if q.shape != (self.n,) or not np.all(np.isfinite(q)):
            raise InputError(f'initial position must be {self.n} finite values, got {q.tolist()}')
        outside = (q < self.robot.lower_limits) | (q > self.robot.upper_limits)
        if np.any(outside):
            raise InputError(f'initial position is outside the limits of '
                             f'{[n for n, o in zip(self.robot.joint_names, outside, strict=True) if o]}')
        self.time, self.samples = 0.0, 0
        self.mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self._qpos] = q
        if self.flexible:  # the springs hold the links' gravity: θ = q + g(q)/α1
            deflection = self.gravity_torque(q) / self.stiffness
            self.data.qpos[self._qpos] = q + deflection
            self.data.qpos[self._eqpos] = -deflection
        self.mujoco.mj_forward(self.model, self.data)
        self._forwarded = self._loaded = False
        self.controller.reset(q)
        self.reference.hold(q, 0.0)
        self.effort_command = np.zeros(self.n)
        q_r, dq_r, ddq_r, effort_r = self.reference.sample(0.0)
        self._pending_current = self.controller.current(q, np.zeros(self.n), q_r, dq_r, ddq_r, effort_r, self.step_s)

    def set_payload(self, payload: Payload | None) -> None:
        """Change the payload now (the model is rebuilt, the state kept); the controller is not told."""
        qpos, qvel, time = self.data.qpos.copy(), self.data.qvel.copy(), self.data.time
        self._set_payload_body(payload)
        self._compile()
        self.data.qpos[:], self.data.qvel[:], self.data.time = qpos, qvel, time
        self.mujoco.mj_forward(self.model, self.data)
        self._forwarded = False
        self.params = self.params.with_payload(payload)

    def schedule_joint_change(self, change) -> None:
        raise InputError('joint changes (stiffness, friction wear) are not simulated on the MuJoCo plant (use the '
                         'twin)')

    def compile_kernels(self) -> None:
        """Compile (or load from numba's cache) the controller's feedback law before a real-time run."""
        n, zero = self.n, np.zeros(self.n)
        feedback_law(np.ones((7, n)), zero, zero, zero, zero, zero, zero, 1e-3, np.zeros(n))

    # ------------------------------------------------------------------------------- stepping
    def _forward(self, torque: np.ndarray, again: bool = False) -> tuple[np.ndarray, ...]:
        """θ̈, τ_j, f and q̈ at the data's state with the drive torque ``torque`` (MuJoCo's forward dynamics;
        ``again``: the state's position and velocity stages are computed already, only the acceleration stage
        runs)."""
        data, dofs = self.data, self._dofs
        data.qfrc_applied[dofs] = torque
        if again:
            self.mujoco.mj_forwardSkip(self.model, data, int(self.mujoco.mjtStage.mjSTAGE_VEL), 0)
        else:
            self.mujoco.mj_forward(self.model, data)
        acceleration = data.qacc[dofs].copy()
        contact = self._contact_torque()[dofs] if self.obstacles else np.zeros(len(dofs))
        friction = -(data.qfrc_constraint[dofs] - contact + data.qfrc_passive[dofs])
        link = acceleration + data.qacc[self._edofs] if self.flexible else acceleration
        return acceleration, torque - self.armature * acceleration - friction, friction, link, contact

    def advance(self, count: int) -> SimulationRecord:
        """Advance ``count`` output samples (as :meth:`DigitalTwin.advance`; module docstring)."""
        if not isinstance(count, (int, np.integer)) or count < 0:
            raise InputError(f'sample count must be an integer >= 0, got {count!r}')
        n, s, h = self.n, self.substeps, self.step_s
        if count == 0:
            empty = np.empty((0, n))
            return SimulationRecord(self.robot.joint_names, np.empty(0), dict.fromkeys(MEASURED_FIELDS, empty),
                                    dict.fromkeys(TRUTH_FIELDS, empty), dict.fromkeys(REFERENCE_FIELDS, empty),
                                    self.rate_hz)
        controller, data, dofs, qpos = self.controller, self.data, self._dofs, self._qpos
        q_r, dq_r, ddq_r, effort_r, internal = self._planned_reference(self.samples * s + 1, count * s)
        theta_r = controller.setpoints(q_r, internal)
        effort = effort_r + self.effort_command
        gain = self.params.drives.drive_gain
        table = {name: np.empty((count, n)) for name in ('q', 'dq', 'theta', 'dtheta', 'joint_torque', 'friction',
                                                         'current', 'rotor_acceleration', 'link_acceleration')}
        eqpos, edofs = (self._eqpos, self._edofs) if self.flexible else (None, None)
        pending, following = self._pending_current, np.empty(n)
        step_fn, euler, gains, model = self.mujoco.mj_step, self.mujoco.mj_Euler, controller.gains, self.model
        forwarded = self._forwarded  # the data hold the forward dynamics of this state with K_τ·pending
        loaded = self.contacts.active(self.time, self.time + count / self.rate_hz)
        if loaded or self._loaded:
            forwarded = False  # the loads of the step change what the sample's forward dynamics computed
        obstacle = np.zeros((count, n))
        for step in range(count * s):
            if loaded:
                link = data.qpos[qpos] + (data.qpos[eqpos] if eqpos is not None else 0.0)
                self._apply_loads(self.time + (step + 0.5) * h, link)
            if forwarded:  # integrate what the sample's forward dynamics computed (mj_step = mj_forward + this)
                euler(model, data)
            else:
                data.qfrc_applied[dofs] = gain * pending
                step_fn(model, data)
            forwarded = False
            q, dq = data.qpos[qpos], data.qvel[dofs]
            feedback_law(gains, q, dq, theta_r[step], dq_r[step], internal[step], effort[step], h, following)
            if (step + 1) % s == 0:
                k = step // s
                if not (np.all(np.isfinite(q)) and np.all(np.isfinite(dq))):
                    raise InputError('the MuJoCo simulation diverged (non-finite state)')
                before = self._forward(gain * pending)
                after = self._forward(gain * following, again=True)
                forwarded = not loaded
                obstacle[k] = 0.5 * (before[4] + after[4])
                table['theta'][k], table['dtheta'][k] = q, dq  # the robot's joints: the rotors
                if eqpos is None:
                    table['q'][k], table['dq'][k] = q, dq
                else:  # the links: rotor plus deflection
                    table['q'][k], table['dq'][k] = q + data.qpos[eqpos], dq + data.qvel[edofs]
                table['current'][k] = 0.5 * (pending + following)
                table['rotor_acceleration'][k] = 0.5 * (before[0] + after[0])
                table['joint_torque'][k] = 0.5 * (before[1] + after[1])
                table['friction'][k] = 0.5 * (before[2] + after[2])
                table['link_acceleration'][k] = 0.5 * (before[3] + after[3])
            pending = following.copy()
        self._pending_current, self._forwarded, self._loaded = pending, forwarded, loaded
        if loaded:
            data.xfrc_applied[:] = 0.0
        first = self.samples + 1
        self.samples += count
        self.time = self.samples / self.rate_hz
        temperature = np.full((count, n), float(self.params.ambient_c))
        truth = {'q': table['q'], 'dq': table['dq'], 'theta': table['theta'], 'dtheta': table['dtheta'],
                 'joint_torque': table['joint_torque'], 'friction': table['friction'], 'current': table['current'],
                 'temperature': temperature, 'rotor_acceleration': table['rotor_acceleration'],
                 'link_acceleration': table['link_acceleration'],
                 'external_torque': self.contacts.torques(np.arange(first, first + count) / self.rate_hz,
                                                          table['q']) + obstacle}
        return self._record(first, truth, temperature, (q_r, dq_r, ddq_r, effort_r))


def make_twin(params: PlantParameters, engine: str = 'twin', mjcf_path: str | None = None, **kwargs) -> DigitalTwin:
    """A :class:`DigitalTwin` (``engine`` 'twin') or :class:`MujocoTwin` ('mujoco', optionally of the MJCF
    ``mjcf_path``) with the keyword arguments of :class:`DigitalTwin`."""
    from dynid.errors import checked_choice

    checked_choice('engine', engine, ENGINES)
    if engine == 'twin':
        if mjcf_path:
            raise InputError('an MJCF model is simulated by the mujoco engine (engine mujoco)')
        return DigitalTwin(params, **kwargs)
    return MujocoTwin(params, mjcf_path=mjcf_path or None, **kwargs)
