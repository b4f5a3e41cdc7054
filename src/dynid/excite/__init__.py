"""Excitation trajectories: optimized Fourier series and the seeds' special experiments (planned)."""
