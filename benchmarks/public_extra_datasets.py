"""The public datasets ``bench_public.py`` reads beside ``public_datasets.py``'s, each as a
:class:`public_datasets.Case` (read with dynid's own front ends, as a user would; nothing of them is copied into
dynid, derived files go to the run's temporary folder):

- ``--gaz DIR`` (env ``DYNID_GAZ_DATA``): ``git clone https://github.com/marcocognetti/FrankaEmikaPandaDynModel``
  (Gaz et al. 2019). The Panda log of their exciting trajectory (``matlab/data/Exciting_Traj/Trajectory_1/rbt_log/
  exciting_traj_{time,positions,velocity,torques}.txt``: 20 544 samples at about 1 kHz, Franka's joint torque
  sensors [N·m]) is stored one value a line, the seven joints of a sample one after another; reading it needs those
  lines put side by side, one sample a row (a CSV in the temporary folder, values unchanged), then ``dynid import
  --columns 'time=t,q=q{i},dq=dq{i},tau=tau{i}' --robot panda``. Identified on the first 70 % in time, held out on
  the rest. The reference, Gaz et al. 2019's model (M(q)·q̈ + C(q, q̇)·q̇ + g(q) + their friction sigmoid), is
  **reproduced**: their generated sources (``cpp/panda_dyn_model_example/src``) are compiled with ``g++`` against a
  few lines standing in for the parts of Eigen they use (indexing, Zero) and evaluated on dynid's filtered states
  of the held-out rows; the same model is the unisa Panda's reference where this checkout is given.
- ``--lbr DIR`` (env ``DYNID_LBR_DATA``): ``git clone https://github.com/lbr-stack/dynamic_parameter_identification``.
  The KUKA LBR Med 7 log (``src/test/measurements.csv``, 100 Hz, no time column, torque counted the other way round
  from the robot file, ``urdf/med/med7dock.urdf``) as ``bench_any_log.py`` reads it (``--rate 100``, ``--torque-sign
  all=-1``), identified on the first 70 % in time and held out on the rest. Reference: the authors' least squares
  as their ``src/regression.py`` runs it, **re-implemented** (``bench_any_log._authors_method``: their filters, on
  the raw positions of the same rows; they publish no accuracy figure to quote).

The Stäubli TX40 of figaroh-plus (``--figaroh-plus``) is read and scored by ``public_tx40.py``.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np

from benchmarks import public_datasets
from benchmarks.public_datasets import Case, dynid, say

GAZ_LOG = Path('matlab/data/Exciting_Traj/Trajectory_1/rbt_log')
GAZ_SOURCES = Path('cpp/panda_dyn_model_example')
#: the parts of Eigen the generated sources use: fixed-size matrices indexed (i, j), (i) or [i], and Zero()
EIGEN_STAND_IN = '''#pragma once
#include <cmath>
namespace Eigen {
template <typename T, int R, int C> struct Matrix {
  T v[R * C] = {};
  Matrix() {}
  explicit Matrix(int) {}
  T& operator()(int i, int j) { return v[i * C + j]; }
  const T& operator()(int i, int j) const { return v[i * C + j]; }
  T& operator()(int i) { return v[i]; }
  const T& operator()(int i) const { return v[i]; }
  T& operator[](int i) { return v[i]; }
  const T& operator[](int i) const { return v[i]; }
  static Matrix Zero() { return Matrix(); }
};
}
'''
GAZ_WRAPPER = '''#include "franka_model.h"
extern "C" void gaz_torque(const double* q, const double* dq, const double* ddq, double* tau) {
  Eigen::Vector7d Q, D, A;
  for (int i = 0; i < 7; ++i) { Q(i) = q[i]; D(i) = dq[i]; A(i) = ddq[i]; }
  Eigen::Matrix7d M = MassMatrix(Q), C = CoriolisMatrix(Q, D);
  Eigen::Vector7d g = GravityVector(Q), f = Friction(D);
  for (int i = 0; i < 7; ++i) {
    double s = g(i) + f(i);
    for (int j = 0; j < 7; ++j) s += M(i, j) * A(j) + C(i, j) * D(j);
    tau[i] = s;
  }
}
'''


def gaz_model(root: Path, folder: Path):
    """Gaz et al. 2019's Panda model compiled from the checkout (module docstring): (q, q̇, q̈) → τ [N·m] (N, 7); None
    without g++ or where it does not compile."""
    compiler, sources = shutil.which('g++'), root / GAZ_SOURCES
    if compiler is None or not (sources / 'src' / 'CoriolisMatrix.cpp').is_file():
        return None
    (folder / 'gaz' / 'Eigen').mkdir(parents=True, exist_ok=True)
    (folder / 'gaz' / 'Eigen' / 'Core').write_text(EIGEN_STAND_IN)
    (folder / 'gaz' / 'wrapper.cpp').write_text(GAZ_WRAPPER)
    library = folder / 'gaz' / 'gaz.so'
    say('gaz: compiling Gaz et al. 2019\'s generated model (about 20 s)')
    parts = [str(sources / 'src' / f'{name}.cpp') for name in ('MassMatrix', 'CoriolisMatrix', 'GravityVector',
                                                                'FrictionTorque')]
    compiled = subprocess.run([compiler, '-O0', '-shared', '-fPIC', '-I', str(folder / 'gaz'), '-I',
                               str(sources / 'include'), *parts, str(folder / 'gaz' / 'wrapper.cpp'), '-o',
                               str(library)], capture_output=True, text=True)
    if compiled.returncode != 0:
        say(f'gaz: their model did not compile (quoted instead): {compiled.stderr.strip()[:300]}')
        return None
    torque_of = ctypes.CDLL(str(library)).gaz_torque
    pointer = ctypes.POINTER(ctypes.c_double)

    def torque(q, dq, ddq):
        out, row = np.zeros((len(q), 7)), np.zeros(7)
        for k in range(len(q)):
            arrays = [np.ascontiguousarray(a[k], dtype=float) for a in (q, dq, ddq)]
            torque_of(*(a.ctypes.data_as(pointer) for a in arrays), row.ctypes.data_as(pointer))
            out[k] = row
        return out
    return torque


def gaz_cases(root: Path, folder: Path, model) -> list:
    """Gaz et al. 2019's Panda log (module docstring) as a :class:`Case`; ``model``: :func:`gaz_model`'s."""
    log = root / GAZ_LOG
    files = {signal: log / f'exciting_traj_{signal}.txt' for signal in ('time', 'positions', 'velocity', 'torques')}
    missing = [str(path) for path in files.values() if not path.is_file()]
    if missing:
        return [Case('gaz_panda', 'panda', None, status=f'missing: {", ".join(missing)}')]
    time = np.loadtxt(files['time'])
    q, dq, tau = (np.loadtxt(files[name]).reshape(time.size, 7) for name in ('positions', 'velocity', 'torques'))
    csv = folder / 'gaz_panda.csv'
    header = ['t', *(f'{name}{i}' for name in ('q', 'dq', 'tau') for i in range(7))]
    np.savetxt(csv, np.column_stack([time, q, dq, tau]), delimiter=',', header=','.join(header), comments='',
               fmt='%.10g')
    bag = folder / 'gaz_panda'
    say(f'gaz_panda: dynid import of the log ({time.size} samples), identify on the first '
        f'{1 - public_datasets.HOLDOUT:g}')
    dynid(['import', str(csv), '--columns', 'time=t,q=q{i},dq=dq{i},tau=tau{i}', '--robot', 'panda', '-o', str(bag)])
    source = ('Gaz 2019, reproduced (their generated model, compiled)' if model is not None else
              'Gaz 2019: not reproduced (no g++) and no held-out figure published to quote')
    return [Case('gaz_panda', 'panda', bag, authors=model, authors_source=source)]


def lbr_cases(root: Path, folder: Path) -> list:
    """The LBR Med 7 log (module docstring) as a :class:`Case`."""
    from benchmarks import bench_any_log  # noqa: PLC0415
    from dynid.model import load_robot

    source, urdf = root / 'src' / 'test' / 'measurements.csv', root / 'urdf' / 'med' / 'med7dock.urdf'
    missing = [str(path) for path in (source, urdf) if not path.is_file()]
    if missing:
        return [Case('lbr_med7', str(urdf), None, status=f'missing: {", ".join(missing)}')]
    bag = folder / 'lbr_med7'
    say('lbr_med7: dynid import of the log (100 Hz, no time column), identify on the first 70 %')
    dynid(['import', str(source), '--columns', 'q=q_{i},tau=tau_{i}', '--rate', '100', '--robot', str(urdf), '-o',
           str(bag)])
    robot = load_robot(str(urdf))
    table = np.loadtxt(source, delimiter=',', skiprows=1)
    cut = int(round((1.0 - public_datasets.HOLDOUT) * table.shape[0]))

    def authors_of(dataset):
        torque = bench_any_log._authors_method(robot, table[:cut, :7], -table[:cut, 7:14], dataset.q, 100.0)

        def torque_of(q, dq, ddq):
            if len(q) != len(torque):
                raise ValueError(f'the authors\' model holds {len(torque)} rows, the recording {len(q)}')
            return torque
        return torque_of
    return [Case('lbr_med7', str(urdf), bag, extra=('--torque-sign', 'all=-1'), torque_sign=-1.0,
                 authors_of=authors_of, authors_source='the authors\' least squares (src/regression.py), '
                                                       're-implemented (bench_any_log.py)')]
