"""The Python API, mirroring the CLI: ``check`` (and ``check_many``, many checks of one
model loaded once), ``compare``, ``max_gap``, ``sweep`` and ``report``. They take the same keywords, read from one table (questions/keywords.py);
each calls its question's module (questions/) and gives it the views it shows."""

from __future__ import annotations

import functools
import inspect
import reprlib
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ..answers.result import Result
from ..compiler.errors import InputError, suggests_keywords
from ..compiler.query import Query
from ..questions.ask import answer
from ..questions.campaign import ask_many
from ..questions.certificate_document import (
    check_certificate_path,
    check_certify_budget,
    refuse_budget_alone,
)
from ..questions.certificate_model import model_file_of, refuse_without_model_file
from ..questions.certify import certify_answer
from ..questions.certify_recorded import recording_for
from ..questions.compare import backend_list, compare_query, disagreement
from ..questions.keywords import (  # noqa: F401 - re-exported: the API's keyword table
    API_KEYWORDS,
    MODEL,
    Keyword,
    keyword_values,
    model_of,
    query_maker,
    takes_query_keywords,
)
from ..questions.max_gap import DEFAULT_TOLERANCE, check_tolerance
from ..questions.output_folder import writable_file
from ..questions.query_build import make_query, require_backend  # noqa: F401
from ..questions.report import report as gather
from ..questions.sweep import sweep as sweep_question
from ..views.progress import sweep_progress
from ..views.report_html import check_report_path, render


class WhereTexts:
    """The ``where=`` keyword's constraints, a text or a list of texts as ``--where`` takes
    them (docs/language.md, "Constraints"), read against the model when the call's queries
    are made (questions/keywords.py ``query_maker``): the language's grammar reads them."""

    def __init__(self, given) -> None:
        if isinstance(given, str):
            given = [given]
        if not isinstance(given, (list, tuple)):
            raise InputError(f"where=: give a text or a list of texts, not {given!r}")
        self.texts = tuple(given)

    def read(self, ens):
        from ..language.where_flag import FlagConstraints

        return FlagConstraints(ens, self.texts, "where=")


def with_where(keywords: dict) -> dict:
    """The call's keywords with ``where`` given as texts made a ``WhereTexts``."""
    given = keywords.get("where")
    if given is None or isinstance(given, WhereTexts):
        return keywords
    return keywords | {"where": WhereTexts(given)}


@takes_query_keywords
def check(
    model,
    vary,
    *,
    name: str = "",
    certificate: str | Path | None = None,
    certify_budget: float | None = None,
    **keywords,
) -> Result:
    """Is ``model`` sensitive to the features in ``vary``? One query, one Result.

    ``model``: a model file path, a fitted XGBoost / LightGBM / scikit-learn model, or a
    loaded ``Ensemble``. ``data`` gives realistic witnesses and ``Result.distance`` to the
    data; ``data_aware`` ("prob", "clause", "probclause") also steers the search toward it
    (docs/data-aware.md). ``name`` labels the query (default: the features).
    ``certificate``: a file to write an "insensitive" answer's proof to, checked by the
    independent checker of ``treesens verify`` (as the CLI's ``--certificate``; the model
    given as its file, or loaded from one); ``Result.proof`` says whether it was
    certified, or why not.
    ``certify_budget``: the box search's seconds for it (default: the query's timeout).

    >>> r = check("model.json", vary=["sex"], gap=0.2)   # doctest: +SKIP
    >>> r.status, r.witness
    """
    return _ask(model, vary, name, keywords, "check", certificate, certify_budget)


@takes_query_keywords
def check_many(model, questions, **keywords) -> list[Result]:
    """Many checks of one model, loaded once (the batch path: a sweep's and
    ``bench/run.py --batch``'s, questions/campaign.py ``ask_many``): the results in the
    order of ``questions``, the same answers as ``check`` gives one at a time, each
    within ``timeout`` from its own start. A query that fails is its "error" result.

    Each item of ``questions`` is what ``check``'s ``vary`` takes, or a dict of
    ``check``'s query keywords with its ``vary`` (and an optional ``name``), over the
    call's ``keywords``; the model's keywords (details, data, bounds, ...) are the call's.

    >>> rs = check_many("model.json", [["sex"], {"vary": ["age"], "gap": 0.1}], gap=0.2)  # doctest: +SKIP
    >>> [r.status for r in rs]
    """
    keywords = with_where(keywords)
    kw = keyword_values(keywords, "check_many")
    require_backend(kw["backend"])
    ens = model_of(model, kw)
    shared = query_maker(kw, ens)
    queries = []
    for i, item in enumerate(_questions_of(questions)):
        with _named_question(i, item):
            queries.append(_question_query(item, keywords, ens, shared))
    return ask_many(ens, queries)


def _question_query(item, keywords: dict, ens, shared) -> Query:
    """One of ``check_many``'s questions as a query: its own keywords over the call's."""
    own = dict(item) if isinstance(item, Mapping) else {"vary": item}
    if "vary" not in own:
        raise InputError("a question without vary")
    vary, name = own.pop("vary"), own.pop("name", "")
    for k in own:
        if k in API_KEYWORDS and API_KEYWORDS[k].role == MODEL:
            raise InputError(f"{k} is the call's keyword, not a question's")
    asked = with_where(keywords | own)
    make = query_maker(keyword_values(asked, "check_many"), ens) if own else shared
    return make(vary, name)


@contextmanager
def _named_question(i: int, item) -> Iterator[None]:
    """A bad question of ``check_many`` named in its error: its place in the list and
    the question (an unknown feature, keyword or gap in the 40th question of a list
    said only ``check_many``)."""
    place = f"check_many questions[{i}] {reprlib.repr(item)}"
    try:
        yield
    except InputError as e:
        e.where = f"{place}, {e.where}" if e.where else place
        e.args = (f"{e.where}: {e.message}",)
        raise
    except TypeError as e:  # an unknown keyword, as Python says it
        raise TypeError(f"{place}: {e}") from None


def _questions_of(questions) -> list:
    """``check_many``'s questions as a list, or one InputError: a string or a dict alone
    (one question) was read item by item, a string's letters as features ('m')."""
    if isinstance(questions, (str, Mapping)):
        raise InputError(
            f"questions: give a list of questions, not one ({questions!r}): "
            f"check_many(model, [{questions!r}]), or check for one"
        )
    try:
        return list(questions)
    except TypeError:
        raise InputError(
            f"questions: give a list of questions (each what vary takes, or a dict of check's "
            f"keywords), not {questions!r}"
        ) from None


def _ask(
    model,
    vary,
    name: str,
    keywords: dict,
    where: str,
    certificate: str | Path | None = None,
    certify_budget: float | None = None,
):
    """One question from the API's keywords, answered by its runner (questions/ask.py):
    the time limit runs from the call. ``certificate``: certified into that file after
    (questions/certify.py), its proof record saying so."""
    start = time.time()
    check_certify_budget(certify_budget)
    refuse_budget_alone(certify_budget, certificate)
    if certificate is not None:
        check_certificate_path(certificate)
    ens, q, kw = query_of(model, vary, name, keywords, where)
    if certificate is not None:  # before the search, not after it
        refuse_without_model_file(model, ens, "certificate=")
    with recording_for(q, certificate):  # the certificate from the answer's own proof
        res = answer(ens, q, start=start, memory_mb=kw["memory_mb"])
    if certificate is not None:
        model_file = model_file_of(model, ens)
        budget = certify_budget if certify_budget is not None else q.plan.timeout
        certify_answer(ens, q, res, certificate, model_file, budget, kw["memory_mb"])
    return res


# the keywords a function takes beside the table's, for a misspelt one's did-you-mean
OWN_KEYWORDS = {
    "check": ("certificate", "certify_budget", "name"),
    "max_gap": ("tolerance", "certificate", "certify_budget", "name"),
    "expect_insensitive": ("allow_unknown",),
    "expect_sensitive": ("allow_unknown",),
    "expect_max_gap": ("at_most", "allow_unknown"),
}


def query_of(model, vary, name: str, keywords: dict, where: str) -> tuple:
    """The ensemble and the query an API call asks (``where``: the function, for an
    unknown keyword's message), with every keyword's value."""
    own = OWN_KEYWORDS.get(where, ())
    kw = keyword_values(with_where(keywords), where, own)
    require_backend(kw["backend"])
    ens = model_of(model, kw)
    return ens, query_maker(kw, ens)(vary, name), kw


@takes_query_keywords
def compare(model, vary, *, backends=None, name: str = "", **keywords) -> list[Result]:
    """One query, compiled once, solved on several backends (each in its own worker
    process): a Result per backend, as ``treesens compare`` prints them.

    ``backends``: a list or "cpsat,highs" (default: every installed backend; a race in the
    string joins its backends by '+', "cpsat,race:cpsat+highs"). The
    heuristic is off unless ``heuristic=True`` (it would answer for every backend alike).
    Backends that disagree (one proves "insensitive", another has a replayed witness)
    raise a RuntimeWarning: one of them is wrong.
    """
    start = time.time()  # each backend's limit counts the load and the compile, as check's
    if "backend" in keywords:  # check's one solver, which compare left unread
        raise InputError(
            f"compare takes backends= (a list, or one text 'cpsat,z3'), not "
            f"backend={keywords['backend']!r}: backend= is the one solver of check"
        )
    kw = keyword_values(with_where(keywords), "compare")
    names = backend_list(backends)
    ens = model_of(model, kw)
    q = query_maker(kw, ens)(vary, name)
    results = compare_query(
        ens, q, names, memory_mb=kw["memory_mb"], heuristic=bool(kw["heuristic"]), start=start
    )
    msg = disagreement(results)
    if msg:
        warnings.warn(f"{q.label}: {msg}", RuntimeWarning, stacklevel=2)
    return results


@takes_query_keywords
def max_gap(
    model,
    vary,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    name: str = "",
    certificate: str | Path | None = None,
    certify_budget: float | None = None,
    **check_kw,
) -> Result:
    """How sensitive is ``model`` to ``vary``: the largest gap g* at which it is
    sensitive, within ``tolerance`` (binary: absolute, in probability; multiclass, with
    ``classes``: in ln units; a regressor's largest change f(x1) - f(x2): relative to its
    bound), found by bisection with
    ``check`` (questions/max_gap.py). The keywords are ``check``'s, without a gap; the whole
    search runs within ``timeout``.

    ``Result.max_gap`` holds the bounds: ``lower`` (the gap the replay-checked witness
    achieves, also ``Result.gap``), ``upper`` (proven: no pair reaches a larger gap),
    ``proven`` (they meet within the tolerance). Status "insensitive": no pair at any
    gap; "unknown": no witness and no proof within the time limit. ``certificate``: a
    file for the certificate of the upper bound (no pair reaches U', docs/certificates.md),
    checked by the independent checker; ``certify_budget`` as for ``check``.

    >>> r = max_gap("model.json", vary=["sex"])   # doctest: +SKIP
    >>> r.max_gap["lower"], r.max_gap["upper"]
    """
    for given in ("gap", "margin_gap"):  # not ``name``: that is the query's name
        if check_kw.get(given) is not None:
            raise InputError(f"max_gap searches the gap itself: drop {given}=")
    largest = {"kind": "max_gap", "params": {"tolerance": check_tolerance(tolerance)}}
    return _ask(model, vary, name, check_kw | largest, "max_gap", certificate, certify_budget)


@suggests_keywords(also=gather)
def report(model, data, *, out=None, **keywords):
    """The auditor's report (docs/report.md): a ``questions.report.Report``, also written
    as one self-contained HTML page to ``out`` when given. The keywords are
    ``questions.report.report``'s (label, details, features, protected, gap, classes,
    budget, results, progress)."""
    keywords.setdefault("command", _report_call(model, data, out, keywords))
    if out is not None:  # before the report's minutes, not after them
        writable_file(out, str(out))
        check_report_path(out, str(out))
    rep = _with_progress_flag(gather)(model, data, **keywords)
    if out is not None:
        Path(out).write_text(render(rep), encoding="utf-8")
    return rep


def _report_call(model, data, out, keywords: dict) -> str:
    """The call that makes a report again, its page's "Reproduce with" line: the model
    and paths as given (a fitted model by its type, which the call cannot name)."""

    def shown(v) -> str:
        if isinstance(v, str | Path | int | float | bool | list | tuple | dict) or v is None:
            return repr(str(v) if isinstance(v, Path) else v)
        return f"<{type(v).__name__} object>"

    given = {k: v for k, v in keywords.items() if k not in ("progress", "note")}
    args = [shown(model), shown(data), *(f"{k}={shown(v)}" for k, v in given.items())]
    args += [] if out is None else [f"out={shown(out)}"]
    return f"treesens.report({', '.join(args)})"


def _with_progress_flag(question: Callable) -> Callable:
    """``question`` (which takes a progress Display) as the API offers it: ``progress``
    True (the views' display: a bar in a notebook or terminal, lines elsewhere) or False."""

    @functools.wraps(question)
    def call(*args, progress: bool = True, **keywords):
        display = functools.partial(sweep_progress, enabled=bool(progress))
        return question(*args, progress=display, **with_where(keywords))

    sig = inspect.signature(question)
    params = [
        p.replace(default=True, annotation="bool") if p.name == "progress" else p
        for p in sig.parameters.values()
    ]
    call.__signature__ = sig.replace(parameters=params)
    return call


sweep = _with_progress_flag(sweep_question)
