"""A scikit-learn file (joblib / pickle) or a Pipeline may hold a model another format
reads: the sklearn format asks the registered formats, a format added at run time too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from treesens.readers import formats
from treesens.readers.formats.base import LoadOptions

joblib = pytest.importorskip("joblib")


class Marked:
    """An in-memory model that only MarkedFormat reads."""


READ_BY_MARKED = object()  # what MarkedFormat gives for a Marked model


class MarkedFormat:
    name = "marked"
    description = "a marked model"
    suffixes: tuple[str, ...] = ()
    sniff_last = False
    takes_base_score = False
    generic_names = None
    replayer = None

    def sniff(self, head: bytes, suffix: str) -> bool:
        return False

    def load_path(self, path: Path, options: LoadOptions):
        raise AssertionError("a marked model is only read in memory")

    def load_object(self, obj: Any):
        return READ_BY_MARKED if isinstance(obj, Marked) else None


@pytest.fixture
def marked_format():
    formats.register(MarkedFormat())
    try:
        yield
    finally:
        formats.unregister("marked")


def test_a_joblib_file_holding_a_model_a_registered_format_reads_is_read_by_that_format(
    marked_format, tmp_path
):
    path = tmp_path / "model.joblib"
    joblib.dump(Marked(), path)
    sklearn_format = formats.by_name("sklearn")
    assert sklearn_format.load_path(path, LoadOptions(trust_pickle=True)) is READ_BY_MARKED


def test_the_sklearn_format_asks_every_registered_format_but_itself():
    sklearn_format = formats.by_name("sklearn")
    others = sklearn_format.others()
    assert sklearn_format not in others
    assert {f.name for f in others} == set(formats.format_names()) - {"sklearn"}
