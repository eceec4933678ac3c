"""The box search alone (search/box_search.py) on benchmark instances: its verdict, the
boxes it visited and its time, without the heuristic or CP-SAT before it.

    python bench/box_search.py --instances bench/instance-lists/sample-hard4.txt --timeout 300

One JSON line per instance goes to --out (configuration `box-search`, in the form of
bench/run.py's results, so bench/confirm.py and bench/report.py read it), a table to
standard output. A proof is the
box search's own ("insensitive"); a pair it finds is shown as found, not replayed (the
pipeline replays it through the library before it answers).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from instances import tier  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", required=True, help="file of instance ids, one per line")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per instance")
    ap.add_argument("--out", default=None, help="JSON lines file (default: none)")
    args = ap.parse_args(argv)

    import treesens
    from treesens.compiler.encode import encode
    from treesens.interfaces.api import make_query
    from treesens.search.box_search import box_search
    from treesens.search.pair_boxes import applies, pair_tables

    lines = Path(args.instances).read_text().splitlines()
    wanted = [w for w in (ln.split("#", 1)[0].strip() for ln in lines) if w]
    insts, _, _ = tier("full", ("single",))
    by_id = {i.id: i for i in insts}
    missing = [w for w in wanted if w not in by_id]
    if missing:
        raise SystemExit(f"{args.instances}: unknown instance {missing[0]!r}")
    print("| instance | answer | boxes | build (s) | search (s) |")
    print("|---|---|---:|---:|---:|")
    for w in wanted:
        inst = by_id[w]
        model, details = inst.paths
        ens = treesens.load_model(model, details=details)
        t0 = time.time()
        enc = encode(ens, make_query(list(inst.features), gap=inst.gap))[1]
        if not applies(enc):
            print(f"| `{w}` | not applicable | | | |")
            continue
        tables = pair_tables(enc)
        t1 = time.time()
        res = box_search(enc, tables, t1 + args.timeout)
        t2 = time.time()
        # status in the results files' terms (bench/confirm.py reads them): a found
        # pair is not replayed here, so it is not validated
        status = {"proved": "insensitive", "found": "sensitive"}.get(res.status, "unknown")
        row = {"instance": w, "config": "box-search", "status": status, "validated": False}
        row |= {"search_status": res.status, "boxes": res.boxes, "time": {"total": t2 - t0}}
        row |= {"build": t1 - t0, "search": t2 - t1, "leaves": int(tables.values.shape[1])}
        print(f"| `{w}` | {res.status} | {res.boxes} | {t1 - t0:.1f} | {t2 - t1:.1f} |")
        if args.out:
            with open(args.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
