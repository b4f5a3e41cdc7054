"""BLAS held to one thread for the tall products of least squares (:func:`one_blas_thread`)."""

from __future__ import annotations

from threadpoolctl import ThreadpoolController

_BLAS_THREADS: list[ThreadpoolController] = []


def one_blas_thread():
    """Context in which BLAS runs one thread. Tall least-squares problems: on a shared machine more
    threads than free cores made the QR 10-50× slower, and one thread is as fast as two on a
    quiet one; the small products of the regressor's preparation too (base columns of 8192-sample
    pieces, the structural QR: two threads cost 0.5 s of CPU on a busy 2-core machine, with results
    equal to the last bit of the standard deviations)."""
    if not _BLAS_THREADS:
        # the controller knows the BLAS libraries loaded when it is made: scipy's own is loaded first
        import scipy.linalg  # noqa: F401

        _BLAS_THREADS.append(ThreadpoolController())
    return _BLAS_THREADS[0].limit(limits=1)
