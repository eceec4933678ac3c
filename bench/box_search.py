"""The box search alone (search/box_search.py) on benchmark instances: its verdict, the
boxes it visited and its time, without the heuristic or CP-SAT before it.

    python bench/box_search.py --instances bench/instance-lists/sample-hard4.txt --timeout 300

``--searches python,compiled`` runs, on each instance's tables one after the other, the
search box_search.py has and the compiled one a check takes on large tables
(search/compiled_check.py; configuration `box-search-compiled`), for their ratio in one
run.

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
    ap.add_argument("--instances", help="file of instance ids, one per line")
    ap.add_argument("--model", help="or a model file: each of its features at each --gaps")
    ap.add_argument("--details", help="the --model's details.csv")
    ap.add_argument(
        "--gaps", default="0.45,0.499", help="the --model's gaps (default: %(default)s)"
    )
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per instance")
    ap.add_argument("--out", default=None, help="JSON lines file (default: none)")
    ap.add_argument(
        "--searches", default="python", help="python, compiled or both (python,compiled)"
    )
    args = ap.parse_args(argv)
    searches = [s.strip() for s in args.searches.split(",") if s.strip()]
    if not searches or set(searches) - {"python", "compiled"}:
        raise SystemExit(f"--searches: python and/or compiled, not {args.searches!r}")
    if (args.instances is None) == (args.model is None):
        raise SystemExit("give --instances or --model")

    import treesens

    if "compiled" in searches:  # its first run's compile is not the search's time
        from treesens.search import gap_kernel

        gap_kernel.prepare()
    print("| instance | search | answer | boxes | build (s) | search (s) |")
    print("|---|---|---|---:|---:|---:|")
    for w, model, details, features, gap in _instances(args):
        ens = treesens.load_model(model, details=details)
        for row in _searched(ens, w, features, gap, searches, args.timeout):
            print(
                f"| `{w}` | {row['search_kind']} | {row['search_status']} | {row['boxes']} "
                f"| {row['build']:.1f} | {row['search']:.1f} |"
            )
            if args.out:
                with open(args.out, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
    return 0


def _instances(args):
    """(id, model, details, features, gap) of each instance asked."""
    if args.model is not None:
        import treesens

        names = treesens.load_model(args.model, details=args.details).feature_names
        stem = Path(args.model).stem
        gaps = [float(g) for g in args.gaps.split(",")]
        return [
            (f"{stem}|{f}|g={g}", args.model, args.details, (f,), g) for f in names for g in gaps
        ]
    lines = Path(args.instances).read_text().splitlines()
    wanted = [w for w in (ln.split("#", 1)[0].strip() for ln in lines) if w]
    insts, _, _ = tier("full", ("single",))
    by_id = {i.id: i for i in insts}
    missing = [w for w in wanted if w not in by_id]
    if missing:
        raise SystemExit(f"{args.instances}: unknown instance {missing[0]!r}")
    return [(w, *by_id[w].paths, tuple(by_id[w].features), by_id[w].gap) for w in wanted]


def _searched(ens, w: str, features, gap: float, searches: list[str], timeout: float):
    """Each search's line on one instance's tables (built once)."""
    from treesens.compiler.encode import encode
    from treesens.interfaces.api import make_query
    from treesens.search.box_search import box_search
    from treesens.search.compiled_check import CompiledBoxSearch
    from treesens.search.pair_boxes import pair_tables
    from treesens.search.pair_scope import applies

    t0 = time.time()
    enc = encode(ens, make_query(list(features), gap=gap))[1]
    if not applies(enc):
        return []
    tables = pair_tables(enc)
    build = time.time() - t0
    rows = []
    for kind in searches:
        t1 = time.time()
        if kind == "python":
            res = box_search(enc, tables, t1 + timeout)
        else:
            res = CompiledBoxSearch(enc, tables).run(t1 + timeout)
        took = time.time() - t1
        # status in the results files' terms (bench/confirm.py reads them): a found
        # pair is not replayed here, so it is not validated
        status = {"proved": "insensitive", "found": "sensitive"}.get(res.status, "unknown")
        config = "box-search" if kind == "python" else "box-search-compiled"
        row = {"instance": w, "config": config, "status": status, "validated": False}
        row |= {"search_kind": kind, "search_status": res.status, "boxes": res.boxes}
        row |= {"time": {"total": build + took}, "build": build, "search": took}
        rows.append(row | {"leaves": int(tables.values.shape[1])})
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
