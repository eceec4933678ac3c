"""The .sens files in examples/ (over models shipped with treesens) and bench/examples/
(over the paper's benchmark models in ../shared/benchmarks): they parse, are canonical,
round-trip through fmt, load against their models, and (the shipped ones, quickly; all of
them, slowly) run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from treesens.interfaces.cli.main import main
from treesens.language import format_sens, load_queries, parse, parse_file

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
BENCH_EXAMPLES = REPO / "bench" / "examples"
SHIPPED = sorted(EXAMPLES.glob("*.sens"))
# bench/examples/ refer to ../../../shared/benchmarks (next to the repository)
OVER_SHARED = sorted(BENCH_EXAMPLES.glob("*.sens"))
SENS = SHIPPED + OVER_SHARED
SHARED = (REPO / "../shared/benchmarks").resolve()
SKIP_SHARED = "needs ../shared/benchmarks next to the repository (not in a user's clone)"


def _need_shared():
    if not (SHARED / "adult").is_dir():
        import os

        if os.environ.get("TREESENS_REQUIRE_SHARED") == "1":
            pytest.fail(f"TREESENS_REQUIRE_SHARED=1 but {SHARED} is missing")
        pytest.skip(SKIP_SHARED)


def test_there_are_enough_examples():
    names = {p.stem for p in SENS}
    assert len(OVER_SHARED) >= 6, names
    assert SHIPPED, "at least one example must run from a fresh clone"


@pytest.mark.parametrize("path", SENS, ids=lambda p: p.name)
def test_example_round_trips_through_fmt(path):
    ast = parse_file(path)
    text = format_sens(ast)
    assert parse(text, str(path)) == ast  # parse(fmt(x)) == parse(x)
    assert format_sens(parse(text)) == text  # fmt is idempotent
    assert text == path.read_text(), (
        f"{path.name} is not in canonical form: run treesens fmt -w {path.name}"
    )


@pytest.mark.parametrize("path", SENS, ids=lambda p: p.name)
def test_fmt_command_prints_the_canonical_text(path, capsys):
    assert main(["fmt", str(path)]) == 0
    assert capsys.readouterr().out == path.read_text()
    assert main(["fmt", "--check", str(path)]) == 0


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_example_loads(path):
    sf = load_queries(path)
    assert sf.queries
    for q in sf.queries:
        assert q.name and q.vary and q.plan.timeout > 0


@pytest.mark.shared
@pytest.mark.parametrize("path", OVER_SHARED, ids=lambda p: p.name)
def test_shared_example_loads(path):
    _need_shared()
    sf = load_queries(path)
    assert sf.queries
    assert sf.model_path.resolve().is_relative_to(SHARED)


def test_examples_cover_the_issue():
    """adult sex and race, a churn sweep, german credit 800 trees, multiclass wine, a
    data-aware query and a multi-feature query."""
    asts = {p.stem: parse_file(p) for p in OVER_SHARED}
    text = {p.stem: p.read_text() for p in OVER_SHARED}
    assert any("vary sex" in t and "adult" in t for t in text.values())
    assert any("vary race" in t and "adult" in t for t in text.values())
    assert any("churn" in t and "sweep " in t for t in text.values())
    assert any("german_credit_t800" in t for t in text.values())
    assert any(
        "winequality_red" in t and "classes 2 -> 3" in t and "gap 1.5" in t for t in text.values()
    )
    assert any("data_aware prob" in t for t in text.values())
    assert any(
        any(len(getattr(st, "names", ())) >= 2 for it in a.items for st in getattr(it, "body", ()))
        for a in asts.values()
    )


def _run_json(args, capsys):
    code = main(["run", *args, "--json"])
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines() if line.strip()]


def test_run_shipped_sweep(capsys):
    code, results = _run_json([str(EXAMPLES / "breast_cancer.sens"), "--query", "worst"], capsys)
    assert code == 0
    assert [r["query"] for r in results] == [
        "worst/worst_radius",
        "worst/worst_texture",
        "worst/worst_concave_points",
    ]
    for r in results:
        assert r["status"] in ("sensitive", "insensitive", "unknown")
        if r["status"] == "sensitive":
            assert r["validated"] and r["witness"] and r["gap"] == 0.3


def test_run_shipped_query_with_constraints(capsys):
    code, results = _run_json(
        [str(EXAMPLES / "breast_cancer.sens"), "--query", "texture_smoothness"], capsys
    )
    assert code == 0
    (r,) = results
    assert r["status"] in ("sensitive", "insensitive", "unknown")
    if r["status"] == "sensitive":
        w = r["witness"]
        assert w["x1"]["worst_smoothness"] <= w["x2"]["worst_smoothness"]
        for x in ("x1", "x2"):
            assert 10 <= w[x]["mean_radius"] <= 15
        assert r["validated"]


def test_run_file_answers_a_block_from_python():
    import treesens

    seen = []
    results = treesens.run_file(
        EXAMPLES / "breast_cancer.sens", "texture", timeout=60, on_result=seen.append
    )
    assert [r.query for r in results] == ["texture"] and seen == results
    assert results[0].status in ("sensitive", "insensitive")


def test_run_file_rejects_a_bad_file_before_solving(tmp_path):
    import treesens

    bad = tmp_path / "bad.sens"
    bad.write_text('model "missing.json"\n')
    with pytest.raises(treesens.InputError, match="missing.json"):
        treesens.run_file(bad)


def test_data_aware_query(tmp_path, capsys):
    """A data-aware query of a .sens file: data and parameters reach the Query; it runs."""
    rows = [
        line.split(",")
        for line in (EXAMPLES / "breast_cancer_details.csv").read_text().splitlines()[1:]
    ]
    names = [r[1] for r in rows]
    data = tmp_path / "train.csv"
    lines = [",".join(names + ["label"])]
    for k in range(5):  # rows spread between the features' bounds
        t = (k + 0.5) / 5
        lines.append(
            ",".join(f"{float(r[2]) + t * (float(r[3]) - float(r[2])):.6g}" for r in rows)
            + f",{k % 2}"
        )
    data.write_text("\n".join(lines) + "\n")
    f = tmp_path / "da.sens"
    f.write_text(
        f'model "{EXAMPLES / "breast_cancer_xgb.json"}"\n'
        f'features from "{EXAMPLES / "breast_cancer_details.csv"}"\n'
        'data "train.csv" label label\n'
        "query da {\n  vary mean_texture\n  data_aware prob prob_alpha = 2\n  timeout 5s\n}\n"
    )
    sf = load_queries(f)
    (q,) = sf.queries
    opts = dict(q.plan.options)
    assert q.plan.data_aware == "prob"
    assert opts["data"] == str(data) and opts["label"] == "label" and opts["prob_alpha"] == 2
    code, results = _run_json([str(f)], capsys)
    (r,) = results
    assert code == 0, r
    assert r["status"] in ("sensitive", "insensitive", "unknown")
    if r["status"] == "sensitive":
        assert r["validated"] and r["distance"] is not None


@pytest.mark.shared
def test_run_tiny_model_with_every_kind_of_query(tmp_path, capsys):
    """A tiny shared model (2 trees): queries, a sweep, constraints, several backends."""
    _need_shared()
    f = tmp_path / "tiny.sens"
    f.write_text(
        f'model "{SHARED}/adult/adult_t2_d2.json"\nfeatures from "{SHARED}/adult/details.csv"\n'
        "defaults {\n  gap margin 0.05\n  timeout 30s\n}\n"
        'query flip {\n  vary relationship, "capital-gain"\n}\n'
        'query ordered {\n  vary relationship, "capital-gain"\n  where x1.relationship <= x2.relationship\n'
        '  fix x2."capital-gain" = 0\n}\n'
        "sweep each {\n  vary each of relationship, sex\n}\n"
    )
    code, results = _run_json([str(f)], capsys)
    assert code == 0
    by = {r["query"]: r for r in results}
    assert set(by) == {"flip", "ordered", "each/relationship", "each/sex"}
    assert by["each/sex"]["status"] == "insensitive"  # no tree tests sex
    for r in results:
        assert r["status"] in ("sensitive", "insensitive")
        if r["status"] == "sensitive":
            assert r["validated"]
    if by["ordered"]["status"] == "sensitive":
        w = by["ordered"]["witness"]
        assert w["x1"]["relationship"] <= w["x2"]["relationship"] and w["x2"]["capital-gain"] == 0


@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.parametrize("path", SENS, ids=lambda p: p.name)
def test_example_runs_end_to_end(path, capsys):
    if path in OVER_SHARED:
        _need_shared()
    code, results = _run_json([str(path)], capsys)
    assert code == 0 and results
    for r in results:
        assert r["status"] in ("sensitive", "insensitive"), (r["query"], r["status"], r["error"])
        if r["status"] == "sensitive":
            assert r["validated"]
