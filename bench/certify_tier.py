"""Certify and verify "insensitive" answers of the full tier (docs/certificates.md).

For each instance of a list (default bench/instance-lists/full-insensitive.txt: the full tier's
"insensitive" answers; multiclass ids ``...|c=C1,C2`` too, e.g.
bench/instance-lists/multiclass-600-insensitive.txt): the box search writes its proof (``questions.certify``), then
the independent checker (``treesens.verify``) re-checks it, each in a fresh process with
a time limit. One JSON line per instance: whether a certificate was written, its boxes
and size, the time to write it and to verify it, and the checker's verdict::

    python bench/certify_tier.py --timeout 300 --out bench/results/certificates.jsonl
    python bench/certify_tier.py --report bench/results/certificates.jsonl
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from instances import MODELS, SHARED, Instance  # noqa: E402
from outputs import add_results_args, read_lines, run_or_report  # noqa: E402


def _instance(line: str) -> Instance:
    """An instance from its id, ``model|F1+F2|g=G`` or (multiclass) ``...|c=C1,C2``
    (a class or ``any``)."""
    model, features, gap, *rest = line.split("|")
    classes = None
    if rest:
        classes = tuple(c if c == "any" else int(c) for c in rest[0].removeprefix("c=").split(","))
    return Instance(model, tuple(features.split("+")), float(gap.removeprefix("g=")), classes)


def _certify_and_verify(args) -> dict:
    inst, timeout, workdir = args
    import treesens
    from treesens.questions.certify import certify
    from treesens.questions.query_build import make_query
    from treesens.verify import verify_file

    model, details = MODELS[inst.model]
    model_path = str(SHARED / model)
    ens = treesens.load_model(model_path, details=str(SHARED / details) if details else None)
    q = make_query(list(inst.features), gap=inst.gap, classes=inst.classes)
    path = Path(workdir) / "certificate.json"
    t0, c0 = time.time(), time.process_time()
    done = certify(ens, q, path, model_path, timeout, verify=False)  # verified below, timed
    line = {
        "id": inst.id,
        "written": done.written,
        "message": done.message,
        "boxes": done.boxes,
        "certify_s": round(time.time() - t0, 3),
        "certify_cpu_s": round(time.process_time() - c0, 3),
    }
    if done.written:
        line["bytes"] = path.stat().st_size
        t1, c1 = time.time(), time.process_time()
        verdict = verify_file(path)
        line.update(
            valid=verdict.valid,
            verdict=verdict.message,
            verify_s=round(time.time() - t1, 3),
            verify_cpu_s=round(time.process_time() - c1, 3),
        )
    return line


def run(ids: list[str], timeout: float, out: Path) -> None:
    done = set()
    if out.exists():
        done = {json.loads(ln)["id"] for ln in out.read_text().splitlines() if ln.strip()}
    ctx = mp.get_context("spawn")
    with out.open("a") as fh, tempfile.TemporaryDirectory() as tmp:
        for line_id in ids:
            if line_id in done:
                continue
            inst = _instance(line_id)
            with ctx.Pool(1) as pool:
                try:
                    line = pool.apply(_certify_and_verify, ((inst, timeout, tmp),))
                except Exception as e:  # one instance's failure is recorded, the others go on
                    line = {"id": line_id, "written": False, "message": f"{type(e).__name__}: {e}"}
            fh.write(json.dumps(line) + "\n")
            fh.flush()
            print(json.dumps(line), flush=True)


def report(path: Path) -> str:
    lines = [json.loads(ln) for ln in read_lines(path) if ln.strip()]
    written = [d for d in lines if d.get("written")]
    valid = [d for d in written if d.get("valid")]

    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2] if xs else float("nan")

    out = [
        f"{len(lines)} instances; certificates written {len(written)}, verified valid "
        f"{len(valid)}, invalid {len(written) - len(valid)}",
        "",
        "| figure | median | largest |",
        "|---|---:|---:|",
    ]
    for key, name in (
        ("boxes", "boxes"),
        ("bytes", "size (bytes)"),
        ("certify_s", "time to write (s)"),
        ("certify_cpu_s", "CPU time to write (s)"),
        ("verify_s", "time to verify (s)"),
        ("verify_cpu_s", "CPU time to verify (s)"),
    ):
        xs = [d[key] for d in written if key in d]
        if xs:
            out.append(f"| {name} | {median(xs):,.3g} | {max(xs):,.3g} |")
    missing = [d for d in lines if not d.get("written")]
    if missing:
        out += ["", "Not written:", ""] + [f"- {d['id']}: {d['message']}" for d in missing]
    bad = [d for d in written if not d.get("valid")]
    if bad:
        out += ["", "Invalid:", ""] + [f"- {d['id']}: {d['verdict']}" for d in bad]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--instances", default=str(HERE / "instance-lists" / "full-insensitive.txt"))
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds for the box search")
    add_results_args(ap, HERE / "results" / "certificates.jsonl", "the summary")
    args = ap.parse_args(argv)

    def run_listed(out: Path) -> None:
        text = Path(args.instances).read_text().splitlines()
        ids = [ln.split("#", 1)[0].strip() for ln in text if ln.split("#", 1)[0].strip()]
        run(ids, args.timeout, out)

    return run_or_report(args, run_listed, report)


if __name__ == "__main__":
    sys.exit(main())
