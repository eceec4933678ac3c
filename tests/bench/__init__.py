"""The benchmark scripts (bench/)."""
