"""Backends at the constraint-IR level, workers, solver parameters."""
