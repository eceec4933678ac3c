"""Model formats, details and data files, sweeps, executors, the audit."""
