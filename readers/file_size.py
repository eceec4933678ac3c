"""A model file's size in trees and leaves, read before the model is loaded, where the
format allows it cheaply: a memory limit can then refuse it before the load
(questions/memory.py).

A skops file is a zip of its arrays as ``.npy`` files: each tree of a scikit-learn
forest (or a HistGradientBoosting predictor) is one array of nodes, whose ``.npy`` header
gives its length without reading it. A binary tree of N nodes has (N + 1) / 2 leaves.
The scale tier's forest of 500 deep trees: 1,681,756 leaves in about a second, where its
load takes 11 s and 1 GB. Other formats give their leaves only by reading the trees:
None.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

from numpy.lib import format as npy

# the fields of a tree's node array: scikit-learn's Tree, HistGradientBoosting's nodes
NODE_FIELDS = ({"left_child", "right_child"}, {"left", "right", "is_leaf"})


@dataclass(frozen=True)
class FileSize:
    trees: int
    leaves: int

    def __str__(self) -> str:
        return f"{self.trees:,} trees, {self.leaves:,} leaves"


def size_before_load(path) -> FileSize | None:
    """The trees and leaves of the model file ``path``, read without loading it (None:
    not a skops file, none found, or the file cannot be read so; the load then says
    what is wrong with it)."""
    p = Path(path)
    if p.suffix.lower() != ".skops" or not p.is_file():
        return None
    trees = leaves = 0
    try:
        with zipfile.ZipFile(p) as z:
            for name in z.namelist():
                if name.endswith(".npy"):
                    nodes = _node_count(z, name)
                    if nodes is not None:
                        trees += 1
                        leaves += (nodes + 1) // 2
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        return None
    return FileSize(trees, leaves) if trees else None


def _node_count(z: zipfile.ZipFile, name: str) -> int | None:
    """The length of the array ``name`` when it is a tree's nodes (its header alone)."""
    with z.open(name) as fh:
        version = npy.read_magic(fh)
        read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, _, dtype = read(fh)
    fields = set(dtype.names or ())
    if len(shape) == 1 and any(need <= fields for need in NODE_FIELDS):
        return int(shape[0])
    return None
