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

The plan (settings, the nodes' parameters) is :mod:`dynid.demo.plan`, the operator
:mod:`dynid.suite.demo_operator`, the validation, report and summary :mod:`dynid.demo.summary`.

Outputs in ``output``: ``recordings/recording_*`` (rosbag2 MCAP segments, the training one with the
node's ``result.yaml``), ``result.yaml`` (with the held-out validation metrics), ``report/index.html``.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import rclpy
import yaml
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from trajectory_msgs.msg import JointTrajectory

from dynid.demo.plan import DemoError, DemoSettings, suite_plan
from dynid.demo.summary import conclude
from dynid.errors import InputError
from dynid.identify import IdentificationResult
from dynid.io.cdr import stamp_ns
from dynid.io.trajectories import trajectory_of_message
from dynid.model import load_robot
from dynid.suite.bringup import NodeProcesses, build_suite, plan_suite
from dynid.suite.demo_operator import DemoOperator

IDENTIFY_TIMEOUT_S = 180.0


def run_demo(settings: DemoSettings, quiet: bool = False) -> IdentificationResult:
    """Run the demo (module docstring); returns the result with its held-out validation metrics."""
    begin = time.perf_counter()

    def say(text: str) -> None:
        if not quiet:
            print(f'[{time.perf_counter() - begin:6.1f} s] {text}', file=sys.stderr, flush=True)

    output = Path(settings.output)
    robot = load_robot(settings.robot)
    context = Context()
    rclpy.init(args=['dynid_demo', '--ros-args', '--log-level', 'warn'], context=context)
    executor = SingleThreadedExecutor(context=context)
    thread = None
    nodes, processes = {}, None
    parameters, excitations, suite = suite_plan(settings)
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
        operator = DemoOperator(context, settings.namespace, say, processes)
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

        runs, late = {}, {}
        for name in ('holdout_excitation', 'feedforward_excitation'):
            operator.sent.clear()
            folder = Path(operator.call('identifier_node/start_recording'))
            before = operator.twin_late
            operator.run_excitation(name)
            say(f'recorded {operator.call("identifier_node/stop_recording")}')
            runs[name], late[name] = (folder, list(operator.sent)), operator.twin_late - before
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

    runs = {name: (folder, _sent(name, messages, robot.joint_names)) for name, (folder, messages) in runs.items()}
    conclude(settings, robot, result, training_folder, runs, estimates, say, late)
    say('done')
    return result


def _sent(name: str, messages: list[JointTrajectory], joint_names) -> list:
    """What the joint controller was sent during run ``name``: [(start stamp [ns], PointTrajectory)]."""
    try:
        return [(stamp_ns(m.header.stamp), trajectory_of_message(m, joint_names)[0]) for m in messages if m.points]
    except InputError as error:
        raise DemoError(f'{name}: cannot score the tracking: {error}') from None
