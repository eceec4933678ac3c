"""The data set a query names (option ``data``), as the driver uses it.

Reading CSV / Parquet files and DataFrames is a reader's job: the caller reads the data a
query names (readers/data.py ``dataset_for``) and passes the Dataset to the driver; a
query whose ``data`` is a Dataset already needs nothing more.
"""

from __future__ import annotations

from ..compiler.dataset import Dataset
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.query import Query


def dataset_for_query(ens: Ensemble, q: Query, data: Dataset | None = None) -> Dataset | None:
    """The Dataset of the query's ``data`` option: ``data`` (read by the caller from the
    path or DataFrame the query names), else the option itself when it is a Dataset;
    None when the query names no data."""
    named = q.plan.options.data
    if named is None:
        return None
    if data is None and isinstance(named, Dataset):
        data = named
    if data is None:
        raise InputError(
            "this query names a data file that was not read: pass its Dataset "
            "(treesens.readers.data.dataset_for) as data="
        )
    if data.names != tuple(ens.feature_names):
        raise InputError("the data set was loaded for a model with other features", data.source)
    return data
