"""Certificates for "insensitive": the box search's proof written out for a checker that
shares no code with treesens (``treesens verify``, the ``verify/`` package).

The proof is the search tree of the box search (search/box_search.py) in preorder: a
split names a column of the pair space (a feature, and for a varied feature which input)
and the threshold at which the library's test divides it ("yes" side first); a pruned
box names the gap row whose bound rules it out. docs/certificates.md describes the
format and what the checker recomputes.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..answers.proof import BOX_SEARCH, TRIVIAL_BOUND, Proof, bound_claim, brief
from ..answers.result import ERROR, INSENSITIVE, Result
from ..answers.verdict import NearMiss, check_pair
from ..compiler.encode import ensemble_structure
from ..compiler.ensemble import EXP, IDENTITY, PROBA, Ensemble
from ..compiler.invert import witness_from_pair
from ..compiler.memory_estimate import room_bytes
from ..compiler.query import MAX_RATIO, Gap, GapKind, Query
from ..compiler.question import DOWN
from ..compiler.readings import read_for
from ..readers.formats.catboost_categories import CatBoostColumns
from ..readers.formats.xgboost_dump import dump_refusal
from ..search.anchored_boxes import anchor_of, anchor_ranks, is_anchored
from ..search.box_search import FOUND, PROVED, BoxOutcome
from ..search.boxes import reads_alike, rows_of_each_input
from ..search.compiled_check import HandedOver, check_search, note_rebuild
from ..search.link_proof import link_proof_encoding, link_search
from ..search.pair_boxes import PairTablesTooLarge, pair_tables
from ..search.pair_scope import class_pair_encodings, pair_encoding, plain_numeric
from ..search.proof_tree import ALIKE, ProofTree, RecordedTiling
from ..verify import walk
from ..verify.check import CertificateError, verify_file
from ..verify.models import ModelError, read_model
from .certificate_document import is_certificate, model_format, model_library, write_document
from .certificate_steps import proof_part
from .certify_groups import groups_refusal, model_test
from .certify_pipeline import pipeline_refusal
from .memory import memory_limit


@dataclass(frozen=True)
class Certified:
    """What became of a certificate asked for: written and accepted by the independent
    checker (``treesens verify``'s), or why not."""

    written: bool
    # for stderr: "certificate written to PATH (...), verified ...", or "no certificate: WHY"
    message: str
    # written: the proof's boxes, its leaves (as verify counts them); refused: the boxes
    # the search visited
    boxes: int = 0
    seconds: float = 0.0
    verified: bool = False  # the checker of the ``verify`` package accepted the file written
    reason: str = ""  # why the answer is not independently checked ("" when verified)
    path: str | None = None  # the file written
    # the boxes the compiled search recorded and its proof's rebuild (stats["certificate"])
    rebuild: dict = field(default_factory=dict)


NO_CERTIFICATE = "no certificate"
# libraries whose boxes may hold category codes and NaN (certificate version 3); what
# the checker's reader of a format does not route (CatBoost's CTR features; a dump's
# categorical splits, which treesens refuses too) it refuses
CODED_LIBRARIES = (
    "xgboost",
    "xgboost-dump",
    "lightgbm",
    "sklearn",
    "sklearn-pipeline",
    "catboost",
    "onnx",
)
_BOUND_DIGITS = 3  # U' keeps this many significant digits
_BOUND_MARGIN = 1e-6  # and lies at least this far above U


def refused(why: str, boxes: int = 0, seconds: float = 0.0) -> Certified:
    return Certified(False, f"{NO_CERTIFICATE}: {why}", boxes, seconds, reason=why)


def certified_bound(upper: float, kind: str = "prob") -> float:
    """The gap U' a max gap's certificate states no pair reaches: its upper bound U plus a
    margin, rounded up to a few significant digits (0.3498 -> 0.35), so that the claim is
    strictly above every gap a pair achieves; for a probability gap (``kind`` "prob"),
    more digits when fewer reach 0.5 (0.499 -> 0.4991), the largest gap there is. A
    multiclass ratio ("ratio") or a regressor's change ("change") has no such cap."""
    v = max(upper, 0.0) + _BOUND_MARGIN
    for digits in range(_BOUND_DIGITS, 10):
        step = 10.0 ** (math.floor(math.log10(v)) - (digits - 1))
        bound = float(f"{math.ceil(v / step) * step:.{digits}g}")
        bound = bound if bound > upper else bound + step
        if kind != "prob" or bound < 0.5:
            break
    return bound


def answer_refusal(res) -> str | None:
    """Why an answer (a Result) gets no certificate whatever the model: an answer that is
    not "insensitive" (a max gap's is its upper bound: ``max_gap_refusal``); None: it may
    get one."""
    if res.max_gap is not None:
        return max_gap_refusal(res)
    if res.status != INSENSITIVE:
        return f"the answer is {res.status}, not a proof of insensitive"
    return None


def max_gap_refusal(res) -> str | None:
    """Why a max gap's upper bound gets no certificate whatever the model (None: it may)."""
    mg = res.max_gap or {}
    if res.status == ERROR or mg.get("upper") is None:
        return "the max gap has no upper bound to certify"
    kind = mg.get("kind", "prob")
    if kind == "prob" and float(mg["upper"]) >= 0.5:
        return TRIVIAL_BOUND
    if kind == "prob" and certified_bound(float(mg["upper"])) >= 0.5:
        return "the upper bound is not below 0.5, the largest gap there is"
    if kind == "ratio" and not certified_bound(float(mg["upper"]), kind) <= MAX_RATIO:
        # a class at probability 0 (a forest's pure leaf): an infinite ratio
        return f"the upper bound is above {MAX_RATIO:g}, the largest ratio a certificate states"
    return None


# an anchored question (an audit's row): x1 pinned to the row on every feature, x2 free
# on F; its certificate's claim is x2's flip alone (verify/claims.py, ``flip``), a domain
# per input (format 4). A regressor's row is not stated so (its claim would name the
# row's prediction), nor a category code that is missing (a coded domain lists codes)
ANCHORED_REGRESSOR = (
    "a regressor's row (x2 at least D from the row's prediction) is not certified: "
    "certificates state a row's flip of classifiers only"
)
ANCHORED_MISSING = (
    "the row has no value of {names}: a certificate states a missing value of a numeric "
    "feature, not of a categorical one (its domain lists codes)"
)
ANCHORED_UNRANKED = (
    "the box search does not take this row: a value of it is outside its feature's "
    "declared bounds, not whole for an integer feature, or a code the model does not list"
)


def anchored_refusal(ens: Ensemble, q: Query) -> str | None:
    """Why an anchored question (an audit's row) gets no certificate (None: it may)."""
    if ens.is_regressor:
        return ANCHORED_REGRESSOR
    coded = {f for f, d in ensemble_structure(ens).domains.items() if d.codes is not None}
    row = anchor_of(q)
    missing = [ens.feature_names[f] for f in sorted(coded) if math.isnan(row[f])]
    if missing:
        return ANCHORED_MISSING.format(names=", ".join(missing))
    return None


def checker_reads(ens: Ensemble, encs) -> bool:
    """Whether the checker reads the boxes of these encodings of ``ens``: plain numbers,
    or category codes, NaN ranks and LightGBM's zero band of a library whose own reader
    it uses (``CODED_LIBRARIES``)."""
    return all(plain_numeric(e) for e in encs) or model_library(ens) in CODED_LIBRARIES


def model_refusal(ens: Ensemble, q: Query, model_file: str | Path | None) -> str | None:
    """Why no question of this kind about this model gets a certificate (None: it may);
    a probability model is read as ``q`` asks (compiler/readings.py)."""
    ens = read_for(ens, q)
    if is_anchored(q) and anchored_refusal(ens, q) is not None:
        return anchored_refusal(ens, q)
    if model_file is None or not Path(model_file).is_file():
        return "a certificate needs the model's file (the checker reads it with its library)"
    if model_library(ens) == "sklearn-pipeline" and pipeline_refusal(ens) is not None:
        return pipeline_refusal(ens)  # before the file's kind: no .skops file would do
    if (
        model_library(ens) in ("sklearn", "sklearn-pipeline")
        and Path(model_file).suffix != ".skops"
    ):
        return "a scikit-learn model is certified from a .skops file (the checker loads no pickle)"
    if model_library(ens) == "lightgbm" and _json_text(model_file):
        return "the checker reads a LightGBM model's text (save_model), not its dump_model() JSON"
    if model_library(ens) == "catboost" and Path(model_file).suffix != ".cbm":
        return "a CatBoost model is certified from a .cbm file (the checker reads it with catboost)"
    if model_library(ens) is None:
        return (
            f"the checker does not read {model_format(ens)} models (it reads XGBoost "
            "models and dumps, LightGBM models, scikit-learn .skops files, CatBoost .cbm "
            "files and ONNX tree ensembles)"
        )
    binary = not ens.is_regressor and ens.n_outputs == 1
    if model_library(ens) == "xgboost-dump" and dump_refusal(ens) is not None:
        return dump_refusal(ens)
    if ens.is_regressor and ens.link not in (IDENTITY, EXP):  # exp: ``link`` steps
        return nonlinear_link_refusal(ens.link)
    if (
        model_library(ens) != "sklearn-pipeline"
        and not isinstance(ens.columns, CatBoostColumns)
        and groups_refusal(ens) is not None
    ):
        # columns folded into features (one-hot groups); CatBoost's own categorical
        # columns are the model's: the checker maps their categories itself
        return groups_refusal(ens)
    if q.threshold is not None:
        return "certificates cover gaps and changes, not the threshold form (above, below)"
    if binary and ens.link == PROBA and q.gap.kind == "margin" and q.gap.value >= 0.5:
        # P(x1) >= 0.5 + g and P(x2) <= 0.5 - g: past 0 and 1 the checker takes no claim
        return "a forest's margin gap is stated within [0, 0.5): its probabilities lie in [0, 1]"
    if model_library(ens) in CHECKER_READS_FIRST:
        return checker_refusal(str(model_file), model_library(ens), model_test(ens), _named(ens))
    return None


def _json_text(model_file: str | Path) -> bool:
    """Whether the file holds JSON (a LightGBM dump_model(), which treesens reads)."""
    with open(model_file, "rb") as fh:
        return fh.read(256).lstrip().startswith(b"{")


def _named(ens) -> tuple:
    """A CatBoost model's categorical features with the category of each code (the
    checker maps each to the model's one-hot values), as (name, categories) pairs."""
    if model_library(ens) != "catboost":
        return ()
    return tuple((f.name, tuple(f.categories)) for f in ens.features if f.categories is not None)


def nonlinear_link_refusal(link: str) -> str:
    """Why a regressor predicting ``link(raw)`` gets no certificate: a change of D in its
    prediction is no linear condition on the trees' raw scores (docs/certificates.md)."""
    return (
        f"the regressor predicts {link}(raw score): a change of D in its prediction is "
        "not a linear condition on the trees' scores, which certificates state (they "
        "cover regressors that predict the raw score or exp of it)"
    )


# formats whose files treesens reads in more shapes than the checker does (an ONNX graph
# of several inputs, a CatBoost model with one-hot features, ...): the checker reads the
# file first, so that such a model gets "no certificate: why" rather than a certificate
# the checker then rejects
CHECKER_READS_FIRST = ("sklearn", "catboost", "onnx")


def checker_refusal(model_file: str, library: str, test: str, categories: tuple = ()) -> str | None:
    """Why the checker cannot read ``model_file`` (None: it can); once per file version
    (``categories``: (feature, its codes' categories) pairs of a CatBoost model)."""
    st = Path(model_file).stat()
    return _checker_refusal(
        str(Path(model_file).resolve()), st.st_size, st.st_mtime_ns, library, test, categories
    )


@functools.lru_cache(maxsize=32)
def _checker_refusal(
    path: str, _size: int, _mtime: int, library: str, test: str, categories: tuple = ()
) -> str | None:
    try:
        named = {name: list(cats) for name, cats in categories}
        read_model(path, library, test=test, categories=named)
    except ModelError as e:
        return f"the checker does not read this model ({e})"
    except Exception as e:  # noqa: BLE001 - a library's reader raises anything
        return f"the checker cannot read this model ({type(e).__name__}: {str(e)[:200]})"
    return None


def certify(
    ens: Ensemble,
    q: Query,
    path: str | Path,
    model_file: str | Path | None,
    timeout: float,
    verify: bool = True,
    max_gap_upper: bool = False,
    memory_mb: float | None = None,
) -> Certified:
    """Run the box search on ``q`` with its proof recorded (one search per pair of
    classes the query allows) and write the certificate to ``path`` when it proves
    "insensitive" within ``timeout`` seconds (a probability model's gap: as a binary
    classifier, compiler/readings.py); then, with ``verify``, check the file with the
    independent checker (``treesens verify``'s, outside the ``timeout``).
    ``max_gap_upper``: the claim is a max gap's certified upper bound. The tables, the
    search's heap and its record fit the memory limit (``memory_mb``, else the query's
    option, else the default: questions/memory.py)."""
    ens = read_for(ens, q)
    why = model_refusal(ens, q, model_file)
    if why is not None:
        return refused(why)
    q = q.over_all_inputs()  # what a data-aware query's "insensitive" states
    whole = pair_encoding(ens, q)
    # a change through the exp link: one search whose boxes close by the ``link`` rule
    link = link_proof_encoding(whole) if ens.is_regressor and ens.link == EXP else None
    encs = [link] if link is not None else class_pair_encodings(whole, relations=True)
    if not encs and is_anchored(q) and anchor_ranks(whole) is None:
        return refused(ANCHORED_UNRANKED)
    if not encs:
        return refused(
            "the box search does not apply to this query (a regressor's change either way "
            "under a relation between the inputs, or through a nonlinear link)"
        )
    # category codes, NaN ranks and the zero band: the checker reads them for these
    if not checker_reads(ens, encs):
        return refused(
            "the checker reads categorical splits, features that may be missing and "
            "LightGBM's zero band of XGBoost JSON / UBJ, LightGBM and scikit-learn models "
            "(and pipelines' encoded columns) only"
        )
    t0 = time.time()
    limit_mb = memory_limit(memory_mb if memory_mb is not None else q.plan.options.memory_mb).mb
    parts, boxes, searched, rebuild = [], 0, 0, {}
    work = q.plan.work  # under a work budget: the search's boxes, the timeout a net
    for enc in encs:
        try:
            tables = pair_tables(enc, max_held=room_bytes(ens, limit_mb))
        except PairTablesTooLarge as e:
            return refused(str(e), searched, time.time() - t0)
        record: list = []
        if link is not None:
            out, why = link_search(enc, tables, float(q.delta), t0 + timeout, record), ""
        else:
            left = None if work is None else work - searched
            out, why, rebuilt = _search_past_near_misses(
                ens, q, enc, tables, (t0, t0 + timeout), record, limit_mb, left
            )
            note_rebuild(rebuild, rebuilt)
        searched += out.boxes
        boxes += proof_boxes(record)
        if out.status == PROVED and not record:
            why = why or "its proof could not be rebuilt from the compiled search's boxes"
            why = f"the box search proved it, but {why} (budget {timeout:.3g}s)"
            return replace(refused(why, searched, time.time() - t0), rebuild=rebuild)
        if out.status != PROVED:
            why = unproved_reason(out, why, work, searched, timeout)
            return refused(why, searched, time.time() - t0)
        parts.append(proof_part(ens, enc, tables, record))
    seconds = time.time() - t0
    unwritten = write_document(ens, q, encs[0], tables, parts, model_file, path, max_gap_upper)
    del parts, record  # the proof: not held while the checker reads the file
    if unwritten is not None:
        return refused(unwritten, boxes, seconds)
    shown = f"{boxes:,} box{'es' if boxes != 1 else ''}"
    written = f"certificate written to {path} ({shown}, {seconds:.1f}s)"
    if not verify:
        done = Certified(True, written, boxes, seconds, reason="not verified", path=str(path))
    else:
        done = written_and_verified(Path(path), written, boxes, seconds)
    return replace(done, rebuild={**rebuild, **done.rebuild})


def unproved_reason(
    out: BoxOutcome, stopped: str, work: int | None, searched: int, timeout: float
) -> str:
    """Why a certificate's box search that ended without a proof gives none: a pair it
    could not rule out, why it stopped short of its budget (``stopped``), or the budget
    it used up (the query's work budget of ``work`` boxes, else ``timeout`` seconds)."""
    if out.pair is not None:
        return "the box search found a pair it could not rule out"
    if stopped:
        return f"the box search stopped: {stopped}"
    if work is not None and searched >= work:
        return (
            f"the box search did not finish within the query's work budget of {work:,} "
            "boxes: give a larger one (--work N, work=N, work N in a .sens file)"
        )
    return f"the box search did not finish within its budget of {timeout:.3g}s"


def _search_past_near_misses(
    ens,
    q,
    enc,
    tables,
    budget: tuple[float, float],
    record: list,
    memory_mb: float | None = None,
    boxes: int | None = None,
):
    """The box search with its proof recorded, going on past a pair the library's replay
    calls a near miss: every tree's value is fixed on that box, so the library gives every
    pair in it the outputs it gives this one; the box is recorded as ``("replay", x1,
    x2)``, which the checker confirms with the library (docs/certificates.md). Ends as
    the search does at a proof or the deadline, or at a pair the replay does not reject
    as a near miss (FOUND), or at any near miss where the box does not fix each input's
    value in every tree (a regressor's change, CatBoost's MultiClass leaves:
    ``rows_of_each_input``), which neither the search nor the checker can rule out by
    one replay; a question no tree tells x1 from x2 in is one box, closed by ``ALIKE``
    (search/boxes.py ``reads_alike``). Past its first boxes the search goes on compiled
    (search/compiled_check.py), its proof rebuilt from the boxes it drops; ``record`` is
    left empty where that rebuild fails. ``budget``: when the certificate's budget began
    and its deadline; ``boxes``, under a work budget, the boxes it may visit (the deadline
    then a net, the compiled search taking over and its proof rebuilt whatever their
    times, so that whether it proves follows the model and the query). Returns the outcome, why a proof found was
    given up ("": it was not) and its rebuild (``compiled_check.note_rebuild``'s)."""
    # one box: x1 and x2 reach the same leaves in every tree (the alike step is stated of
    # one domain for both inputs: under a bound on one input, the search proves it)
    if not enc.query.bounds and reads_alike(enc, tables):
        record.append(ALIKE)
        return BoxOutcome(PROVED, 1), "", None
    since, deadline = budget
    search = check_search(enc, tables, memory_mb, proof=ProofTree(capped=False), since=since)
    if boxes is not None:
        search.box_limit = boxes
        if isinstance(search, HandedOver):
            search.compile_always = search.rebuild_by_work = True
    fixed: bool | None = None  # rows_of_each_input, worked out at the first near miss
    while True:
        out = search.run(deadline)
        ended = (out, getattr(search, "why_not", ""), getattr(search, "rebuilt", None))
        if out.status == PROVED:
            record.extend(search.proof.preorder() or ())
        if out.status != FOUND:
            return ended
        w = witness_from_pair(enc, *out.pair)
        if not isinstance(check_pair(ens, q, enc, w), NearMiss):
            return ended
        fixed = rows_of_each_input(enc) if fixed is None else fixed
        if not fixed:
            return ended
        search.proof.leaf(search.found, ("replay", out.pair[0], out.pair[1]))


def proof_boxes(steps) -> int:
    """The boxes a proof's steps close, its leaves (every step but a split): the count
    ``treesens verify`` gives ('18 boxes cover the pair space')."""
    return sum(1 for step in steps if step[0] != "split")


def written_and_verified(path: Path, written: str, boxes: int, seconds: float) -> Certified:
    """The certificate just written, checked by the independent checker as ``treesens
    verify`` checks it (the model from the path the certificate names)."""
    t0, compiled = time.time(), walk.compile_seconds()
    try:
        verdict = verify_file(path)
    except CertificateError as e:
        why = f"the checker could not check its certificate ({e})"
        return Certified(True, f"{written}; {why}", boxes, seconds, reason=why, path=str(path))
    compiled = walk.compile_seconds() - compiled  # its compiled steps' first build
    took = f"{time.time() - t0 - compiled:.1f}s"
    if compiled:
        took += f", after {compiled:.1f}s compiling its kernels, once per install"
    if not verdict.valid:  # unsound somewhere: the answer stands, unchecked, and says so
        why = f"the checker rejects its certificate ({verdict.message})"
        return Certified(True, f"{written}; {why}", boxes, seconds, reason=why, path=str(path))
    verified = f"{written}, verified by the independent checker ({took})"
    stats = {"verify_compile": compiled} if compiled else {}
    return Certified(True, verified, boxes, seconds, verified=True, path=str(path), rebuild=stats)


def forget_file(path: str | Path) -> None:
    """Remove the certificate an earlier run left at ``path``, where this one may write
    none: a file (or a link) that opens as a treesens certificate, never a folder of that
    name nor another file (a model named by a slip of --certificate stays)."""
    p = Path(path)
    if (p.is_file() or p.is_symlink()) and is_certificate(p):
        p.unlink(missing_ok=True)


def certify_answer(
    ens: Ensemble,
    q: Query,
    res: Result,
    path: str | Path,
    model_file: str | Path | None,
    budget: float,
    memory_mb: float | None = None,
    log: Callable[[str], None] | None = None,
) -> Certified:
    """Certify an answer asked for a certificate, and say so in its proof record
    (``res.proof``): certified and verified, or why not. An answer the box search proved
    with its proof recorded (``Result.box_proof``) is certified from that proof with no
    second search (certify_recorded.py; a proof left unbuilt by the query's time limit
    is rebuilt within ``budget`` seconds, ``log`` saying so); one another solver proved,
    or whose proof is not rebuilt in time, gets the box search after the fact, within
    ``budget`` seconds (what is left of it); one that is not
    insensitive gets nothing. A max gap's answer gets a certificate of its upper bound U:
    that no pair reaches the gap U' (``certified_bound``), from the boxes its own search
    recorded, within a share of ``budget``, else by the box search at U' in what their
    rebuild left of it, at least the rest (certify_tiling.py; its proof record: ``bound``). A search's memory: ``memory_mb`` (certify).
    A search of its own that the compiled search finished, or the answer's proof rebuilt
    here, says in ``stats["certificate"]`` how many boxes it recorded and how long its
    proof's rebuild took."""
    forget_file(path)  # an earlier answer's file is no claim of this one
    if res.max_gap is not None:
        done = _certify_max_gap(ens, q, res, path, model_file, budget, memory_mb, log)
    else:
        refusal = answer_refusal(res)
        if refusal is not None:
            done = refused(refusal)
        else:  # the answer's own recorded proof, else the box search after it
            done = _certify_insensitive(ens, q, res, path, model_file, budget, memory_mb, log)
        if res.proof is not None:
            res.proof = proof_after(res.proof, done)
    if done.rebuild:
        res.stats["certificate"] = done.rebuild
    return done


def _certify_insensitive(
    ens, q, res: Result, path, model_file, budget: float, memory_mb, log
) -> Certified:
    """An insensitive answer's certificate: from its own recorded proof, else by a search
    in what its rebuild left of ``budget``. Where the answer's proof was not rebuilt in time and
    the search writes no certificate either, the rebuild's reason stands (it says what
    time the proof needs), the search's after it."""
    from .certify_recorded import certify_recorded  # it imports this module

    done, given_up, stats = certify_recorded(
        ens, q, res, path, model_file, time.time() + budget, log, memory_mb
    )
    if done is not None:
        return done
    left = max(budget - stats.get("rebuild_time", 0.0), 0.0)  # the rebuild's time spent
    if given_up and log is not None:  # why, with the budget to ask for, before the search
        log(f"certificate: {given_up}; searching for its proof (at most {left:.3g}s)...")
    done = certify(ens, q, path, model_file, left, memory_mb=memory_mb)
    rebuild = dict(done.rebuild)  # the search's, and the answer's proof's rebuild here
    note_rebuild(rebuild, (stats["recorded"], stats["rebuild_time"]) if stats else None)
    if given_up and not done.written:
        search = f"the search after it: {brief(done.reason)}"
        why = f"the box search proved it, but {given_up} (budget {budget:.3g}s; {search})"
        done = refused(why, done.boxes, done.seconds)
    return replace(done, rebuild=rebuild)


def _certify_max_gap(
    ens, q, res: Result, path, model_file, budget: float, memory_mb=None, log=None
) -> Certified:
    refusal = max_gap_refusal(res)
    upper = res.max_gap.get("upper")
    kind = res.max_gap.get("kind", "prob")
    bound = None if upper is None else certified_bound(float(upper), kind)
    if refusal is not None:
        done = refused(refusal)
    else:  # the pair (change) question the max gap's steps ask, at U'
        at = q.with_(kind="", params=())
        if kind == "change":  # x1 the higher prediction, as the search asks
            at = at.with_(delta=bound, direction=DOWN)
        else:  # a probability gap, or a multiclass ratio
            at = at.with_(gap=Gap(bound, GapKind.PROB))
        from .certify_tiling import rebuild_share, search_after_rebuild  # it imports this

        # an unsplit max gap's one box is bounded by the float allowance, above U': the
        # search at U' closes it by the alike step instead
        own = isinstance(res.box_proof, RecordedTiling) and not res.max_gap.get("unsplit")
        tiled, done, t0 = own, None, time.time()
        if tiled:  # within its share of the budget, the rest kept for the search at U'
            share = rebuild_share(budget)
            done = _from_own_search(ens, at, res, path, model_file, share, log, memory_mb)
        if not isinstance(done, Certified):
            given_up = done if tiled else None  # why its own boxes gave none
            left = search_after_rebuild(budget, time.time() - t0)
            done = _search_at(ens, at, bound, path, model_file, left, memory_mb, log, given_up)
    res.box_proof = None
    if res.status != ERROR:
        proof = replace(res.proof or Proof(BOX_SEARCH), bound=bound)
        res.proof = proof_after(proof, done)
    if done.written:
        claim = bound_claim(bound, kind)
        done = replace(done, message=done.message.replace(" (", f": {claim} (", 1))
    return done


def _from_own_search(
    ens, at: Query, res: Result, path, model_file, budget: float, log, memory_mb
) -> Certified | str:
    """A max gap's certificate from the boxes its own search recorded
    (certify_tiling.py, ``res.box_proof``), or why they give no proof (a line; "" where
    the search at U' says why); refused where its rebuild would pass the memory limit
    (``memory_mb``)."""
    from .certify_tiling import certify_tiling  # it imports this module

    deadline = time.time() + budget
    rec, res.box_proof = res.box_proof, None  # held by certify_tiling alone, which drops it
    return certify_tiling(ens, at, [rec], path, model_file, deadline, memory_mb, log)


def _search_at(
    ens, at: Query, bound: float, path, model_file, budget: float, memory_mb, log, given_up
) -> Certified:
    """A max gap's certificate by the box search at U' (``at``, the gap ``bound``);
    ``given_up``: why the boxes of its own search gave none (None: it kept none), said
    on the progress line, and in the certificate's reason where the search writes none
    either ("": the search says why)."""
    if given_up is not None and log is not None:  # the CLI announced no search
        why = f"{given_up}; searching again at U' = {bound:g}" if given_up else "searching"
        log(f"certificate: {why} for its proof (at most {budget:.3g}s)...")
    done = certify(ens, at, path, model_file, budget, max_gap_upper=True, memory_mb=memory_mb)
    if given_up and not done.written:
        why = f"{given_up} (the search at U' after it: {brief(done.reason)})"
        done = replace(refused(why, done.boxes, done.seconds), rebuild=done.rebuild)
    return done


def proof_after(proof: Proof, done: Certified) -> Proof:
    """A proof record once its certificate was asked for: checked, with the file, when
    the checker accepted it; else unchecked, with the reason's short form."""
    if done.verified:
        return replace(proof, checked=True, certificate=done.path, why_not="")
    return replace(proof, checked=False, certificate=None, why_not=brief(done.reason))
