"""The scale tier: production-size models, every feature checked and its max gap bounded.

    python bench/models/train_scale.py --datasets adult          # the models, once
    nice -n 19 python bench/scale_tier.py [--datasets adult] [--models xgb_t1000_d8,...]
        [--features NAMES] [--gaps 0.1,0.2,0.3] [--kinds check,max_gap] [--again]
        [--check-timeout 60] [--max-gap-timeout 120] [--grace 60] [--memory-cap-mb 8000]
        [--models-dir bench/results/scale-models] [--out bench/results/scale-tier.jsonl]
    python bench/scale_tier.py --report bench/results/scale-tier.jsonl   # the report again

Each model (bench/models/train_scale.py's keys) runs in a fresh process. There, treesens
is imported and the model loaded (times recorded apart), then every feature some split
reads is checked at each gap (``treesens.check``, the default settings,
``--check-timeout`` each), then its max gap is searched (``treesens.max_gap``, tolerance
``--tolerance``, ``--max-gap-timeout`` each): every query has its own time limit. One
JSON line per event (the load, each query) is appended to ``--out`` as it ends, so a long
run can be watched and, rerun with the same command, resumes: the queries already in the
file are skipped (``--again`` asks them once more; the report keeps each query's last
line). Each line records the wall and CPU time, the query's own peak memory and the peak
so far of the model's process and of its largest solver process (class ``Peaks``), the
commit and the load average. A watchdog thread ends a query that overruns its limit by
``--grace`` seconds or holds more than ``--memory-cap-mb`` (its line says ``killed`` and
why); the model then starts again for the queries left. The report (a summary row per
model, a table per model) goes beside ``--out`` (``.md``) and is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

_STARTED = time.perf_counter()  # treesens' import time is counted from here (stdlib before)
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "models"))

from outputs import read_lines, repo_commit  # noqa: E402
from train_scale import DATASETS, DEFAULT_OUT, SPECS, model_path  # noqa: E402

GRACE = 60.0  # default seconds past a query's limit before its watchdog ends it
LOAD_GRACE = 600.0  # seconds for the imports and the load
MB = 1024.0  # ru_maxrss and /proc's fields are in KiB on Linux
LIMIT_MB = 2048.0  # issue 47: every scale-tier query within 2 GB (main + solver)
OVERRAN, LOAD_OVERRAN = 3, 4  # exit codes of a model's process its watchdog ended


class Peaks:
    """Peak resident memory in MB of the model's process and of its largest solver
    process: of the query in flight (``query_peak_*``) and so far (``peak_*``).

    Each query starts by resetting the high-water marks (``VmHWM``) of this process and of
    the running solver processes (Linux: ``5`` written to ``/proc/PID/clear_refs``), so a
    query's peak is its own, not that of a query before it; where that is refused, the
    query's peak is the peak so far (``peak_reset`` false). A solver process that ended
    during the query counts by ``getrusage`` of the children, when its peak is the largest
    of the ended ones."""

    def __init__(self):
        self.main = self.worker = 0.0  # so far
        self.ended_before = 0.0
        self.reset = True

    def start(self) -> None:
        from treesens.backends.worker import live_pids

        self.reset = all(_reset_hwm(p) for p in ["self", *live_pids()])
        self.ended_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / MB

    def read(self) -> dict:
        from treesens.backends.worker import live_pids

        main = (
            _status_mb("self", "VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / MB
        )
        ended = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / MB
        running = max((_status_mb(p, "VmHWM") for p in live_pids()), default=0.0)
        worker = max(running, ended if ended > self.ended_before else 0.0)
        self.main, self.worker = max(self.main, main), max(self.worker, worker)
        return {
            "query_peak_main_mb": round(main, 1),
            "query_peak_worker_mb": round(worker, 1),
            "peak_main_mb": round(self.main, 1),
            "peak_worker_mb": round(max(self.worker, ended), 1),
            "peak_reset": self.reset,
        }


def _reset_hwm(pid) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def cpu_seconds() -> float:
    """CPU time so far of this process, its ended children and its running solver
    processes: a query's CPU time is the difference, what its wall time would be on a
    core of its own (the tier runs on a shared machine)."""
    from treesens.backends.worker import live_pids

    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    running = 0.0
    for pid in live_pids():
        try:  # utime and stime, the 14th and 15th fields, in clock ticks
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            running += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
    return time.process_time() + ended.ru_utime + ended.ru_stime + running


def query_key(d: dict) -> tuple:
    return (d["dataset"], d["model"], d["kind"], d["feature"], d.get("gap"))


def _check_line(r, gap: float) -> dict:
    return {
        "kind": "check",
        "gap": gap,
        "status": r.status,
        "validated": r.validated,
        "found_by": r.stats.get("found_by"),
        "proved_by": r.stats.get("proved_by"),
        "heuristic_s": _rounded(r.stats.get("heuristic_time")),
        "box_search_s": _rounded((r.stats.get("box_search") or {}).get("time")),
        "error": r.error if r.status == "error" else None,
    }


def _rounded(x) -> float | None:
    return None if x is None else round(float(x), 3)


def _max_gap_line(r) -> dict:
    mg = r.max_gap or {}
    box = r.stats.get("box_search") or {}
    return {
        "kind": "max_gap",
        "gap": None,
        "status": r.status,
        "validated": r.validated,
        "lower": mg.get("lower"),
        "upper": mg.get("upper"),
        "tolerance": mg.get("tolerance"),
        "proven": bool(mg.get("proven")),
        "method": mg.get("method"),
        "boxes": box.get("boxes"),
        "kernel_compile_s": round(r.time.get("box_search_compile", 0.0), 3),
        "error": r.error if r.status == "error" else None,
    }


class Watchdog(threading.Thread):
    """Ends the model's process when the load or a query overruns its limit by ``GRACE``
    seconds, or when this process and its solver processes together hold more than
    ``cap_mb`` resident: the query's line is written first (status ``killed``), so a
    rerun skips it. Exit code ``OVERRAN`` (a query: the runner starts the model again
    for the rest) or ``LOAD_OVERRAN``."""

    def __init__(self, emit, cap_mb: float, grace: float):
        super().__init__(daemon=True)
        self.emit, self.cap_mb, self.grace = emit, cap_mb, grace
        self.lock = threading.Lock()
        self.current: tuple[dict, float, float] | None = None

    def watch(self, line: dict, limit: float) -> None:
        with self.lock:
            self.current = (line, time.perf_counter(), limit)

    def clear(self) -> None:
        with self.lock:
            self.current = None

    def run(self) -> None:
        from treesens.backends.worker import kill_now, live_pids

        while True:
            time.sleep(0.5)
            with self.lock:
                if self.current is None:
                    continue
                line, started, limit = self.current
                elapsed = time.perf_counter() - started
                rss = _status_mb("self", "VmRSS") + sum(_status_mb(p, "VmRSS") for p in live_pids())
                why = (
                    f"overran its limit by {self.grace:g} s"
                    if elapsed > limit + self.grace
                    else f"held {rss:,.0f} MB (cap {self.cap_mb:,.0f} MB)"
                    if rss > self.cap_mb
                    else None
                )
                if why is None:
                    continue
                self.emit({**line, "status": "killed", "error": why, "total_s": round(elapsed, 3)})
                print(f"  {line['kind']} {line.get('feature')}: killed, {why}", file=sys.stderr)
                kill_now()
                os._exit(LOAD_OVERRAN if line["kind"] == "load" else OVERRAN)


def _status_mb(pid, field: str) -> float:
    """A /proc/PID/status memory field (``VmRSS``, ``VmHWM``) in MB; 0 when unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / MB
    except (OSError, ValueError):
        pass
    return 0.0


def run_model(job: dict) -> None:
    """In a fresh process: load one model and answer its queries, a line each to job["out"]."""
    import numpy as np

    import treesens
    from treesens.backends.worker import shutdown

    import_s = time.perf_counter() - _STARTED  # this script's imports, treesens' among them
    base = {"dataset": job["dataset"], "model": job["model"], "commit": job["commit"]}
    done = {tuple(k) for k in job["done"]}
    out = open(job["out"], "a")  # noqa: SIM115  (open for the whole run, a line per event)
    emitting = threading.Lock()

    peaks = Peaks()

    def emit(line: dict) -> None:
        full = {**base, **line, **peaks.read(), "date": time.strftime("%Y-%m-%d %H:%M:%S")}
        with emitting:
            out.write(json.dumps(full) + "\n")
            out.flush()

    dog = Watchdog(emit, job["memory_cap_mb"], job["grace"])
    dog.start()
    dog.watch({"kind": "load", "feature": None, "path": job["path"]}, LOAD_GRACE)
    peaks.start()
    t0, cpu0 = time.perf_counter(), cpu_seconds()
    ens = treesens.load_model(job["path"])
    load_s, load_cpu_s = time.perf_counter() - t0, cpu_seconds() - cpu0
    dog.clear()
    used = sorted({int(f) for t in ens.trees for f in np.asarray(t.feature) if f >= 0})
    names = [ens.feature_names[f] for f in used]
    if job["features"]:
        names = [n for n in names if n in job["features"]]
    emit(
        {
            "kind": "load",
            "feature": None,
            "path": job["path"],
            "library": ens.source.split(":", 1)[0] if ens.source else None,
            "trees": len(ens.trees),
            "leaves": int(ens.n_leaves()),
            "features": ens.n_features,
            "used_features": len(used),
            "import_s": round(import_s, 3),
            "load_s": round(load_s, 3),
            "load_cpu_s": round(load_cpu_s, 3),
        }
    )
    todo = [("check", n, g) for n in names for g in job["gaps"] if "check" in job["kinds"]]
    todo += [("max_gap", n, None) for n in names if "max_gap" in job["kinds"]]
    todo = [t for t in todo if (job["dataset"], job["model"], *t) not in done]
    for i, (kind, name, gap) in enumerate(todo, 1):
        limit = job["check_timeout"] if kind == "check" else job["max_gap_timeout"]
        asked = {
            "kind": kind,
            "feature": name,
            "gap": gap,
            "timeout": limit,
            "load": round(os.getloadavg()[0], 2),
        }
        dog.watch(asked, limit)
        peaks.start()
        cpu0 = cpu_seconds()
        try:
            if kind == "check":
                r = treesens.check(ens, vary=[name], gap=gap, timeout=limit)
                line = _check_line(r, gap)
            else:
                r = treesens.max_gap(ens, [name], tolerance=job["tolerance"], timeout=limit)
                line = _max_gap_line(r)
            line.update(
                compile_s=round(r.time.get("compile", 0.0), 3),
                total_s=round(r.time.get("total", 0.0), 3),
                vars=r.stats.get("vars"),
                constraints=r.stats.get("constraints"),
            )
        except Exception as e:  # one query's failure is recorded, the others go on
            line = {"status": "error", "error": f"{e!r}"[:300]}
        dog.clear()
        line = {**asked, **line, "cpu_s": round(cpu_seconds() - cpu0, 3)}
        emit(line)
        print(f"  [{i}/{len(todo)}] {job['model']} {describe(line)}", file=sys.stderr, flush=True)
    shutdown()  # the solver processes end, so their peak is counted among the children
    emit({"kind": "end", "feature": None})
    out.close()


def describe(d: dict) -> str:
    """A query's line in a few words: what was asked, the answer, the time."""
    t = d.get("total_s")
    secs = f" {t:.1f}s" if t is not None else ""
    if d["kind"] == "check":
        return f"{d['feature']} g={d['gap']}: {d['status']}{secs}"
    if d["status"] in ("error", "killed"):
        return f"{d['feature']} max gap: {d['status']} {d.get('error')}{secs}"
    return f"{d['feature']} max gap: {bounds(d)}{secs}"


def bounds(d: dict) -> str:
    lo = "none" if d.get("lower") is None else f"{d['lower']:.4f}"
    hi = "?" if d.get("upper") is None else f"{d['upper']:.4f}"
    if d["status"] == "insensitive":
        return f"below {d.get('tolerance')} (proven)"
    if d.get("proven") or d.get("lower") is None or d.get("upper") is None:
        return f"[{lo}, {hi}] {'proven' if d.get('proven') else 'open'}"
    return f"[{lo}, {hi}] open, {d['upper'] - d['lower']:.4f} apart"


def _done(path: Path) -> list[tuple]:
    if not path.exists():
        return []
    keys = []
    for ln in path.read_text().splitlines():
        try:
            d = json.loads(ln)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
        if d.get("kind") in ("check", "max_gap"):
            keys.append(query_key(d))
    return keys


def run(args, out: Path) -> None:
    commit = repo_commit()
    gaps = [float(g) for g in args.gaps.split(",")]
    features = [f for f in args.features.split(",") if f] if args.features else []
    for ds in args.datasets.split(","):
        for key in args.models.split(","):
            path = model_path(Path(args.models_dir), ds, key)
            if not path.exists():
                print(f"{path}: not found (python bench/models/train_scale.py)", file=sys.stderr)
                continue
            print(f"{ds} {key}: {path}", file=sys.stderr, flush=True)
            # --again: the queries in the file now run once more (a killed query, say):
            # done is then a line more than now
            before = Counter(_done(out)) if args.again else Counter()
            code = OVERRAN
            while code == OVERRAN:  # a query was killed: the model again, for the rest
                job = {
                    "dataset": ds,
                    "model": key,
                    "path": str(path),
                    "features": features,
                    "gaps": gaps,
                    "check_timeout": args.check_timeout,
                    "max_gap_timeout": args.max_gap_timeout,
                    "tolerance": args.tolerance,
                    "memory_cap_mb": args.memory_cap_mb,
                    "grace": args.grace,
                    "out": str(out),
                    "kinds": args.kinds.split(","),
                    "done": [
                        k
                        for k, n in Counter(_done(out)).items()
                        if k[:2] == (ds, key) and n > before[k]
                    ],
                    "commit": commit,
                }
                code = _run_job(job, out, n_features=len(features) or 30, n_gaps=len(gaps))


def _run_job(job: dict, out: Path, n_features: int, n_gaps: int) -> int:
    """The model's process; its exit code. Its watchdog ends a query that overruns; as a
    backstop, the whole process group is killed past the sum of every query's limit."""
    g = job["grace"] + 30.0
    per_feature = n_gaps * (job["check_timeout"] + g) + job["max_gap_timeout"] + g
    budget = LOAD_GRACE + n_features * per_feature
    cmd = [sys.executable, __file__, "--one", json.dumps(job)]
    p = subprocess.Popen(cmd, start_new_session=True)
    try:
        p.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    if p.returncode not in (0, OVERRAN, LOAD_OVERRAN):  # those wrote their line
        with out.open("a") as fh:
            line = {
                "dataset": job["dataset"],
                "model": job["model"],
                "kind": "killed",
                "feature": None,
                "returncode": p.returncode,
                "commit": job["commit"],
                "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            }
            fh.write(json.dumps(line) + "\n")
        print(f"{job['dataset']} {job['model']}: exit {p.returncode}", file=sys.stderr)
    return p.returncode


def _lines(path: Path) -> list[dict]:
    lines = []
    for ln in read_lines(path):
        try:
            lines.append(json.loads(ln))
        except json.JSONDecodeError:
            continue
    return lines


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def refused(d: dict) -> bool:
    """A query treesens refused up front: its model's estimate passes the memory limit
    (questions/memory.py; the line names the size and how to raise the limit)."""
    return d["status"] == "error" and str(d.get("error") or "").startswith("refused:")


def _check_cell(d: dict | None) -> str:
    if d is None:
        return "not run"
    if refused(d):
        return "refused"
    short = {"sensitive": "S", "insensitive": "I"}.get(d["status"], d["status"])
    if d["status"] == "sensitive" and not d.get("validated"):
        short = "S (replay FAILED)"
    if d.get("total_s") is None:
        return short
    cpu = f" ({d['cpu_s']:.1f})" if d.get("cpu_s") is not None else ""
    return f"{short} {d['total_s']:.1f}{cpu}"


def _gap_cell(d: dict | None) -> str:
    if d is None:
        return "not run"
    if d["status"] == "killed":
        return f"killed: {d.get('error')}"
    if refused(d):
        return "refused"
    if d["status"] == "error":
        return f"error: {str(d.get('error'))[:60]}"
    return bounds(d)


def report(path: Path) -> str:
    """The Markdown report of a results file: a summary, then one table per model."""
    lines = _inferred_peaks(_lines(path))
    models: dict[tuple, dict] = {}
    for d in lines:
        m = models.setdefault((d["dataset"], d["model"]), {"loads": [], "q": {}, "killed": 0})
        if d["kind"] == "load" and d.get("status") == "killed":
            m["load_killed"] = d
        elif d["kind"] == "load":
            m["loads"].append(d)
        elif d["kind"] in ("check", "max_gap"):
            m["q"][query_key(d)] = d  # a query run again (after a kill) keeps its last line
        elif d["kind"] == "killed":
            m["killed"] += 1
    out = [
        "| model | trees | leaves | import s | load s | compile s (median / max) "
        "| checks answered | check s (median / max) | check CPU s (median / max) "
        "| max gaps proven | max gap s (median / max) | max gap CPU s (median / max) "
        "| peak MB main / solver | queries over 2 GB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (ds, key), m in models.items():
        if not m["loads"]:
            why = m.get("load_killed", {})
            out.append(
                f"| {ds} {key} | load killed: {why.get('error', '?')} after "
                f"{why.get('total_s', float('nan')):.0f} s |" + " |" * 12
            )
            continue
        ld = m["loads"][-1]
        qs = list(m["q"].values())
        checks = [q for q in qs if q["kind"] == "check"]
        gaps = [q for q in qs if q["kind"] == "max_gap"]
        answered = sum(
            q["status"] == "insensitive" or (q["status"] == "sensitive" and q.get("validated"))
            for q in checks
        )
        proven = sum(q["status"] == "insensitive" or bool(q.get("proven")) for q in gaps)
        answered_cell = f"{answered}/{len(checks)}" + _refused_count(checks)
        proven_cell = f"{proven}/{len(gaps)}" + _refused_count(gaps)
        comp = [q["compile_s"] for q in qs if q.get("compile_s") is not None]
        ct = [q["total_s"] for q in checks if q.get("total_s") is not None]
        gt = [q["total_s"] for q in gaps if q.get("total_s") is not None]
        cc = [q["cpu_s"] for q in checks if q.get("cpu_s") is not None]
        gc = [q["cpu_s"] for q in gaps if q.get("cpu_s") is not None]
        main = max(d["peak_main_mb"] for d in [*m["loads"], *qs] if "peak_main_mb" in d)
        work = max(d["peak_worker_mb"] for d in [*m["loads"], *qs] if "peak_worker_mb" in d)
        over = [_peak(q)[2] for q in qs if sum(_peak(q)[:2]) > LIMIT_MB]
        unsure = over.count(False)  # only their process's peak so far is over
        over_cell = f"{over.count(True)}/{len(qs)}" + (f" (+{unsure} unsure)" if unsure else "")
        out.append(
            f"| {ds} {key} | {ld['trees']:,} | {ld['leaves']:,} | {ld['import_s']:.2f} "
            f"| {ld['load_s']:.2f} | {_fmt_pair(comp)} | {answered_cell} "
            f"| {_fmt_pair(ct)} | {_fmt_pair(cc)} | {proven_cell} | {_fmt_pair(gt)} "
            f"| {_fmt_pair(gc)} "
            f"| {main:,.0f} / {work:,.0f} | {over_cell} |"
        )
    for (ds, key), m in models.items():
        if not m["loads"]:
            continue
        ld = m["loads"][-1]
        qs = m["q"]
        gap_values = sorted({k[4] for k in qs if k[2] == "check"})
        feats = list(dict.fromkeys(k[3] for k in qs))
        timeouts = sorted({q.get("timeout") for q in qs.values() if q["kind"] == "max_gap"})
        loads = [q["load"] for q in qs.values() if q.get("load") is not None]
        commits = sorted({q["commit"] for q in qs.values() if q.get("commit")})
        out += [
            "",
            f"### {ds} {key}: {SPECS[key].what if key in SPECS else key}",
            "",
            f"{ld['trees']:,} trees, {ld['leaves']:,} leaves, {ld['features']} features "
            f"({ld['used_features']} read by a split); load {ld['load_s']:.2f} s"
            + (f"; the model's process was killed {m['killed']} time(s)" if m["killed"] else "")
            + (
                f"; max gap limit {', '.join(f'{t:g}' for t in timeouts if t)} s per feature."
                if timeouts
                else "; no max gap yet."
            )
            + (
                f" Load average at the queries' start: median {_median(loads):.1f} "
                f"({min(loads):.1f} - {max(loads):.1f}); commit {', '.join(commits)}."
                if loads
                else ""
            )
            + _refusal_sentence(list(qs.values())),
            "",
            "| feature | "
            + " | ".join(f"check g={g:g} (s, CPU s)" for g in gap_values)
            + " | max gap | max gap s (CPU s) | max gap compile s "
            + "| checks' peak MB main / solver | max gap's peak MB main / solver |",
            "|---|" + "---:|" * len(gap_values) + "---|---:|---:|---:|---:|",
        ]
        for f in feats:
            cells = [_check_cell(qs.get((ds, key, "check", f, g))) for g in gap_values]
            mg = qs.get((ds, key, "max_gap", f, None))
            checked = [q for q in qs.values() if q["feature"] == f and q["kind"] == "check"]
            secs = "" if mg is None or mg.get("total_s") is None else f"{mg['total_s']:.1f}"
            if secs and mg.get("cpu_s") is not None:
                secs += f" ({mg['cpu_s']:.1f})"
            comp = "" if mg is None or mg.get("compile_s") is None else f"{mg['compile_s']:.2f}"
            out.append(
                f"| {f} | "
                + " | ".join(cells)
                + f" | {_gap_cell(mg)} | {secs} | {comp} "
                + f"| {_peak_cell(checked)} | {_peak_cell([mg] if mg else [])} |"
            )
    return "\n".join(out) + "\n"


def _refused_count(qs: list[dict]) -> str:
    n = sum(map(refused, qs))
    return f" ({n} refused)" if n else ""


def _refusal_sentence(qs: list[dict]) -> str:
    """The refusal line, once per model: the table's cells say "refused" only."""
    lines = list(dict.fromkeys(str(q["error"]) for q in qs if refused(q)))
    if not lines:
        return ""
    said = "; ".join(f"`{line}`" for line in lines)
    return f" Refused up front: {sum(map(refused, qs))} of {len(qs)} queries, with {said}."


def _inferred_peaks(lines: list[dict]) -> list[dict]:
    """Lines written before the high-water marks were reset per query hold only the peak
    so far of their process; where it rose at a line (main and solver alike, or stayed 0),
    the rise is that query's own peak, which this fills in as ``query_peak_*``."""
    prev: dict[tuple, tuple[float, float]] = {}
    for d in lines:
        key = (d.get("dataset"), d.get("model"))
        if d.get("kind") == "load":
            prev[key] = (0.0, 0.0)  # a new process
        if "peak_main_mb" not in d or "query_peak_main_mb" in d:
            continue
        main, work = d["peak_main_mb"], d["peak_worker_mb"]
        was_main, was_work = prev.get(key, (0.0, 0.0))
        if main > was_main and (work > was_work or work == 0.0):
            d.update(query_peak_main_mb=main, query_peak_worker_mb=work, peak_reset=True)
        prev[key] = (main, work)
    return lines


def _peak(q: dict) -> tuple[float, float, bool]:
    """A query's peak MB (main, solver) and whether it is the query's own: lines written
    before the high-water marks were reset per query hold only the peak so far."""
    if "query_peak_main_mb" in q:
        return q["query_peak_main_mb"], q["query_peak_worker_mb"], bool(q.get("peak_reset"))
    return q.get("peak_main_mb", 0.0), q.get("peak_worker_mb", 0.0), False


def _peak_cell(qs: list[dict]) -> str:
    """The largest peaks of some queries; "<=" when one of them is only the peak so far."""
    if not qs:
        return ""
    peaks = [_peak(q) for q in qs]
    mark = "" if all(p[2] for p in peaks) else "<= "
    return f"{mark}{max(p[0] for p in peaks):,.0f} / {max(p[1] for p in peaks):,.0f}"


def _fmt_pair(xs: list[float]) -> str:
    return f"{_median(xs):.2f} / {max(xs):.2f}" if xs else "-"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="adult", help="of " + ", ".join(DATASETS))
    ap.add_argument("--models", default=",".join(SPECS), help="of " + ", ".join(SPECS))
    ap.add_argument("--features", default="", help="only these features (default: every used)")
    ap.add_argument("--gaps", default="0.1,0.2,0.3")
    ap.add_argument("--kinds", default="check,max_gap", help="the queries asked: check, max_gap")
    ap.add_argument(
        "--again",
        action="store_true",
        help="ask the queries already in --out again (the report keeps each query's last line)",
    )
    ap.add_argument("--check-timeout", type=float, default=60.0)
    ap.add_argument("--max-gap-timeout", type=float, default=120.0)
    ap.add_argument("--tolerance", type=float, default=1e-3)
    ap.add_argument(
        "--grace", type=float, default=GRACE, help="seconds past a query's limit before it is ended"
    )
    ap.add_argument(
        "--memory-cap-mb",
        type=float,
        default=8000.0,
        help="end a query whose process and solver processes hold more (a line says so)",
    )
    ap.add_argument("--models-dir", default=str(DEFAULT_OUT))
    ap.add_argument("--out", default=str(HERE / "results" / "scale-tier.jsonl"))
    ap.add_argument("--report", default=None, metavar="JSONL", help="only print its report")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: one model
    args = ap.parse_args(argv)
    if args.one:
        run_model(json.loads(args.one))
        return 0
    if args.report:
        print(report(Path(args.report)), end="")
        return 0
    for d in args.datasets.split(","):
        if d not in DATASETS:
            ap.error(f"unknown dataset {d!r}; known: {', '.join(DATASETS)}")
    if not set(args.kinds.split(",")) <= {"check", "max_gap"}:
        ap.error(f"--kinds: check, max_gap or both, not {args.kinds!r}")
    for k in args.models.split(","):
        if k not in SPECS:
            ap.error(f"unknown model {k!r}; known: {', '.join(SPECS)}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    run(args, out)
    text = report(out)
    md = out.with_suffix(".md")
    md.write_text(text)
    print(text, end="")
    print(f"wrote {out} and {md}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
