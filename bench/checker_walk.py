"""The checker's two walks side by side on the same certificates: the live-set walk
(verify/walk.py, what ``treesens verify`` runs) and ``Checker.run`` (each pruned box's
bound recomputed over every column), the CPU seconds of each, and their verdicts
(which must agree).

    python bench/checker_walk.py DIR [--every N] [--largest K] [--new-only]

Each certificate of DIR (sorted by size), every N-th of them plus the K largest, is
verified in this process by both walks in turn; one line of JSON per certificate, then
the totals. ``--new-only``: the live-set walk alone (every certificate of the sample).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def _cpu_of(fn):
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--largest", type=int, default=0)
    ap.add_argument("--new-only", action="store_true")
    args = ap.parse_args(argv)

    from treesens.verify import check

    files = sorted(Path(args.folder).glob("*.json"), key=lambda p: p.stat().st_size)
    chosen = set(files[:: args.every]) | set(files[len(files) - args.largest :])
    walker = check.Walker
    total = {"new": 0.0, "old": 0.0, "files": 0, "agree": 0}
    for path in sorted(chosen, key=lambda p: p.stat().st_size):
        check.Walker = walker
        check.verify_file(path)  # warm: the model read, the library imported
        new, new_s = _cpu_of(lambda p=path: check.verify_file(p))
        line = {"file": path.name, "bytes": path.stat().st_size, "boxes": new.boxes}
        line |= {"valid": new.valid, "new_cpu": round(new_s, 3)}
        total["new"] += new_s
        total["files"] += 1
        if not args.new_only:
            check.Walker = lambda checker: checker  # Checker.run walks
            old, old_s = _cpu_of(lambda p=path: check.verify_file(p))
            line |= {"old_cpu": round(old_s, 3), "same_verdict": old == new}
            total["old"] += old_s
            total["agree"] += old == new
        print(json.dumps(line), flush=True)
    check.Walker = walker
    print(json.dumps({"total": total}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
