"""Lifecycle safety of a node that commands a robot: it commands only while active, zeros on every way out.

:class:`CommandingNode` is an rclpy LifecycleNode (feedforward_node is one) that

- reads its parameters at configure: a change of one of its own parameters (``use_sim_time``
  excepted) is refused unless the node is unconfigured;
- releases the publishers and subscriptions its configure made (``publishers_made``,
  ``subscriptions_made``) at cleanup, shutdown and error, after its inputs (:meth:`release_inputs`);
- stops commanding on every way out of active (deactivate, cleanup, shutdown, error, node
  destruction): the command timer (``timer``) goes, :meth:`publish_zeros` (the subclass's command
  that commands nothing) goes out and, on a streamed command topic (``commands``), is waited for until
  the subscribers acknowledge it: a forward_command_controller holds the last command forever.

:func:`run_lifecycle_node` is such a node's ``main``: the node shuts down (zeros) on Ctrl-C and SIGTERM.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass

import rclpy
from rcl_interfaces.msg import SetParametersResult
from rclpy.duration import Duration
from rclpy.exceptions import ParameterException, ParameterUninitializedException
from rclpy.executors import SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from rclpy.signals import SignalHandlerOptions

from dynid.errors import InputError
from dynid.ros.runner import PARENT_VARIABLE, node_message, ros_initialized
from dynid.settings import setting

SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE
ERROR = TransitionCallbackReturn.ERROR
ACK_TIMEOUT_S = 0.5  # how long a stop waits for the subscribers to acknowledge the zeros



@dataclass(frozen=True)
class LifecycleSettings:
    """How a commanding node starts (its parameter, :mod:`dynid.settings`)."""

    autostart: bool = setting(False, 'configure and activate at start-up', read_only=True)


class CommandingNode(LifecycleNode):
    """A lifecycle node that commands only while active (module docstring).

    Subclasses publish their zero command in :meth:`publish_zeros`, stop what feeds them in
    :meth:`release_inputs`, and keep ``state_label`` ('unconfigured', 'inactive', 'active', 'finalized')
    up to date in the transitions they implement (configure, activate).
    """

    def __init__(self, node_name: str, **kwargs) -> None:
        self.state_label = 'unconfigured'  # before LifecycleNode: destroy_node() may run on a failed start
        self.commands = self.timer = None
        self.publishers_made: list = []
        self.subscriptions_made: list = []
        super().__init__(node_name, **kwargs)
        self.add_on_set_parameters_callback(self._on_set_parameters)

    def parameter_value(self, name: str, default=None):
        """A parameter's value; ``default`` for one declared without a default and not given."""
        try:
            return self.get_parameter(name).value
        except ParameterUninitializedException:
            return default

    def _on_set_parameters(self, parameters) -> SetParametersResult:
        ours = [p.name for p in parameters if self.has_parameter(p.name) and p.name != 'use_sim_time']
        if ours and self.state_label != 'unconfigured':
            return SetParametersResult(successful=False, reason=f'{", ".join(ours)}: read at configure; clean '
                                                                f'up the node (state {self.state_label}) first')
        return SetParametersResult(successful=True)

    def _LifecycleNodeMixin__change_state(self, transition_id: int) -> TransitionCallbackReturn:
        """rclpy's transition (``trigger_*`` and the ``~/change_state`` service), refused with ERROR where the
        current state does not offer it.

        Jazzy's rclpy raises RCLError there, out of the service's callback, which ends the node: a client asking
        to activate an unconfigured node would stop the robot's feedforward. Kilted's logs the refusal and returns
        ERROR; this answers as Kilted does on both (rclpy's own method, named as its class mangles it).
        """
        if transition_id not in {offered[0] for offered in self._state_machine.available_transitions}:
            self.get_logger().error(f'transition {transition_id} is not offered in state '
                                    f'{self._state_machine.current_state[1]}: refused')
            return ERROR
        return super()._LifecycleNodeMixin__change_state(transition_id)

    # ------------------------------------------------------------------ what subclasses provide
    def publish_zeros(self) -> None:
        """Command nothing (on every way out of active)."""
        raise NotImplementedError

    def release_inputs(self) -> None:
        """Stop what feeds the node (before its endpoints go, at cleanup, shutdown, error and destruction)."""

    # -------------------------------------------------------------------------------- the way out
    def on_deactivate(self, state) -> TransitionCallbackReturn:
        self.stop_commanding('inactive')
        return super().on_deactivate(state)

    def on_cleanup(self, state) -> TransitionCallbackReturn:
        self.release('unconfigured')
        return SUCCESS

    def on_shutdown(self, state) -> TransitionCallbackReturn:
        self.release('finalized')
        return SUCCESS

    def on_error(self, state) -> TransitionCallbackReturn:
        self.release('unconfigured')
        return SUCCESS

    def stop_commanding(self, label: str) -> None:
        """No more commands: the timer goes, the state becomes ``label``, zeros go out and are acknowledged."""
        if self.timer is not None:
            self.destroy_timer(self.timer)
            self.timer = None
        self.state_label = label
        self.publish_zeros()
        if self.commands is not None and self.context.ok():  # the controller holds the last command forever
            self.commands.wait_for_all_acked(Duration(seconds=ACK_TIMEOUT_S))

    def release(self, label: str) -> None:
        """Stop commanding, then release the inputs and what configure made."""
        self.stop_commanding(label)
        self.release_inputs()
        for subscription in self.subscriptions_made:
            self.destroy_subscription(subscription)
        for publisher in self.publishers_made:
            self.destroy_publisher(publisher)
        self.subscriptions_made, self.publishers_made, self.commands = [], [], None

    def destroy_node(self) -> None:
        if self.context.ok() and self.state_label != 'finalized':
            self.stop_commanding(self.state_label)
        self.release_inputs()
        super().destroy_node()


def run_lifecycle_node(make_node: Callable[[], CommandingNode], name: str, args=None) -> None:
    """Run a :class:`CommandingNode` until Ctrl-C or SIGTERM, shutting it down (zeros) on the way out.

    rclpy's own signal handlers would shut the context down before zeros could be sent, so this takes
    SIGINT and SIGTERM as KeyboardInterrupt and spins in short turns to notice them. A node started by
    ``dynid bringup`` or ``dynid demo`` (environment ``DYNID_PARENT_PID``) also stops when that process
    is gone. Bad input (InputError, a refused parameter) exits with code 2 and a one-line reason.
    """
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    parent = os.environ.get(PARENT_VARIABLE)
    try:
        with ros_initialized(args, signal_handler_options=SignalHandlerOptions.NO):
            node = make_node()
            executor = SingleThreadedExecutor()
            executor.add_node(node)
            try:
                while rclpy.ok() and not (parent and os.getppid() != int(parent)):
                    executor.spin_once(timeout_sec=0.1)
            finally:
                if node.state_label != 'finalized' and node.context.ok():
                    node.trigger_shutdown()  # zeros, then the subscriptions go
                node.destroy_node()
    except KeyboardInterrupt:
        pass
    except (InputError, ParameterException) as error:
        print(f'{name}: error: {node_message(error) if isinstance(error, InputError) else error}', file=sys.stderr)
        raise SystemExit(2) from None
