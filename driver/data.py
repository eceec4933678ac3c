"""The data set a query names (option ``data``), through a loader the frontends register.

Reading CSV / Parquet files is a frontend's job (frontends/data.py registers its loader
when imported); the driver accepts an in-memory ``Dataset`` as it is.
"""

from __future__ import annotations

from collections.abc import Callable

from ..compiler.dataset import Dataset
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.query import Query

DataLoader = Callable[[Ensemble, Query], "Dataset | None"]

_loaders: list[DataLoader] = []


def use_data_loader(loader: DataLoader) -> None:
    """Read the data of queries whose ``data`` option is not a Dataset with ``loader``."""
    _loaders[:] = [loader]


def dataset_for_query(ens: Ensemble, q: Query) -> Dataset | None:
    """The Dataset the query names (a path, DataFrame or Dataset), or None."""
    data = q.options.data
    if data is None:
        return None
    if isinstance(data, Dataset) and data.names == tuple(ens.feature_names):
        return data
    if not _loaders:
        raise InputError("this query names data, but no data reader is loaded (treesens.frontends)")
    return _loaders[0](ens, q)
