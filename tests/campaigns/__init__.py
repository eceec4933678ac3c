"""Differential campaigns against brute force, fuzzers, saved regressions."""
