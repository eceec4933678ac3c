"""The pair tables of one max gap (search/pair_boxes.py) built alone, in this fresh
process: build time (wall and CPU), resident memory before, at the peak of the build
and after, and a digest of the tables, to compare two commits' tables and their cost.

    PYTHONPATH=PARENT python bench/pair_tables_probe.py MODEL FEATURE [--no-boxes]

Reads the query as a max gap does (the gap rows at gap 0); resets the process's
high-water mark (Linux: ``5`` written to ``/proc/self/clear_refs``) before the build.
``--no-boxes``: the tables a max gap's compiled search reads (no leaf boxes recorded;
the digest reads the boxes derived from the nodes). The digest covers the boxes, the
values, the tree starts, every node, the thresholds and the columns: equal digests,
equal tables. Runs with commits before the tables were arrays too (``--no-boxes``
aside).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import time
from pathlib import Path


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("feature")
    ap.add_argument("--no-boxes", action="store_true")
    args = ap.parse_args()
    import numpy as np

    import treesens
    from treesens.compiler.query import Gap, GapKind
    from treesens.interfaces.api import make_query
    from treesens.search.pair_boxes import pair_tables
    from treesens.search.pair_scope import class_pair_encodings, pair_encoding

    ens = treesens.load_model(args.model)
    at_zero = make_query([args.feature], gap=0.2).with_(gap=Gap(0.0, GapKind.PROB))
    encs = class_pair_encodings(pair_encoding(ens, at_zero))
    gc.collect()
    before = _status_mb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    kw = {"boxes": False} if args.no_boxes else {}
    t0, c0 = time.time(), time.process_time()
    tabs = [pair_tables(e, **kw) for e in encs]
    wall, cpu = time.time() - t0, time.process_time() - c0
    peak, held = _status_mb("VmHWM"), _status_mb("VmRSS")
    h = hashlib.sha256()
    leaves = 0
    for tab in tabs:
        for a in (tab.lo, tab.hi, tab.values, tab.starts, tab.thresholds, tab.sizes):
            h.update(np.ascontiguousarray(a).tobytes())
            h.update(str(a.dtype).encode())
        for nodes in tab.nodes:
            h.update(np.asarray(nodes, dtype=np.int64).reshape(-1, 7).tobytes())
        h.update(repr((tab.columns, tab.sums, tab.first_sum)).encode())
        leaves += tab.values.shape[1]
    row = {
        "model": Path(args.model).name,
        "feature": args.feature,
        "boxes": not args.no_boxes,
        "pair_leaves": leaves,
        "build_s": round(wall, 2),
        "build_cpu_s": round(cpu, 2),
        "rss_before_mb": round(before),
        "peak_mb": round(peak),
        "held_mb": round(held),
        "peak_bytes_per_pair_leaf": round((peak - before) * 2**20 / max(leaves, 1)),
        "digest": h.hexdigest()[:16],
    }
    print(json.dumps(row))


if __name__ == "__main__":
    main()
