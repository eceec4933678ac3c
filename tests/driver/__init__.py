"""The solve driver: stages, replay, data-aware runs, limits."""
