"""Frontends: model files and estimators, `.sens` files, CLI flags and the Python API."""

from . import data  # noqa: F401 - registers the reader of data files with the driver
