"""Waiting inside a node's service coroutine without blocking its executor.

A service callback that is a coroutine (``async def``, in a reentrant callback group) can ``await``
these; the executor keeps running the node's other callbacks, and those of any node sharing it, while
it waits. Each wait ends at the latest after its timeout [s] on the node's clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from rclpy.node import Node
from rclpy.task import Future
from std_msgs.msg import String

from dynid.errors import InputError
from dynid.ros.runner import node_message


def wakeful_future(node: Node) -> Future:
    """A Future of ``node``'s executor whose completion (from any thread) wakes that executor."""
    future = Future(executor=node.executor)
    future.add_done_callback(lambda _: None)
    return future


async def with_timeout(node: Node, future: Future, timeout_s: float, default=None):
    """The result of ``future`` (made by :func:`wakeful_future`), or ``default`` after ``timeout_s``."""
    timer = node.create_timer(timeout_s, lambda: future.done() or future.set_result(default))
    try:
        return await future
    finally:
        node.destroy_timer(timer)


async def next_message(node: Node, message_type, topic: str, qos, timeout_s: float):
    """The next message on ``topic``, or None if none comes within ``timeout_s``.

    The topic is subscribed only while waiting: at driver rates a permanent subscription would cost the
    executor a turn per message for a value needed once.
    """
    received = wakeful_future(node)

    def take(message) -> None:
        if not received.done():
            received.set_result(message)

    subscription = node.create_subscription(message_type, topic, take, qos)
    try:
        return await with_timeout(node, received, timeout_s)
    finally:
        node.destroy_subscription(subscription)


async def until(node: Node, condition: Callable[[], bool], timeout_s: float, period_s: float = 0.05) -> bool:
    """Whether ``condition()`` held, checked every ``period_s`` for up to ``timeout_s``."""
    reached = wakeful_future(node)
    deadline = node.get_clock().now().nanoseconds + int(timeout_s * 1e9)

    def check() -> None:
        if not reached.done() and (condition() or node.get_clock().now().nanoseconds > deadline):
            reached.set_result(condition())

    timer = node.create_timer(period_s, check)
    try:
        return await reached
    finally:
        node.destroy_timer(timer)


async def in_thread(node: Node, work: Callable[[], object], name: str):
    """``work()`` run on a worker thread; its result, or the exception it raised (returned, not raised,
    so that a crash in the thread reaches the caller instead of being lost)."""
    done = wakeful_future(node)

    def run() -> None:
        try:
            done.set_result(work())
        except Exception as error:  # noqa: BLE001 - handed to the caller
            done.set_result(error)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await done


async def answer_with_job(node: Node, response, begin: Callable[[], object], work: Callable[[object], object],
                          what: str, publisher):
    """A Trigger service's answer from a job: ``begin()`` gives its input (an InputError refuses at once),
    ``work(input)`` runs on a worker thread (:func:`in_thread`), its ``document`` goes out on ``publisher`` (a
    std_msgs/String publisher) and its ``message`` answers. A refusal (InputError) is logged as a warning, a
    crash as an error; both answer success false with the reason; a success is logged as a warning where the
    outcome has ``warnings``. Returns (response, the job's outcome or None).
    """
    try:
        job_input = begin()
    except InputError as error:
        response.success, response.message = False, node_message(error)
        return response, None
    outcome = await in_thread(node, lambda: work(job_input), what)
    if isinstance(outcome, Exception):
        log = node.get_logger().warning if isinstance(outcome, InputError) else node.get_logger().error
        text = node_message(outcome) if isinstance(outcome, InputError) else str(outcome)
        log(f'{what} failed: {text if isinstance(outcome, InputError) else repr(outcome)}')
        response.success, response.message = False, text
        return response, None
    publisher.publish(String(data=outcome.document))
    response.success, response.message = True, outcome.message
    (node.get_logger().warning if getattr(outcome, 'warnings', None) else node.get_logger().info)(response.message)
    return response, outcome
