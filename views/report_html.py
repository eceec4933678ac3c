"""The report as one self-contained HTML page: styles inline, figures as data: URIs, no
request to any network, readable without treesens."""

from __future__ import annotations

import base64
import html
import math
import os
import re
import shlex
from pathlib import Path

from ..answers.phrases import NEVER_SPLITS, lower_text, upper_text
from ..answers.proof import bound_claim
from ..answers.result import ERROR, INSENSITIVE, SENSITIVE, UNKNOWN, Result
from ..compiler.ensemble import bounds_from_data
from ..compiler.errors import InputError
from ..questions.report import (
    RANK_TOLERANCE,
    UNTRIED_HINT,
    ProtectedFinding,
    Report,
    witness_found,
)
from ..questions.report_ranking import AUDIT_FOUND_BY
from ..questions.software import DATA, MODEL, SEARCH, SOLVER, Library
from .plot_common import figure_and_axes, png_bytes
from .plot_sweep import plot_sweep
from .plot_witness import plot_witness
from .result_view import proof_label, result_html

REPORT_SUFFIXES = (".html", ".htm")


def check_report_path(path: str | os.PathLike, where: str) -> None:
    """The page is HTML whatever the file's name says: a name that promises another format
    (``r.txt``, ``r.pdf``, no suffix) is refused before the report's minutes, not written."""
    if Path(path).suffix.lower() not in REPORT_SUFFIXES:
        raise InputError("the report is an HTML page; name it FILE.html (or .htm)", where)


_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1000px; color: #222; line-height: 1.45; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc;
     padding-bottom: 0.2em; margin-top: 2em; } h3 { margin-top: 1.5em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; }
th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.sensitive { color: #b2182b; font-weight: bold; } .insensitive { color: #1a7f37;
  font-weight: bold; } .unknown, .error { color: #8a6d00; font-weight: bold; }
.muted { color: #666; } code { background: #f4f4f4; padding: 0 0.25em; }
img { max-width: 100%; } .box { background: #fafafa; border: 1px solid #e4e4e4;
  padding: 0.6em 1em; margin: 0.8em 0; } .box code { display: block; padding: 0; background: none; }
.arg { white-space: nowrap; } .wraps { overflow-wrap: anywhere; }
"""
e = html.escape
_NUMBER = re.compile(r"-[0-9.][0-9.e+-]*")  # a negative value, not a flag (--gap -1)


def _png(fig) -> str:
    data = base64.b64encode(png_bytes(fig)).decode("ascii")
    return f'<img alt="figure" src="data:image/png;base64,{data}">'


def _num(v, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "&ndash;"
    return f"{v:.{digits}g}" if isinstance(v, float) else e(str(v))


def _bound(bounds: dict, side: str) -> str:
    """A max gap's bound, rounded outward (a lower bound of 0.49996 shows 0.4999)."""
    v = bounds.get(side)
    if not isinstance(v, float) or not math.isfinite(v):
        return _num(v)
    return lower_text(v) if side == "lower" else upper_text(v)


def _status(s) -> str:
    return f'<span class="{e(str(s))}">{e(str(s))}</span>'


def render(report: Report) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>treesens report: {e(_model_name(report))}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Sensitivity report: {e(_model_name(report))}</h1>",
        f'<p class="muted">made by treesens on {e(report.provenance.created)} in '
        f"{report.seconds:.0f} s (budget {report.budget:.0f} s)</p>",
        _summary(report),
        _checked(report),
        _ranking(report),
        *(_protected(report, f) for f in report.protected),
        _unanswered(report),
        "</body></html>",
    ]
    return "\n".join(parts)


def _model_name(report: Report) -> str:
    files = [f for f in report.provenance.files if f.role == "model"]
    return files[0].path.rsplit("/", 1)[-1] if files else report.model.source


def _summary(report: Report) -> str:
    items = []
    for f in report.protected:
        items.append(f"<li><b>{e(f.feature)}</b>: {_finding_sentence(report, f)}</li>")
    proven = sum(1 for r in report.ranking if (r.max_gap or {}).get("proven"))
    items.append(
        f"<li>{proven} of {len(report.ranking)} features have a proven max gap; the "
        f"ranking is below.</li>"
    )
    return '<h2 id="summary">Summary</h2><ul>' + "".join(items) + "</ul>"


def _finding_sentence(report: Report, f: ProtectedFinding) -> str:
    """The protected feature's answer: its check's, or, where that is unknown, the pair
    an audited row and its flip make (questions/report._audit_pair)."""
    pair = f.audit_pair
    if f.check.status != UNKNOWN or pair is None:
        return _answer_sentence(report, f.check)
    g = report.gap
    return (
        f"{_status(SENSITIVE)}: two inputs that differ only in {e(f.feature)} get P(class 1) "
        f"&ge; {0.5 + g:g} and &le; {0.5 - g:g}: the data's row at index {pair['row']} "
        f"(P(class 1) = {pair['p_row']:.4g}) and the same row with {e(f.feature)} = "
        f"{e(str(pair['x2']))} (P(class 1) = {pair['p_x2']:.4g}), both replay-checked with the "
        "model's own library (the row-level audit below); the search over all inputs was not "
        "settled within its time limit."
    )


def _answer_sentence(report: Report, r: Result) -> str:
    g = report.gap
    if report.delta is not None:  # a regressor
        decision = f"the predictions differ by at least {report.delta:g}"
    elif report.model.n_classes == 2:
        decision = f"one input gets P(class 1) &ge; {0.5 + g:g} and the other &le; {0.5 - g:g}"
    else:
        decision = f"the decision moves by a probability ratio of at least {g:g}"
    if r.status == SENSITIVE:
        return (
            f"{_status(r.status)}: two inputs that differ only in {e(', '.join(r.features))} "
            f"exist where {decision} (the pair is below, replay-checked with the model's "
            "own library)."
        )
    if r.status == INSENSITIVE:
        return (
            f"{_status(r.status)}: proved that no two inputs differing only in "
            f"{e(', '.join(r.features))} exist where {decision}, {e(_domain(report))}. "
            f"{_proof_sentence(r)}{_never_splits(r)}"
        )
    why = r.error if r.status == ERROR else "the time limit was reached"
    return f"{_status(r.status)}: not settled ({e(str(why))})."


def _never_splits(r: Result) -> str:
    """ " The model never splits on F: no change of it alone moves its prediction." of an
    answer about features no tree splits on, as its notes say, else ""."""
    notes = [n for n in r.notes if n.startswith(NEVER_SPLITS)]
    return "".join(f" {e(n[0].upper() + n[1:])}." for n in notes)


def _proof_sentence(r: Result) -> str:
    """Who proved an insensitive answer, and whether it was independently checked:
    "Certified (sex.json, verified)." or "Proved by CP-SAT, not independently checked:
    why."."""
    proof = r.proof
    if proof is None:  # a result made before answers carried their proof record
        return ""
    if proof.checked:
        return f"Certified (<code>{e(proof.certificate)}</code>, verified)."
    label = proof_label(proof)
    return e(label[0].upper() + label[1:]) + "."


def _domain(report: Report) -> str:
    """Where an insensitive answer holds, and where its bounds came from: the data's range
    (bounds narrowed to the data when the model was loaded) or the declarations."""
    m = report.model
    bounded = sum(1 for f in m.features if math.isfinite(f.lb) or math.isfinite(f.ub))
    if bounds_from_data(m.source):
        return (
            f"within the data's range (each feature between its smallest and largest value "
            f"in {report.data_path or 'the data'}; {bounded} of {m.n_features} bounded)"
        )
    if not bounded:
        return "over every input (no feature bounds were declared)"
    details = [path for role, path in m.inputs if role == "details"]
    where = f" in {details[-1]}" if details else " by the model"
    return f"within the bounds declared{where} ({bounded} of {m.n_features} features bounded)"


def _checked(report: Report) -> str:
    p = report.provenance
    files = "".join(
        f'<tr><td>{e(f.role)}</td><td><code class="wraps">{e(f.path)}</code></td>'
        f'<td class="num">{f.size:,}</td><td><code class="wraps">{e(f.sha256)}</code></td></tr>'
        for f in p.files
    )
    return (
        '<h2 id="checked">What was checked</h2>'
        f"<p>Model: {e(p.model_format)}, {p.trees} trees, {p.features} features, "
        f"{'a regressor' if report.delta is not None else f'{p.classes} classes'}. "
        f"{_asked(report)} of the protected features: {e(_asked_value(report))}.</p>"
        "<table><tr><th>role</th><th>file</th><th>bytes</th><th>SHA-256</th></tr>"
        f"{files}</table>"
        f"<p>Software: {_software(p.software)}.</p>"
        f'<p>Reproduce with:</p><div class="box"><code>{_command(p.command)}</code></div>'
    )


def _command(command: str) -> str:
    """A command line whose lines break only between its arguments, each flag kept with
    its value (``--features a,b`` is never split at a hyphen or after the flag); its text
    is the command as given."""
    try:
        words = shlex.split(command)
    except ValueError:  # not a shell line: as it is
        return e(command)
    if shlex.join(words) != command:
        return e(command)
    groups: list[list[str]] = []
    for w in words:
        if groups and _is_flag(groups[-1][-1]) and len(groups[-1]) == 1 and not _is_flag(w):
            groups[-1].append(w)
        else:
            groups.append([w])
    return " ".join(f'<span class="arg">{e(shlex.join(g))}</span>' for g in groups)


def _is_flag(word: str) -> bool:
    return word.startswith("-") and not _NUMBER.fullmatch(word)


# how the provenance introduces each role's libraries (questions/software.py); Python
# and treesens come first, unintroduced
_ROLES = {
    MODEL: "model read and replayed with",
    SOLVER: "solver:",
    SEARCH: "box search compiled with",
    DATA: "data and arrays:",
}


def _software(libs: list[Library]) -> str:
    """``Python 3.11.7, treesens 0.1.0; model read and replayed with xgboost 3.2.0; ...``"""
    groups: dict[str, list[str]] = {}
    for lib in libs:
        detail = f" ({e(lib.detail)})" if lib.detail else ""
        named = f"{e(lib.name)} {e(lib.version)}{detail}"
        groups.setdefault(_ROLES.get(lib.role, ""), []).append(named)
    return "; ".join(f"{intro} {', '.join(n)}".strip() for intro, n in groups.items())


def _ranking(report: Report) -> str:
    rows = []
    for r in sorted(report.ranking, key=_rank_key, reverse=True):
        mg = r.max_gap or {}
        proven = "proven" if mg.get("proven") else "not proven"
        if mg.get("unsplit"):  # 0 exactly: the lower bound is no pair's
            proven = "proven: no tree splits on it within its bounds"
        if r.stats.get("found_by") == AUDIT_FOUND_BY:  # report_ranking.raise_lower
            proven += "; lower bound: the row-level audit's pair"
        if r.status == ERROR:
            proven = f"error: {r.error}"
        rows.append(
            f"<tr><td>{e(', '.join(r.features))}</td><td class='num'>{_bound(mg, 'lower')}"
            f"</td><td class='num'>{_bound(mg, 'upper')}</td><td>{e(proven)}</td>"
            f"<td class='num'>{r.time.get('total', 0.0):.1f}</td>"
            + (f"<td>{_bound_certificate(r)}</td>" if report.certificates is not None else "")
            + "</tr>"
        )
    fig = plot_sweep(report.ranking) if report.ranking else None
    return (
        '<h2 id="ranking">Features ranked by max gap</h2>'
        f"<p>{_max_gap_meaning(report)} The lower "
        "bound comes from a pair replay-checked with the model's library, the upper bound "
        f"from a proof; they count as met within {RANK_TOLERANCE:g}"
        f"{_regressor_tolerance(report)}, and where they differ "
        "more the search ran out of time. No lower bound: no two such inputs get "
        f"{'different predictions' if report.delta is not None else 'different decisions'} "
        "at all.</p>"
        "<table><tr><th>feature</th><th>lower</th><th>upper</th><th>status</th>"
        "<th>seconds</th>"
        + ("<th>upper bound's certificate</th>" if report.certificates is not None else "")
        + f"</tr>{''.join(rows)}</table>"
        + (_png(fig) if fig else "")
    )


def _regressor_tolerance(report: Report) -> str:
    """How the ranking's tolerance is read: a regressor's against its coarse bound, a
    multiclass ratio's relative (docs/max-gap.md), a binary gap's as it stands."""
    if report.classes is not None:
        return (
            f" of the ratio, relatively (upper &le; lower &times; e<sup>{RANK_TOLERANCE:g}</sup>)"
        )
    if report.delta is None:
        return ""
    return " times the largest change the leaf values allow (the search's coarse bound)"


def _max_gap_meaning(report: Report) -> str:
    if report.delta is not None:  # a regressor: the largest change (docs/max-gap.md)
        return (
            "The max gap of a feature is the largest change of the prediction, "
            "|f(x1) &minus; f(x2)|, between two inputs that differ only in that feature."
        )
    return (
        "The max gap of a feature is the largest g for which two inputs that differ "
        "only in that feature get P(class 1) &ge; 0.5 + g and &le; 0.5 &minus; g "
        "(multiclass: the largest ratio between the two classes' probabilities)."
    )


def _bound_certificate(r: Result) -> str:
    """A ranked max gap's upper bound, certified: "certified: no pair reaches a gap of
    0.35 (sex.max-gap.json, verified)", or why not."""
    proof = r.proof
    if proof is None or proof.bound is None and not proof.why_not:
        return "not certified"
    if proof.checked:
        claim = bound_claim(proof.bound, (r.max_gap or {}).get("kind", "prob"))
        return f"certified: {e(claim)} (<code>{e(proof.certificate)}</code>, verified)"
    if proof.needs_none:
        return e(f"no certificate needed: {proof.why_not}")
    return e(f"not certified: {proof.why_not or 'none was written'}")


def _rank_key(r: Result) -> float:
    mg = r.max_gap or {}
    return float(mg.get("upper") or mg.get("lower") or -1.0)


def _protected(report: Report, f: ProtectedFinding) -> str:
    out = [
        f'<h2 id="protected-{e(f.feature)}">Protected feature: {e(f.feature)}</h2>',
        f"<p>{_finding_sentence(report, f)}</p>",
    ]
    if f.certificate:
        out.append(
            f"<p>Its proof is in <code>{e(f.certificate)}</code>, and <code>treesens verify "
            f"{e(f.certificate)}</code> accepted it: it re-checks the proof from the model's "
            "trees with a checker that shares no code with the rest of treesens.</p>"
        )
    if witness_found(f):
        fig = plot_witness(f.check, data=report.data_path, model=report.model, label=report.label)
        out += ["<h3>The pair of inputs</h3>", _png(fig), result_html(f.check)]
    out.append("<h3>Row-level audit</h3>")
    if f.audit_error:
        out.append(f"<p>The audit failed: {e(f.audit_error)}</p>")
    else:
        out.append(_audit_table(report, f))
    return "\n".join(out)


def _asked(report: Report) -> str:
    return "Gap asked" if report.delta is None else "Change of the prediction asked"


def _asked_value(report: Report) -> str:
    """What the protected features are asked: the gap, a multiclass model's ratio with its
    class pair, or a regressor's change."""
    if report.delta is not None:
        return f"{report.delta:g}"
    if report.classes is not None:
        c1, c2 = report.classes
        return f"a probability ratio of {report.gap:g}, class {c1} -> class {c2}"
    return f"{report.gap:g}"


def _row_change(report: Report) -> str:
    if report.delta is not None:
        return f"a prediction that differs by at least {report.delta:g}"
    return f"a confident decision of another class (gap {report.gap:g})"


def _audit_table(report: Report, f: ProtectedFinding) -> str:
    head = (
        f"<p>{f.audit_rows} rows of the data, each asked: can changing only "
        f"{e(f.feature)} give this row {_row_change(report)}? Fractions are of the settled rows, with 95% Wilson intervals.</p>"
    )
    rows = "".join(
        f"<tr><td>{e(str(r['group']))}</td><td>{e(str(r['value']))}</td>"
        f"<td class='num'>{r['rows']}</td><td class='num'>{r['flippable']}</td>"
        f"<td class='num'>{r['unknown']}</td><td class='num'>{_num(r['fraction'])}</td>"
        f"<td class='num'>[{_num(r['ci_low'])}, {_num(r['ci_high'])}]</td></tr>"
        for r in f.audit_table
    )
    table = (
        "<table><tr><th>group</th><th>value</th><th>rows</th><th>flippable</th>"
        f"<th>unknown</th><th>fraction</th><th>95% interval</th></tr>{rows}</table>"
    )
    return head + table + _rows_certified(f) + _audit_figure(f)


def _rows_certified(f: ProtectedFinding) -> str:
    """With certificates asked: how many rows that do not flip were certified, and where;
    how many a bound left untried, and why; how many need none (of the class x2 is asked)."""
    if f.audit_certificates is None:
        return ""
    done = sum(1 for why in f.audit_certificates.values() if not why)
    untried = ""
    if f.audit_untried:
        why = next(iter(f.audit_untried.values()))
        untried = e(f" {len(f.audit_untried)} were not tried: {why} ({UNTRIED_HINT}).")
    if f.audit_own_class:
        why = next(iter(f.audit_own_class.values()))
        untried += e(f" {len(f.audit_own_class)} need none: {why}.")
    return (
        f"<p>{done} of the {f.rows_to_certify} rows that do not flip are certified: "
        f"each row's proof is in <code>{e(f.audit_certificates_in or '')}/row-N.json</code> "
        f"(N the row's index in the data), checked by <code>treesens verify</code>.{untried}</p>"
    )


def _audit_figure(f: ProtectedFinding) -> str:
    groups = [r for r in f.audit_table if r["group"] != "all" and r["fraction"] is not None]
    if not groups:
        return ""
    fig, ax = figure_and_axes(None, (8.0, 0.4 * len(groups) + 1.4))
    labels = [f"{r['group']} = {r['value']}" for r in groups]
    frac = [r["fraction"] for r in groups]
    err = [
        [max(0.0, r["fraction"] - r["ci_low"]) for r in groups],
        [max(0.0, r["ci_high"] - r["fraction"]) for r in groups],
    ]
    ax.barh(range(len(groups)), frac, xerr=err, color="#4c72b0", capsize=3)
    ax.set_yticks(range(len(groups)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0.0, max(0.05, max(r["ci_high"] for r in groups) * 1.1))
    ax.set_xlabel(f"fraction of rows a change of {f.feature} flips (95% interval)")
    return _png(fig)


def _unanswered(report: Report) -> str:
    items = report.unanswered
    body = (
        "<ul>" + "".join(f"<li>{e(s)}</li>" for s in items) + "</ul>"
        if items
        else "<p>Every question of this report was answered within its time limit.</p>"
    )
    return '<h2 id="unanswered">What was not answered</h2>' + body
