"""Feedforward laws and their pluggable terms (planned)."""
