"""``dynid demo``: the main job end to end on the digital twin, over DDS.

sim_node (the twin at 1 kHz, like the real robots it stands for), two excitation nodes (the shipped
optimized excitation for training and a held-out random Fourier trajectory) and identifier_node run
each in its own process (as ``ros2 launch`` runs them; ``processes=False`` puts them in this
process's executor) under their own namespace (``/dynid_demo_<process id>`` by default, so nothing
reaches a real robot's controller and two demos on one ROS domain do not mix). An operator node in
this process drives them through their services exactly as a user would: record the optimized
excitation, identify, record the held-out trajectory, validate, then print the summary table and
write the result and the report. After an excitation ends, the operator waits until the twin's
stamps have passed that moment (a loaded machine makes the twin run late, never skip).

Outputs in ``output``: ``recordings/recording_*`` (rosbag2 MCAP segments, the training one with the
node's ``result.yaml``), ``result.yaml`` (with the held-out validation metrics), ``report/index.html``.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import rclpy
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState
from rcl_interfaces.msg import Parameter as ParameterMessage
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from dynid.control.configuration import FeedforwardSettings
from dynid.control.tracking import tracking_error
from dynid.demo.summary import LoopSummary, estimate_history, write_loop_page
from dynid.errors import InputError
from dynid.excite.trajectory import builtin_excitation_path
from dynid.identify.report import write_report
from dynid.identify.result import IdentificationResult
from dynid.identify.validate import validate
from dynid.io.recorder import read_recording
from dynid.model import load_robot
from dynid.nodes.bringup import NodeProcesses, build_suite, plan_suite
from dynid.nodes.conversions import trajectory_from_message
from dynid.sim.parameters import PlantParameters

SERVICE_TIMEOUT_S = 60.0  # node processes start in a few seconds; more on a loaded machine
IDENTIFY_TIMEOUT_S = 180.0
CATCH_UP_TIMEOUT_S = 60.0  # how long the twin may take to produce what the excitation sent
HOLDOUT_PERIOD_S = 10.0  # the held-out random Fourier trajectory, also the feedforward's tracking task
#: training; held-out validation and tracking without feedforward; the same through feedforward_node
EXCITATIONS = ('excitation_node', 'holdout_excitation', 'feedforward_excitation')


class DemoError(RuntimeError):
    """A step of the demo did not complete (a node refused or timed out)."""


@dataclass
class DemoSettings:
    """What the demo runs. Rates [Hz], durations [s]."""

    output: Path = Path('dynid_demo')
    robot: str = 'ur5e'
    namespace: str = field(default_factory=lambda: f'dynid_demo_{os.getpid()}')
    rate: float = 1000.0
    periods: int = 3  # periods of the 10 s optimized excitation
    holdout_seed: int = 7
    method: str = 'wls'
    friction: str = 'viscous_coulomb'
    seed: int = 1
    processes: bool = True


class _Operator:
    """Calls the suite's services and watches its state topics over DDS."""

    def __init__(self, context: Context, namespace: str, say: Callable[[str], None],
                 processes: NodeProcesses | None = None) -> None:
        self.node = rclpy.create_node('dynid_demo_operator', namespace=namespace, context=context)
        self.say = say
        self.processes = processes
        self.states: dict[str, str] = {}
        self.result: str | None = None
        self.twin_status = f'{self.node.get_namespace().rstrip("/")}/sim_node: digital twin'
        self.twin_stamp_ns = 0
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        for name in EXCITATIONS:
            self.node.create_subscription(String, f'{name}/state',
                                          lambda m, n=name: self.states.__setitem__(n, m.data), latched)
        self.node.create_subscription(String, 'identifier_node/result',
                                      lambda m: setattr(self, 'result', m.data), latched)
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, 10)
        # What the joint controller is sent (to score the tracking) and what the estimator says.
        self.sent: list[JointTrajectory] = []
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(JointTrajectory, 'joint_trajectory_controller/joint_trajectory',
                                      self.sent.append, reliable)
        self.estimates: dict[str, list] = {'stiffness': [], 'friction': []}
        for table in self.estimates:
            self.node.create_subscription(Float64MultiArray, f'estimator_node/{table}',
                                          lambda m, t=table: self.estimates[t].append((time.monotonic(), m)), 10)
        self.clients: dict[str, object] = {}

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            if status.name == self.twin_status:
                values = {v.key: v.value for v in status.values}
                self.twin_stamp_ns = int(values.get('last_stamp_ns', 0))

    def check_processes(self) -> None:
        """DemoError if a node process has stopped."""
        exited = self.processes.exited() if self.processes is not None else {}
        if exited:
            raise DemoError(', '.join(f'{name} stopped (exit code {code})' for name, code in exited.items()))

    def wait_for_twin(self, clock_ns: int) -> None:
        """Wait until the twin has published samples stamped at or after ``clock_ns``."""
        end = time.monotonic() + CATCH_UP_TIMEOUT_S
        while self.twin_stamp_ns < clock_ns:
            self.check_processes()
            if time.monotonic() > end:
                raise DemoError(f'the twin did not catch up within {CATCH_UP_TIMEOUT_S:g} s')
            time.sleep(0.1)

    def request(self, service_type, service: str, request, timeout: float = SERVICE_TIMEOUT_S):
        """Call a service (relative name) and return its response; DemoError if it does not answer."""
        client = self.clients.get(service) or self.node.create_client(service_type, service)
        self.clients[service] = client
        if not client.wait_for_service(timeout_sec=SERVICE_TIMEOUT_S):
            raise DemoError(f'service {client.srv_name} is not available')
        done = threading.Event()
        future = client.call_async(request)
        future.add_done_callback(lambda _: done.set())
        if not done.wait(timeout):
            raise DemoError(f'{client.srv_name} did not answer within {timeout:g} s')
        return future.result()

    def call(self, service: str, timeout: float = SERVICE_TIMEOUT_S) -> str:
        """Call a Trigger service (relative name); returns its message, raises DemoError if refused."""
        response = self.request(Trigger, service, Trigger.Request(), timeout)
        if not response.success:
            raise DemoError(f'{service} refused: {response.message}')
        return response.message

    def start_feedforward(self, result_file: Path) -> None:
        """Give feedforward_node the result file, then configure and activate it (lifecycle services)."""
        value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=str(result_file))
        answer = self.request(SetParameters, 'feedforward_node/set_parameters',
                              SetParameters.Request(parameters=[ParameterMessage(name='result_file', value=value)]))
        if not answer.results[0].successful:
            raise DemoError(f'feedforward_node refused the result file: {answer.results[0].reason}')
        for transition, label in ((Transition.TRANSITION_CONFIGURE, 'configure'),
                                  (Transition.TRANSITION_ACTIVATE, 'activate')):
            change = ChangeState.Request(transition=Transition(id=transition))
            if not self.request(ChangeState, 'feedforward_node/change_state', change).success:
                raise DemoError(f'feedforward_node refused to {label} (its log says why)')

    def run_excitation(self, name: str) -> None:
        """Start an excitation node and wait until it reports 'done', with progress every 5 s."""
        deadline = time.monotonic() + 10.0
        while True:  # the excitation node needs fresh joint states before it starts
            try:
                message = self.call(f'{name}/start')
                break
            except DemoError as error:
                if 'no joint_states' not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        self.say(f'{name}: {message}')
        found = re.search(r'running ([0-9.]+) s', message)
        seconds = float(found.group(1)) if found else 60.0
        start = time.monotonic()
        last = start
        while self.states.get(name) != 'done':
            time.sleep(0.1)
            self.check_processes()
            state = self.states.get(name, '')
            if state.startswith('refused') or state == 'stopped':
                raise DemoError(f'{name} {state}')
            if time.monotonic() - last >= 5.0:
                last = time.monotonic()
                self.say(f'{name}: {last - start:.0f} of {seconds:.0f} s')
            if time.monotonic() - start > 2 * seconds + 30:
                raise DemoError(f'{name} did not finish')
        self.wait_for_twin(self.node.get_clock().now().nanoseconds)


def _coverage(dataset, rate_hz: float) -> str:
    """'N samples, none lost' or with the samples lost (stamp gaps against the twin's rate)."""
    gaps = dataset.gaps(1.0 / rate_hz)
    return f'{gaps.samples} samples, ' + (f'{gaps.lost} lost in {len(gaps.gaps)} gap(s)' if gaps.lost else 'none lost')


def _table(result: IdentificationResult, settings: DemoSettings, training, holdout) -> str:
    train = result.metrics['train']
    held = result.metrics['validation']
    friction = result.friction()
    lines = [
        f'dynid demo: {result.robot} digital twin at {settings.rate:g} Hz, {result.method.upper()}, '
        f'{settings.friction} friction',
        f'training: optimized excitation, {training.t[-1]:.1f} s ({_coverage(training, settings.rate)}); '
        f'held-out: random Fourier trajectory (seed {settings.holdout_seed}), {holdout.t[-1]:.1f} s '
        f'({_coverage(holdout, settings.rate)})',
        f'{len(result.parameter_names)} parameters, cond(W) = {result.condition_number:.4g}; relative residual: '
        f'training {train["relative_residual"]:.4f}, held-out {held["relative_residual"]:.4f}',
        '',
        f'{"joint":<22}{"Fc [N·m]":>10}{"Fv [N·m·s]":>12}{"train fit %":>13}{"held-out fit %":>16}'
        f'{"held-out RMSE [N·m]":>21}',
    ]
    for name in result.joint_names:
        f = friction[name]
        lines.append(f'{name:<22}{f.get("Fc", float("nan")):>10.4g}{f.get("Fv", float("nan")):>12.4g}'
                     f'{_number(train["joints"][name]["nrmse_fit_percent"], ".2f"):>13}'
                     f'{_number(held["joints"][name]["nrmse_fit_percent"], ".2f"):>16}'
                     f'{_number(held["joints"][name]["rmse"], ".4g"):>21}')
    return '\n'.join(lines)


def _number(value, spec: str) -> str:
    """A metric for the table; n/a where nothing was scored (None)."""
    return 'n/a' if value is None else format(value, spec)


def run_demo(settings: DemoSettings, quiet: bool = False) -> IdentificationResult:
    """Run the demo (module docstring); returns the result with its held-out validation metrics."""
    begin = time.perf_counter()

    def say(text: str) -> None:
        if not quiet:
            print(f'[{time.perf_counter() - begin:6.1f} s] {text}', file=sys.stderr, flush=True)

    output = Path(settings.output)
    recordings = output / 'recordings'
    robot = load_robot(settings.robot)
    context = Context()
    rclpy.init(args=['dynid_demo', '--ros-args', '--log-level', 'warn'], context=context)
    executor = SingleThreadedExecutor(context=context)
    thread = None
    nodes, processes = {}, None
    parameters = {'sim_node': {'rate': float(settings.rate), 'seed': settings.seed},
                  'identifier_node': {'output_directory': str(recordings), 'method': settings.method,
                                      'friction': settings.friction, 'report': False},
                  'estimator_node': {'result_topic': 'identifier_node/result'},
                  'feedforward_node': {'autostart': False, 'terms': list(FeedforwardSettings.terms)}}
    holdout = {'seed': settings.holdout_seed, 'approach_velocity': 0.5, 'period': HOLDOUT_PERIOD_S}
    excitations = {'excitation_node': {'trajectory_file': 'builtin', 'repeat': settings.periods,
                                       'approach_velocity': 0.5},
                   'holdout_excitation': holdout, 'feedforward_excitation': holdout}
    suite = {'estimator': True, 'feedforward': 'trajectory', 'feedforward_from': ['feedforward_excitation']}
    try:
        if settings.processes:
            processes = NodeProcesses(plan_suite(settings.robot, True, parameters, excitations, **suite),
                                      settings.namespace, ros_arguments=['--log-level', 'warn'])
            processes.start()
            names = [plan.name for plan in processes.plans]
        else:
            nodes = build_suite(context, settings.robot, settings.namespace, parameters=parameters,
                                excitations=excitations, lean=True, **suite)
            names = list(nodes)
        operator = _Operator(context, settings.namespace, say, processes)
        for node in [*nodes.values(), operator.node]:
            executor.add_node(node)
        thread = threading.Thread(target=executor.spin, daemon=True)
        thread.start()
        say(f'suite {"starting" if processes else "up"} in /{settings.namespace}: {", ".join(names)}'
            f'{" (one process each)" if processes else ""}')

        operator.wait_for_twin(1)  # the twin publishes: a recording started now has data
        training_folder = Path(operator.call('identifier_node/start_recording'))
        operator.run_excitation('excitation_node')
        say(f'recorded {operator.call("identifier_node/stop_recording")}')
        say('identifying (identifier_node ~/identify)')
        say(operator.call('identifier_node/identify', timeout=IDENTIFY_TIMEOUT_S))
        deadline = time.monotonic() + 10.0
        while operator.result is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if operator.result is None:
            raise DemoError('no result on identifier_node/result')
        result = IdentificationResult.from_dict(yaml.safe_load(operator.result), 'identifier_node/result')

        result_path = result.save(output / 'result.yaml')
        operator.start_feedforward(result_path.resolve())
        say('feedforward_node configured with the result and active; estimator_node estimating with it')

        runs = {}
        for name in ('holdout_excitation', 'feedforward_excitation'):
            operator.sent.clear()
            folder = Path(operator.call('identifier_node/start_recording'))
            operator.run_excitation(name)
            say(f'recorded {operator.call("identifier_node/stop_recording")}')
            runs[name] = (folder, list(operator.sent))
        estimates = {table: list(history) for table, history in operator.estimates.items()}
    finally:
        if processes is not None:
            processes.stop()
        executor.shutdown()
        if thread is not None:
            thread.join(timeout=5.0)
        for node in nodes.values():
            node.destroy_node()
        if context.ok():
            rclpy.shutdown(context=context)

    say('validating on the held-out recording')
    training = read_recording(training_folder, robot.joint_names, settings.namespace)
    recorded = {name: read_recording(folder, robot.joint_names, settings.namespace)
                for name, (folder, _) in runs.items()}
    holdout = recorded['holdout_excitation']
    result.metrics['validation'] = validate(result, robot, holdout)
    result.provenance.update({'demo': {'training': str(training_folder),
                                       'held_out': str(runs['holdout_excitation'][0]),
                                       'feedforward': str(runs['feedforward_excitation'][0])}})
    path = result.save(output / 'result.yaml')
    loop = _loop_summary(robot, recorded, runs, estimates)
    say('writing the report')
    report = write_report(output / 'report', result, robot, [training], [holdout])
    loop_page = write_loop_page(output / 'report', loop)
    (output / 'loop.yaml').write_text(yaml.safe_dump(loop.as_dict(), sort_keys=False), encoding='utf-8')
    print(_table(result, settings, training, holdout))
    print()
    print(loop.table())
    print(f'samples lost: feedforward run {_coverage(recorded["feedforward_excitation"], settings.rate)}')
    for warning in result.warnings:
        print(f'warning: {warning}')
    print(f'wrote {path}, {report} and {loop_page}')
    say('done')
    return result


def _loop_summary(robot, recorded, runs, estimates) -> LoopSummary:
    """Tracking of the held-out trajectory without and with feedforward_node (the same trajectory, the
    approach before it left out) and the estimator's tables, against the twin's truth."""
    tracking = {}
    for name, (_, messages) in runs.items():
        sent = [(m.header.stamp.sec * 10**9 + m.header.stamp.nanosec,
                 trajectory_from_message(m, robot.joint_names)[0]) for m in messages if m.points]
        try:
            tracking[name] = tracking_error(recorded[name], sent, last_s=HOLDOUT_PERIOD_S)
        except InputError as error:
            raise DemoError(f'{name}: cannot score the tracking: {error}') from None
    truth = PlantParameters.defaults(robot).joints  # the twin's joints, as sim_node builds them
    return LoopSummary(robot.joint_names, tracking['holdout_excitation'], tracking['feedforward_excitation'],
                       estimate_history(estimates['stiffness'], robot.joint_names),
                       estimate_history(estimates['friction'], robot.joint_names), truth.alpha1)


def check_settings(settings: DemoSettings) -> DemoSettings:
    """Reject out-of-range demo settings with a clear reason."""
    if not 50.0 <= settings.rate <= 2000.0:
        raise InputError(f'--rate must be within 50–2000 Hz, got {settings.rate:g}')
    if not 1 <= settings.periods <= 30:
        raise InputError(f'--periods must be within 1–30, got {settings.periods}')
    if settings.holdout_seed < 0:
        raise InputError('--holdout-seed must be ≥ 0')
    builtin_excitation_path(load_robot(settings.robot).name)  # the demo runs the robot's shipped excitation
    return settings
