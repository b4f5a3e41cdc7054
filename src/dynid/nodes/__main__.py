"""``python -m dynid.nodes <node> [--ros-args ...]``: run one node executable, as ``ros2 run dynid <node>`` does.

<node> is one of sim_node, excitation_node, identifier_node, estimator_node, feedforward_node, contact_node
(:data:`dynid.ros.runner.NODES`); a Ctrl-C ends it quietly, even while it still loads.
"""

import sys

from dynid.ros.runner import NODES, run_executable

if len(sys.argv) < 2 or sys.argv[1] not in NODES:
    print(f'usage: python -m dynid.nodes {{{",".join(NODES)}}} [--ros-args ...]', file=sys.stderr)
    raise SystemExit(2)
run_executable(sys.argv.pop(1))  # rclpy reads the rest of sys.argv
