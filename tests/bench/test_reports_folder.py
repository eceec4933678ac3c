"""bench/reports/ and bench/instance-lists/: what the docs name is there, and nothing else.

bench/reports/ keeps the current report of each tier or experiment (its Markdown and at
most one gzipped JSON Lines file of raw results) and history.md; superseded runs live in
git history. bench/instance-lists/ holds the instance lists the reports' commands name,
each described in its README.md.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
REPORTS = BENCH / "reports"
LISTS = BENCH / "instance-lists"
MAX_REPORT_FILES = 30

# Files that name bench paths a reader or a command follows. bench/results/ is where runs
# write (git-ignored), so paths there are outputs, not references. A path written after a
# colon is in git history (`git show COMMIT:bench/reports/NAME`), not in the tree.
NAMING = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted(REPORTS.glob("*.md")),
    *sorted(BENCH.glob("*.py")),
    LISTS / "README.md",
]
BENCH_PATH = re.compile(r"(?<![\w:/.-])bench/[\w./-]*\w")
KEPT_RESULTS = re.compile(r"(?<![\w:/.-])bench/reports/([\w.-]+\.jsonl\.gz)")


def _named_paths() -> dict[str, list[str]]:
    """Each bench/... path outside bench/results/ named in NAMING, with where."""
    named: dict[str, list[str]] = {}
    for f in NAMING:
        for n, line in enumerate(f.read_text().splitlines(), 1):
            for m in BENCH_PATH.finditer(line):
                if not m.group().startswith("bench/results"):
                    named.setdefault(m.group(), []).append(f"{f.relative_to(REPO)}:{n}")
    return named


def test_every_bench_path_the_docs_and_reports_name_exists():
    missing = {p: where for p, where in _named_paths().items() if not (REPO / p).exists()}
    assert not missing, "\n".join(f"{p} (named in {', '.join(w)})" for p, w in missing.items())


def test_bench_reports_holds_at_most_30_files():
    files = sorted(p.name for p in REPORTS.iterdir())
    assert len(files) <= MAX_REPORT_FILES, files


def test_bench_reports_holds_only_markdown_and_gzipped_results():
    # cactus plots are drawn again by bench/report.py; raw results are kept gzipped
    assert [p.name for p in REPORTS.iterdir() if not p.name.endswith((".md", ".jsonl.gz"))] == []


def test_each_report_keeps_at_most_one_results_file():
    for md in REPORTS.glob("*.md"):
        if md.name != "history.md":
            kept = set(KEPT_RESULTS.findall(md.read_text()))
            assert len(kept) <= 1, f"{md.name} keeps {sorted(kept)}"


def test_every_results_file_in_bench_reports_is_named_by_a_report():
    named = {n for md in REPORTS.glob("*.md") for n in KEPT_RESULTS.findall(md.read_text())}
    assert sorted(p.name for p in REPORTS.glob("*.jsonl.gz") if p.name not in named) == []


def test_every_results_file_in_bench_reports_is_json_lines():
    for gz in REPORTS.glob("*.jsonl.gz"):
        lines = gzip.decompress(gz.read_bytes()).decode().splitlines()
        assert lines and all(isinstance(json.loads(ln), dict) for ln in lines), gz.name


def test_every_instance_list_is_described_in_the_folder_readme():
    readme = (LISTS / "README.md").read_text()
    lists = sorted(p.name for p in LISTS.glob("*.txt"))
    assert lists
    assert [n for n in lists if f"`{n}`" not in readme] == []


def test_no_instance_list_is_left_beside_the_bench_scripts():
    assert sorted(p.name for p in BENCH.glob("*.txt")) == []


def _ids(path: Path) -> set[str]:
    return {w for w in (ln.split("#", 1)[0].strip() for ln in path.read_text().splitlines()) if w}


@pytest.mark.shared
def test_every_instance_list_names_instances_of_the_full_or_the_multiclass_tier(shared_dir):
    sys.path.insert(0, str(BENCH))
    try:
        import instances  # bench/ is scripts, not part of the installed package
    finally:
        sys.path.remove(str(BENCH))
    full = {i.id for i in instances.tier("full", ["single"])[0]}
    full |= {i.id for i in instances.tier("multiclass")[0]}
    for lst in sorted(LISTS.glob("*.txt")):
        ids = _ids(lst)
        assert ids and ids <= full, f"{lst.name}: {sorted(ids - full)[:5]}"


# Each kept report with the script that makes its tables from the results it keeps.
REMADE = [
    ("quick-side-by-side.md", "quick-side-by-side.jsonl.gz", "report.py"),
    ("full-default-box.md", "full-default-box.jsonl.gz", "report.py"),
    ("full-kant-s1.md", "full-kant-s1.jsonl.gz", "report.py"),
    ("full-side.md", "full-side.jsonl.gz", "report.py"),
    ("solver-needed-box.md", "solver-needed-box.jsonl.gz", "report.py"),
    ("multi-side.md", "multi-side.jsonl.gz", "report.py"),
    ("multiclass-600.md", "multiclass-600.jsonl.gz", "report.py"),
    ("data-aware.md", "data-aware.jsonl.gz", "report.py"),
    ("data-aware.md", "data-aware.jsonl.gz", "data_aware_report.py"),
    ("ablation-solver-needed.md", "ablation-solver-needed.jsonl.gz", "ablation_report.py"),
    ("certificates.md", "certificates.jsonl.gz", "certify_tier.py --report"),
    ("max-gap-peer.md", "max-gap-peer.jsonl.gz", "max_gap_peer.py --report"),
]


@pytest.mark.parametrize(
    ("md", "results", "script"), REMADE, ids=[f"{m}:{s}" for m, _, s in REMADE]
)
def test_a_kept_report_holds_the_tables_its_script_makes_of_its_kept_results(
    md, results, script, tmp_path
):
    name, *flag = script.split()
    argv = [sys.executable, str(BENCH / name), *flag, str(REPORTS / results)]
    if name == "report.py":
        argv += ["--out", str(tmp_path / "again")]
    proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    if "No module named" in proc.stderr:
        pytest.skip(proc.stderr.strip().splitlines()[-1])
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [ln for ln in proc.stdout.splitlines() if ln.startswith("|")]
    kept = set((REPORTS / md).read_text().splitlines())
    assert rows and [r for r in rows if r not in kept] == []
