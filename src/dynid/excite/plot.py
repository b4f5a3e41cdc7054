"""Plot of a trajectory: position, velocity and acceleration of every joint (PNG, matplotlib Agg)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dynid.excite.trajectory import Trajectory
from dynid.files import written


def plot_trajectory(trajectory: Trajectory, path: str | Path, title: str = '', samples: int = 2000) -> Path:
    """Write a 3-row figure (q [rad], q̇ [rad/s], q̈ [rad/s²] over t [s]) to ``path``."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    t = np.linspace(0.0, trajectory.duration_s, samples)
    values = trajectory.evaluate(t)
    figure, axes = plt.subplots(3, 1, sharex=True, figsize=(10, 8))
    for axis, value, label in zip(axes, values, ('position [rad]', 'velocity [rad/s]',
                                                 'acceleration [rad/s²]'), strict=True):
        for j, name in enumerate(trajectory.joint_names):
            axis.plot(t, value[:, j], label=name, linewidth=1)
        axis.set_ylabel(label)
        axis.grid(True, alpha=0.3)
    axes[0].legend(loc='upper right', fontsize='small', ncol=2)
    axes[-1].set_xlabel('time [s]')
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    path = Path(path)
    with written(path) as staging:
        figure.savefig(staging, dpi=100, format=path.suffix.lstrip('.') or 'png')
    plt.close(figure)
    return path
