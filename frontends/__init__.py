"""Frontends: model files and estimators, `.sens` files, CLI flags and the Python API."""
