"""The auditor's report: every feature ranked by its max gap, the protected features'
global answers with their witness pairs, and the row-level audit of each, gathered in one
``Report`` that views/report_html.py renders as one self-contained HTML file.

The expensive steps (the ranking and the checks) are sweeps with a results file each, so
a report run again with the same files reuses every answer already there.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..answers.accept import shown_value
from ..answers.phrases import lower_text, upper_text
from ..answers.proof import bound_claim
from ..answers.result import ERROR, INSENSITIVE, SENSITIVE, UNKNOWN, Result
from ..compiler.audit import FLIPPABLE
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError, notes_once, setting, spelled
from ..compiler.feature_names import feature_list, refuse_repeats
from ..compiler.kinds import resolve_condition
from ..compiler.readings import read_as
from ..compiler.usage import Usage, watching
from ..readers.data import load_data, say_data_notes
from ..readers.load import load_model
from ..search import gap_kernel, gap_kernel_compile
from .audit import audit, summary
from .campaign import holds_other_model
from .certificate_model import model_file_of, refuse_without_model_file
from .output_folder import make_folder_of
from .progress import Display
from .query_build import query_from_keywords
from .report_certificates import ClaimCertificates, by_reason, named, plural
from .report_ranking import best_flip, raise_lower
from .software import Library, software
from .sweep import OtherModelResults, sweep
from .sweep_budget import MIN_STEP_SECONDS, budget_advice

# how the time budget is shared: the ranking, then the protected features' checks; the
# audits take what they take (about a thousand rows a second)
RANK_SHARE, CHECK_SHARE = 0.6, 0.25
# with --certificates, this share of the budget is kept for them (the ranking and the
# checks take theirs of the rest): the claims' certificates, then the audited rows'
CERTIFY_SHARE = 0.25
DEFAULT_BUDGET = 480.0  # eight minutes: the whole report within ten, plots and audits included
DEFAULT_GAP = 0.2
# the ranking's max gaps are closed to within this (coarser than max_gap's default: a
# ranking needs the order, and a wide model's bounds close many times faster)
RANK_TOLERANCE = 1e-3
DATA_AWARE = "prob"  # the protected features' pairs: close to the data (docs/data-aware.md)
# the box search's time to write a protected feature's proof (--certify-budget)
CERTIFY_SECONDS = 120.0
# how to have more audited rows certified than the report's budget leaves time for
UNTRIED_HINT = "--certify-rows N tries the first N rows, whatever the time"
# how a report run again keeps its ranking's settled max gaps (budget_advice's last words)
REPORT_AGAIN = "a report run again with the same --results reuses the max gaps already proven"


@dataclass(frozen=True)
class FileFacts:
    role: str
    path: str
    sha256: str
    size: int

    @classmethod
    def of(cls, role: str, path: str | Path) -> FileFacts:
        p = Path(path)
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        return cls(role, str(path), digest, p.stat().st_size)


@dataclass
class Provenance:
    """What was checked, with what, and how to do it again."""

    files: list[FileFacts]
    model_format: str
    trees: int
    features: int
    classes: int
    software: list[Library]  # what took part (questions/software.py), in this order
    command: str
    created: str

    @property
    def versions(self) -> dict[str, str]:
        return {lib.name: lib.version for lib in self.software}


@dataclass
class ProtectedFinding:
    """One protected feature: its global answer and its row-level audit."""

    feature: str
    check: Result
    audit_rows: int = 0
    audit_table: list[dict] = field(default_factory=list)  # questions.audit.summary rows
    audit_error: str | None = None
    # with --certificates: each audited row that does not flip and was tried -> ""
    # (certified) or why not; the rows a bound (--certify-rows, the budget) left untried
    # -> why, in audit_untried
    audit_certificates: dict[int, str] | None = None
    audit_untried: dict[int, str] = field(default_factory=dict)
    # a multiclass model's audited rows of the class x2 is asked (-> why): they cannot
    # flip to their own class, so they need no certificate and none is missing
    audit_own_class: dict[int, str] = field(default_factory=dict)
    audit_certificates_in: str | None = None  # their folder, FOLDER/FEATURE.rows
    # an audited row that flips and is confident itself at the report's gap: with its x2,
    # a replay-checked pair (``row``, ``p_row``, ``p_x2``, ``x2``), whatever the check said
    audit_pair: dict | None = None
    # the audited flip that meets the largest gap (``row``, ``x2``): its max gap's lower
    # bound in the ranking where it beats the search's (report_ranking.raise_lower)
    audit_best: dict | None = None

    @property
    def rows_to_certify(self) -> int:
        """The audited rows that do not flip, with --certificates: each tried or not."""
        return len(self.audit_certificates or {}) + len(self.audit_untried)

    @property
    def certificate(self) -> str | None:
        """The certificate of an insensitive answer, written and verified (else None;
        ``check.proof`` says why)."""
        proof = self.check.proof
        return proof.certificate if proof is not None and proof.checked else None


@dataclass
class Report:
    provenance: Provenance
    gap: float
    budget: float
    ranking: list[Result]
    protected: list[ProtectedFinding]
    seconds: float
    model: Ensemble = field(repr=False)
    data_path: str | None = None
    label: str = "label"
    certificates: str | None = None  # the folder certificates were asked into, if any
    delta: float | None = None  # a regressor's protected features: the change asked
    classes: tuple[str, str] | None = None  # a multiclass model's pair, C1 -> C2
    # the ranking left max gaps open: the budget that gives them more time, in a sentence
    advice: str | None = None

    @property
    def unanswered(self) -> list[str]:
        """Plain sentences on what the report could not establish, the certificates asked
        for and not written included."""
        out = []
        unbounded = []
        for r in self.ranking:
            mg = r.max_gap or {}
            if r.status == ERROR:
                out.append(f"The max gap of {', '.join(r.features)} failed: {r.error}.")
            elif not mg.get("proven", False) and mg.get("upper") is None:
                unbounded.append(", ".join(r.features))
            elif not mg.get("proven", False):
                out.append(_unproven_gap(r, mg))
        if unbounded:
            out.append(
                f"The max {plural(unbounded, 'gap')} of {named(unbounded)} "
                f"{plural(unbounded, 'was', 'were')} not bounded within "
                f"{plural(unbounded, 'its', 'their')} time limit."
            )
        for p in self.protected:
            if p.check.status == UNKNOWN and p.audit_pair is None:
                can = (
                    "flip a confident decision"
                    if self.delta is None
                    else f"change the prediction by {self.delta:g}"
                )
                out.append(f"Whether {p.feature} can {can} was not settled within its time limit.")
            elif p.check.status == ERROR:
                out.append(f"The check of {p.feature} failed: {p.check.error}.")
            if p.audit_error:
                out.append(f"The row-level audit of {p.feature} failed: {p.audit_error}.")
            unknown = sum(row["unknown"] for row in p.audit_table if row["group"] == "all")
            if unknown:
                out.append(f"{unknown} audited rows of {p.feature} were not settled in time.")
        return out + self.missing_certificates + ([self.advice] if self.advice else [])

    @property
    def missing_certificates(self) -> list[str]:
        """The claims whose certificate was asked for (``--certificates``) and not written
        and verified, one line per reason (the claims' features named, or counted past
        HANDFUL)."""
        if self.certificates is None:
            return []
        answers = []  # ((prover, why), feature) of each insensitive answer not certified
        for p in self.protected:
            proof = p.check.proof
            if p.check.status == INSENSITIVE and proof is not None and not proof.checked:
                answers.append(((proof.prover, proof.why_not or "none was written"), p.feature))
        out = [
            f"The insensitive {plural(names, 'answer')} of {named(names)}, proved by {prover}, "
            f"{plural(names, 'has', 'have')} no verified certificate: {why}."
            for (prover, why), names in by_reason(answers).items()
        ]
        for p in self.protected:
            missed = [why for why in (p.audit_certificates or {}).values() if why]
            if missed:
                out.append(
                    f"{len(missed)} of the {p.rows_to_certify} audited rows of "
                    f"{p.feature} that do not flip have no verified certificate: {missed[0]}."
                )
            if p.audit_untried:
                out.append(
                    f"{len(p.audit_untried)} of the {p.rows_to_certify} audited rows of "
                    f"{p.feature} that do not flip were not tried for a certificate: "
                    f"{next(iter(p.audit_untried.values()))} ({UNTRIED_HINT})."
                )
        bounds = []  # (why, the ranked feature) of each upper bound not certified
        for r in self.ranking:
            proof = r.proof
            needed = proof is None or not proof.needs_none  # a bound of 0.5 needs none
            if r.status != ERROR and needed and (proof is None or not proof.checked):
                why = (proof.why_not if proof is not None else "") or "none was written"
                bounds.append((why, ", ".join(r.features)))
        return out + [
            f"The upper {plural(names, 'bound')} of the max {plural(names, 'gap')} of "
            f"{named(names)} {plural(names, 'has', 'have')} no verified certificate: {why}."
            for why, names in by_reason(bounds).items()
        ]


def _unproven_gap(r: Result, mg: dict) -> str:
    """What a max gap the ranking left open proved: its bounds, the upper one's
    certificate where it was written and verified."""
    name = ", ".join(r.features)
    lo, hi = mg.get("lower"), mg["upper"]  # an unbounded one: Report.unanswered says it
    certified = _certified_bound(r)
    if lo is None:
        return (
            f"The max gap of {name} is at most {upper_text(hi)}{certified}: the search "
            "stopped at its time limit before a pair gave it a lower bound."
        )
    return (
        f"The max gap of {name} is between {lower_text(lo)} and {upper_text(hi)}{certified}: "
        "the search stopped at its time limit before closing the bounds."
    )


def _certified_bound(r: Result) -> str:
    """A ranked max gap's upper bound's certificate, written and verified, as the
    unanswered list says it ("": none was)."""
    proof = r.proof
    if proof is None or not proof.checked or proof.bound is None:
        return ""
    claim = bound_claim(proof.bound, (r.max_gap or {}).get("kind", "prob"))
    return f" (certified: {claim}, {proof.certificate}, verified)"


def _provenance(ens: Ensemble, files: list[FileFacts], command: str, usage: Usage) -> Provenance:
    return Provenance(
        files=files,
        model_format=ens.origin.format if ens.origin is not None else ens.source,
        trees=len(ens.trees),
        features=ens.n_features,
        classes=ens.n_classes,
        software=software(ens, usage),
        command=command,
        created=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    )


def _results_paths(results: str | Path) -> tuple[Path, Path]:
    """The ranking's and the checks' logs beside ``results``, its folder made if missing."""
    make_folder_of(Path(results), str(results))
    return results_logs(results)


def results_logs(results: str | Path) -> tuple[Path, Path]:
    """The ranking's and the checks' logs beside ``results`` (``NAME.rank.jsonl``,
    ``NAME.checks.jsonl``), which a report run again reuses."""
    base = Path(results)
    stem = base.name.removesuffix(".jsonl")
    return base.with_name(f"{stem}.rank.jsonl"), base.with_name(f"{stem}.checks.jsonl")


@contextlib.contextmanager
def _other_models_said(ens: Ensemble, logs, say):
    """A report's results log that holds another model's answers (a model retrained in
    place, reported again) is said in the report's words, once, and not as the sweep's
    warning, which names a sweep and a plot the user did not ask for."""
    for path in logs:
        what = holds_other_model(path, ens) if path is not None else None
        if what is not None:
            say(
                f"report: {path} holds answers {what}: they are not reused, and this "
                "model's are added to it (--results PATH keeps each model's apart)"
            )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OtherModelResults)
        yield


def _log_of(path: Path | None) -> dict:
    """A report's results log as a sweep takes it: resumed from where it is there (a
    report run again reuses its answers, and says so), else written (a first run: the
    user asked no resume, so no 'resume from' line)."""
    if path is None:
        return {}
    return {"resume": path} if path.exists() else {"out": path}


def _pair(classes) -> tuple[str, str] | None:
    """The report's class pair (``"C1,C2"`` or ``(C1, C2)``) as two names, or None."""
    if classes is None:
        return None
    pair = classes.split(",") if isinstance(classes, str) else list(classes)
    return str(pair[0]).strip(), str(pair[-1]).strip()


def _x2_class(classes):
    """The audit's class of x2 from the report's class pair (``"C1,C2"`` or ``(C1, C2)``):
    an audit's x1 is the row, whatever its class, so only C2 is asked of it."""
    if classes is None:
        return None
    pair = classes.split(",") if isinstance(classes, str) else list(classes)
    return str(pair[-1]).strip()


def _audit(ens: Ensemble, data: str, feature: str, asked: dict, common: dict, rows_in) -> dict:
    """The row-level audit of ``feature``: ProtectedFinding's ``audit_*`` fields. ``rows_in``:
    how its rows are certified (``FOLDER/FEATURE.rows``), when asked: a RowCertificates."""
    certs = {}
    if rows_in is not None and not ens.is_regressor:  # a regressor's rows: no flip claim
        from .audit_certificates import rows_folder

        certs = {"certificates": rows_folder(rows_in.folder, feature), **rows_in.asked()}
    label, classes = common["label"], _x2_class(common["classes"])
    try:
        df = audit(ens, data, [feature], label=label, by=feature, classes=classes, **asked, **certs)
    except InputError as e:
        return {"audit_error": str(e)}
    table = summary(df, by=feature)
    rows = [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}
        for rec in table.to_dict(orient="records")
    ]
    return {
        "audit_rows": len(df),
        "audit_table": rows,
        "audit_certificates": df.attrs.get("certificates"),
        "audit_pair": _audit_pair(ens, df, asked.get("gap"), feature),
        "audit_best": best_flip(ens, df, feature),
    }


def _audit_pair(ens: Ensemble, df, gap: float | None, feature: str) -> dict | None:
    """The first audited row that flips and whose own P(class 1) is confident at ``gap``
    (a binary classifier's): the row and its x2 differ only in ``feature`` and meet the
    gap, both replayed, so they answer its check whatever the check's search reached."""
    if gap is None or ens.is_regressor or ens.n_classes != 2 or df.empty:
        return None
    confident = (df["p_row"] >= 0.5 + gap) | (df["p_row"] <= 0.5 - gap)
    hits = df[(df["status"] == FLIPPABLE) & confident]
    if hits.empty:
        return None
    hit = hits.iloc[0]
    return {
        "row": int(hit["row"]),
        "p_row": float(hit["p_row"]),
        "p_x2": float(hit["p_x2"]),
        "x2": _as_shown(ens, feature, hit.get(f"x2_{feature}")),
    }


def _as_shown(ens: Ensemble, feature: str, value):
    """An audited x2's value as a result shows it (compiler's shown_value: a whole
    number, a category's name): the audit's column of a whole-number feature is float
    where some rows have none (a binary feature's 1 read 1.0)."""
    number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool
    )
    if number and value == value:
        return shown_value(ens, ens.feature_names.index(feature), float(value))
    return value


@dataclass
class RowCertificates:
    """How a report's audited rows are certified: into ``folder``, ``budget`` seconds of
    box search a row, and either the first ``rows`` of each protected feature (given) or
    as many as the time until ``end`` (the report's budget, a time.time()) leaves, shared
    by the features still to audit (``left``)."""

    folder: Path
    budget: float
    rows: int | None
    end: float
    left: int
    note: Callable[[str], None] | None = None  # a long run's progress line

    def asked(self) -> dict:
        """audit()'s keywords for the next feature's rows (one feature fewer left)."""
        kw = {"certify_budget": self.budget, "certify_rows": self.rows}
        kw["certify_progress"] = None if self.note is None else self._progress
        if self.rows is None:
            kw["certify_timeout"] = max(0.0, self.end - time.time()) / max(1, self.left)
        self.left -= 1
        return kw

    def _progress(self, line: str) -> None:
        self.note(f"report: {line}")


def _check_data_file(data) -> None:
    """The report's rows are a file: the page names it with its hash."""
    if not isinstance(data, (str, Path)):
        raise InputError(
            f"data: give the rows as a CSV or Parquet file path (the report records the "
            f"file and its hash), not a {type(data).__name__}"
        )
    if not Path(data).is_file():
        raise InputError(f"{data}: no such data file")


@notes_once()  # its ranking, checks and audits each read the data
def report(
    model,
    data: str | Path,
    *,
    label: str = "label",
    details: str | Path | None = None,
    features=None,
    protected=(),
    gap: float | None = None,
    classes=None,
    delta: float | None = None,
    budget: float = DEFAULT_BUDGET,
    results: str | Path | None = None,
    command: str = "",
    model_file: str | Path | None = None,
    progress: Display | None = None,
    note: Callable[[str], None] | None = None,
    certificates: str | Path | None = None,
    certify_budget: float = CERTIFY_SECONDS,
    certify_rows: int | None = None,
) -> Report:
    """Gather an audit report of ``model`` on ``data`` (a CSV / Parquet path).

    ``features``: the features ranked by max gap (default: all). ``protected``: features
    checked globally (with a witness pair near the data) and audited row by row, by group
    and by decision. ``budget``: the total time in seconds, shared between the steps.
    ``results``: a JSON Lines path; the ranking and the checks are kept beside it
    (``NAME.rank.jsonl``, ``NAME.checks.jsonl``) and reused when the report is run again.
    ``command`` and ``model_file``: how to reproduce the report and the model's file,
    for its provenance (default: ``model``'s path, or the file it was loaded from).
    ``certificates``: a folder; the proof of each protected feature's "insensitive"
    answer is written there by the box search and checked by the independent checker
    (docs/certificates.md), and so is the upper bound of each ranked max gap
    (``FEATURE.max-gap.json``), all within ``budget`` (CERTIFY_SHARE of it is kept for
    them; each claim gets its share of the time left, at most ``certify_budget``
    seconds: report_certificates.py); the page says, per claim, whether it was certified
    or why not, and each protected feature's audited rows that do not flip
    (FOLDER/FEATURE.rows): the first ``certify_rows``, or as many as ``budget`` allows.
    ``delta``: a regressor's protected features are asked for a change of at least
    ``delta`` (the prediction, not a probability: ``gap`` does not apply), and each row. ``gap``: DEFAULT_GAP unless given
    (a multiclass model's protected features need a ratio given)."""
    t0 = time.time()
    say = note or (lambda _msg: None)
    _check_arguments(data, budget, certify_rows, gap, protected)
    # a probability model answers the report's gaps as a binary classifier
    ens = read_as(load_model(model, details=details, data=data, label=label), False)
    say_data_notes(load_data(data, ens, label))  # the columns checked before any solving
    # named as check's vary is: a library's rewritten name ('mean radius'), a did-you-mean
    protected = list(feature_list(ens, protected, "protected")) if protected else []
    refuse_repeats(protected, "protected")
    _check_change(ens, protected, delta)
    names = list(ens.feature_names if features is None else feature_list(ens, features, "features"))
    refuse_repeats(names, "features")
    _check_classes(ens, protected or names, gap if protected else None, classes, bool(protected))
    gap = DEFAULT_GAP if gap is None else gap
    rank_path, check_path = (None, None) if results is None else _results_paths(results)
    common = {"data": str(data), "label": label, "classes": classes, "progress": progress}
    # what a protected feature is asked: a classifier's gap, or a regressor's change
    asked = {"gap": gap} if delta is None else {"delta": delta}
    model_file = _model_file(model, model_file, ens, certificates is not None)
    work = budget * (1 - CERTIFY_SHARE) if certificates is not None else budget  # the rest
    with watching() as usage, _other_models_said(ens, (rank_path, check_path), say):
        ranking = _rank(ens, names, RANK_SHARE * work, rank_path, common, say)
        checks = _checks(ens, protected, asked, CHECK_SHARE * work, check_path, common, say)
        rows_in = None
        if certificates is not None:  # the claims', then the rows' within the time left
            claims = (Path(certificates), model_file, certify_budget, t0 + budget, budget, say)
            ClaimCertificates(*claims).certify(ens, checks, ranking, asked, classes)
            bounds = (certify_budget, certify_rows, t0 + budget, len(protected))
            rows_in = RowCertificates(Path(certificates), *bounds, say)
        found = _audits(ens, checks, asked, common, say, rows_in)
    _audit_lower_bounds(ens, data, label, ranking, found, say)
    # the details file the model was read with (given, or found beside the model)
    files = _files(model_file, data, details or dict(ens.inputs).get("details"))
    return Report(
        provenance=_provenance(ens, files, command, usage),
        gap=gap,
        budget=budget,
        ranking=ranking,
        protected=found,
        seconds=time.time() - t0,
        model=ens,
        data_path=str(data),
        label=label,
        certificates=None if certificates is None else str(certificates),
        delta=delta,
        classes=_pair(classes),
        advice=budget_advice(ranking, budget, RANK_SHARE * work / budget, REPORT_AGAIN),
    )


def _model_file(model, model_file, ens: Ensemble, certified: bool) -> str | Path | None:
    """The model's file for the page and its certificates: ``model_file``, else ``model``
    when a path or the file it was loaded from (a loaded Ensemble's claims were "no
    certificate: a certificate needs the model's file" while its rows were certified from
    that file); with certificates asked (``certified``), a model the checker has no file
    of (in memory) is refused before the ranking, where the claims and the audited rows
    each said so after it."""
    if certified:
        refuse_without_model_file(model, ens, "certificates=")
    return model_file if model_file is not None else model_file_of(model, ens)


def _audit_lower_bounds(ens, data, label: str, ranking: list[Result], found: list, say) -> None:
    """Each protected feature's best audited flip as its ranked max gap's lower bound,
    where it beats the search's (report_ranking.raise_lower), said in a line."""
    ranked = {_ranked_feature(r): r for r in ranking}
    X = None
    for f in found:
        r = ranked.get(f.feature)
        if f.audit_best is None or r is None:
            continue
        X = load_data(data, ens, label).X if X is None else X
        if raise_lower(ens, X, r, f.audit_best):
            say(f"report: {f.feature}: max gap at least {r.max_gap['lower']:.4g}, from its audit")


def _check_limits(budget: float, certify_rows: int | None) -> None:
    if budget <= 0 or not math.isfinite(budget):
        raise InputError(f"the budget must be a positive number of seconds, not {budget}")
    if certify_rows is not None and not (isinstance(certify_rows, int) and certify_rows > 0):
        raise InputError(f"certify_rows must be a positive whole number, not {certify_rows!r}")


def _check_change(ens: Ensemble, protected: list[str], delta: float | None) -> None:
    """A regressor's protected features need ``delta`` (its predictions have no
    probability gap); a classifier's take ``gap``, never ``delta``."""
    if ens.n_classes == 0 and protected and delta is None:
        raise InputError(
            "the model is a regressor: give --delta D, the change of its prediction asked "
            "of the protected features (the report's --gap is a probability gap)"
        )
    if ens.n_classes != 0 and delta is not None:
        raise InputError("--delta is a regressor's change; a classifier's is --gap")
    if delta is not None and not (delta > 0 and math.isfinite(delta)):
        raise InputError(f"--delta must be a positive number, not {delta}")


def _check_arguments(data, budget, certify_rows, gap, protected) -> None:
    """What report() can refuse before it reads the model."""
    _refuse_gap_alone(gap, protected)
    _check_data_file(data)
    _check_limits(budget, certify_rows)


def _refuse_gap_alone(gap, protected) -> None:
    """A gap given without protected features: only they are asked it (the ranking asks
    each feature's largest gap), so it would be taken and used for nothing."""
    if gap is not None and not protected:
        raise InputError(
            f"{setting('gap', gap)} is the gap asked of the protected features: name them "
            f"({spelled('protected=', '--protected NAMES')}), or leave the gap out (the ranking "
            "asks every feature's largest gap)"
        )


def _check_classes(
    ens: Ensemble, asked_of: list[str], gap, classes, protected: bool = False
) -> None:
    """A multiclass model's class pair, and the ratio gap the protected features are asked
    (``gap``; None: none is, or none was given to the ``protected`` ones), checked before
    anything is solved, as check's are (a binary model's gap and classes too: out of its
    range, a gap was refused only after the whole ranking)."""
    if ens.is_regressor or not asked_of:
        return
    if ens.n_classes == 2 and ens.n_outputs == 1:
        given = {k: v for k, v in (("gap", gap), ("classes", classes)) if v is not None}
        if given:
            resolve_condition(ens, query_from_keywords(asked_of[:1], given, ens=ens))
        return
    if gap is None and protected:  # the default is a binary model's probability gap
        flags, kw = (
            ("--gap G", "gap=") if classes else ("--gap G --classes C1,C2", "gap=, classes=")
        )
        raise InputError(
            f"the model has {ens.n_classes} classes: its protected features are asked a "
            f"probability ratio, give it ({flags}; {kw} in Python; G >= 1, e.g. 2)"
        )
    kw = {"gap": 1.0 if gap is None else gap, "classes": classes}
    resolve_condition(ens, query_from_keywords(asked_of[:1], kw, ens=ens))


def _rank(ens, names, seconds: float, rank_path, common, say) -> list[Result]:
    """Every feature's max gap within ``seconds`` in all: a sweep within that budget
    (questions/sweep_budget.py: a short first pass, then the time left to the max gaps
    still open). The box search is made ready first (compiled, on a first run): its
    compile time is not the budget's."""
    if gap_kernel_compile.available():
        gap_kernel.prepare(say)
    say(f"report: ranking {len(names)} features by max gap ({seconds:.0f}s in all)")
    kw = {"max_gap": True, "max_gap_tolerance": RANK_TOLERANCE, **_log_of(rank_path), **common}
    return sweep(ens, features=names, budget=seconds, **kw)


def _ranked_feature(r: Result) -> str:
    return r.features[0] if len(r.features) == 1 else ",".join(r.features)


def _checks(ens, protected, asked: dict, seconds: float, check_path, common, say) -> list:
    """Each protected feature's global answer (data-aware: the pair shown is the
    likeliest under the data the time allows), as (feature, answer), within ``seconds``
    shared between them. ``asked``: the gap (or a regressor's change, delta)."""
    if not protected:
        return []
    per_check = max(MIN_STEP_SECONDS, seconds / len(protected))
    at = f"gap {asked['gap']:g}" if "gap" in asked else f"a change of {asked['delta']:g}"
    say(f"report: checking {', '.join(protected)} at {at} ({per_check:.0f}s each)")
    checks = sweep(
        ens,
        features=protected,
        **asked,
        timeout=per_check,
        **_log_of(check_path),
        data_aware=DATA_AWARE,
        **common,
    )
    return list(zip(protected, checks, strict=True))


def _audits(ens, checks, asked: dict, common, say, rows_in) -> list:
    """Each protected feature's finding: its global answer (``checks``: feature and
    answer) and its row-level audit at the same gap (``asked``); ``rows_in``: how the
    audited rows are certified (a RowCertificates), or None."""
    found = []
    for p, res in checks:
        say(f"report: auditing the rows of {common['data']} for {p}")
        f = ProtectedFinding(p, res, **_audit(ens, common["data"], p, asked, common, rows_in))
        if f.audit_certificates is not None:
            from .audit_certificates import (
                certified_text,
                rows_folder,
                split_own_class,
                split_untried,
            )

            f.audit_certificates_in = str(rows_folder(rows_in.folder, p))
            line = certified_text(f.audit_certificates, f.audit_certificates_in)
            f.audit_certificates, f.audit_untried = split_untried(f.audit_certificates)
            f.audit_certificates, f.audit_own_class = split_own_class(f.audit_certificates)
            say(f"report: {p}: {line}" + (f" ({UNTRIED_HINT})" if f.audit_untried else ""))
        found.append(f)
    return found


def _files(model_file, data, details) -> list[FileFacts]:
    files = [FileFacts.of("model", model_file)] if model_file is not None else []
    files.append(FileFacts.of("data", data))
    if details is not None and isinstance(details, str | Path):
        files.append(FileFacts.of("details", details))
    return files


def witness_found(f: ProtectedFinding) -> bool:
    return f.check.status == SENSITIVE and bool(f.check.witness)
