"""The operator of ``dynid demo``: a node that drives the suite through its services, as a user would.

It starts the excitations and waits for them to end (``<excitation>/state``), records and identifies
through identifier_node's services, configures and activates feedforward_node through its parameter and
lifecycle services, and keeps what it hears: the identifier's result, the twin's latest stamp (from
``/diagnostics``: an excitation is over once the twin has caught up with it) and how many trajectories
reached it after their start, what the joint controller is sent and the estimator's tables. Steps that do
not complete raise :class:`dynid.demo.plan.DemoError`.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState
from rcl_interfaces.msg import Parameter as ParameterMessage
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.context import Context
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from dynid.demo.plan import EXCITATIONS, DemoError, excitation_progress
from dynid.suite.bringup import NodeProcesses

SERVICE_TIMEOUT_S = 60.0  # how long a service may take to answer
#: how long a node process may take to offer its services, or the twin to publish its first sample, while the
#: processes live: seven Python processes importing ROS, pinocchio and dynid (~4 s of CPU each) and the twin's
#: first compilation (~6 s of CPU) took over 60 s on a busy 2-core machine
STARTUP_TIMEOUT_S = 300.0
CATCH_UP_TIMEOUT_S = 60.0  # how long the running twin may publish nothing new before the demo gives up


class DemoOperator:
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
        self.twin_late = 0  # trajectories the twin received after their start (sim_node's late_trajectories)
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
                                          lambda m, t=table: self._on_estimate(t, m), 10)
        self.clients: dict[str, object] = {}

    def _on_estimate(self, table: str, message: Float64MultiArray) -> None:
        """Keeps (receive time [s], layout labels, layout sizes, data) for
        :func:`dynid.demo.summary.estimate_history`."""
        self.estimates[table].append((time.monotonic(), [d.label for d in message.layout.dim],
                                      [d.size for d in message.layout.dim], message.data))

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            if status.name == self.twin_status:
                values = {v.key: v.value for v in status.values}
                self.twin_stamp_ns = int(values.get('last_stamp_ns', 0))
                self.twin_late = int(values.get('late_trajectories', 0))

    def check_processes(self) -> None:
        """DemoError if a node process has stopped."""
        exited = self.processes.exited() if self.processes is not None else {}
        if exited:
            raise DemoError(', '.join(f'{name} stopped (exit code {code})' for name, code in exited.items()))

    def wait_for_twin(self, clock_ns: int) -> None:
        """Wait until the twin has published samples stamped at or after ``clock_ns``, as long as it makes
        progress: DemoError when a node process stopped, or the twin published nothing new for
        :data:`CATCH_UP_TIMEOUT_S` (:data:`STARTUP_TIMEOUT_S` before its first sample)."""
        last, progress = self.twin_stamp_ns, time.monotonic()
        while self.twin_stamp_ns < clock_ns:
            self.check_processes()
            if self.twin_stamp_ns != last:
                last, progress = self.twin_stamp_ns, time.monotonic()
            limit = CATCH_UP_TIMEOUT_S if last else STARTUP_TIMEOUT_S
            if time.monotonic() - progress > limit:
                raise DemoError(f'the twin published nothing new for {limit:g} s')
            time.sleep(0.1)

    def request(self, service_type, service: str, request, timeout: float = SERVICE_TIMEOUT_S):
        """Call a service (relative name) and return its response; DemoError if it does not answer."""
        client = self.clients.get(service) or self.node.create_client(service_type, service)
        self.clients[service] = client
        end = time.monotonic() + STARTUP_TIMEOUT_S
        while not client.wait_for_service(timeout_sec=1.0):  # the node may still be starting: while it lives
            self.check_processes()
            if time.monotonic() > end:
                raise DemoError(f'service {client.srv_name} is not available after {STARTUP_TIMEOUT_S:g} s')
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
                self.say(excitation_progress(name, last - start, seconds))
            if time.monotonic() - start > 2 * seconds + 30:
                raise DemoError(f'{name} did not finish')
        self.wait_for_twin(self.node.get_clock().now().nanoseconds)
