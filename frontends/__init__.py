"""Frontends: inputs that become IR (model files and estimators, data, details, one-hot
groups), the one path from keywords to a checked Query (query_build.py), and plugins."""

from . import data  # noqa: F401 - registers the reader of data files with the driver
