"""Re-check a certificate of "insensitive" against the model, from the trees up.

The proof is a binary tree of splits over the pair space (one column per feature
outside the varied set, two per varied feature: one per input), so its leaves cover the
whole space by construction; the checker walks it and, at every leaf (a pruned box),
recomputes the bound of the named gap row from the model's trees and requires it below
the row's threshold:

* ``x1``: the largest score x1 can reach in the box is below the gap's margin;
* ``x2``: the smallest score x2 can reach is above minus the margin;
* ``sum``: the largest m(x1) - m(x2) over pairs in the box is below twice the margin
  (a tree that reads no varied feature adds the same leaf to both inputs).

Scores are relaxed by a bound on float32 accumulation, as any sound proof must be.

A box holds, per column, an interval of the library's values (or, for a feature whose
domain lists its category codes, a run of those codes in the listed order) and whether
NaN is in it (a feature that may be missing). The checker routes such a box through each
node as the library routes each value: a numeric test, NaN to its side, LightGBM's zero
band read as 0.0, a categorical node's codes one by one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .alike import alike_refusal
from .certificate_text import Steps, read_certificate
from .claims import (
    Claim,
    Row,
    claim_of,
    library_misses,
    part_key,
    part_rows,
    probability_claim,
    required_parts,
)
from .flip import flip_refusal
from .held import HELD, ModelChanged, file_hash, key_of
from .link import LinkRule, link_prune, link_rule
from .models import Model, ModelError, Tree, read_model
from .models_groups import folded, read_groups
from .relations import claimed_relations, relation_refusal, relations_text
from .replay import RawScores, library_proba, library_raw
from .walk import Walker, misshapen_step, split_column

FORMAT = "treesens-certificate"
# 1: binary probability gaps only (a ``proof``); 2: every claim (``parts``); 3: domains
# with category codes and NaN (``codes``, ``missing``), and their splits; 4: a varied
# feature's domain per input (``{"x1": ..., "x2": ...}``)
VERSIONS = (1, 2, 3, 4)
INF = math.inf
# steps that close a box without a bound: a replay, ``alike``, ``relation``
SETTLED = ("replay", "alike", "relation")


@dataclass(frozen=True)
class Verdict:
    valid: bool
    message: str
    boxes: int = 0
    model: str = ""  # the model file the proof was checked against (its path and hash)
    # a valid proof's domain, per feature in model order: ``feature``, ``varied``, ``lb``,
    # ``ub`` (numbers, "-inf" / "inf"), ``integer``, ``missing``, ``codes`` where coded
    # (the verdict names at most SHOWN_BOUNDS other features' bounds; ``verify --json``
    # lists them all)
    domain: tuple = ()


def prune_refusal(
    where: tuple[int, int], name: str, bound: float, stated: float, tol: float, below: float
) -> Verdict | None:
    """Why a ``prune`` step of box ``where[0]`` (step ``where[1]``) does not close its
    box (None: it does): its row's recomputed ``bound`` is not the ``stated`` one (within
    ``tol``: the offset may be read with a float32 rounding's difference, within the
    relaxation), or does not reach ``below`` the row's threshold."""
    pruned, i = where
    if not math.isclose(bound, stated, rel_tol=1e-6, abs_tol=tol):
        return Verdict(
            False,
            f"box {pruned} (step {i}): its {name} bound is {bound:.9g}, not the "
            f"{stated:.9g} the certificate states",
            pruned,
        )
    if not bound < below:
        return Verdict(
            False,
            f"box {pruned} (step {i}): its {name} bound {bound:.9g} does not "
            f"reach below {below:.9g}",
            pruned,
        )
    return None


def covering(stack: list, pruned: int) -> Verdict:
    """The verdict of a walk that closed ``pruned`` boxes and left ``stack`` open."""
    if stack:
        return Verdict(False, f"the proof leaves {len(stack)} boxes of the pair space open")
    covers = "box covers" if pruned == 1 else "boxes cover"
    return Verdict(True, f"{pruned:,} {covers} the pair space, none meets the gap", pruned)


class CertificateError(Exception):
    """The file is not a certificate that can be checked (bad input, exit code 2)."""


class ModelUnreadable(CertificateError):
    """The model file the certificate names (or the one given) cannot be read."""


@dataclass(frozen=True)
class Domain:
    lb: float
    ub: float
    integer: bool
    codes: tuple[int, ...] | None = None  # the category codes, in the order splits cut
    missing: bool = False  # NaN is a value of the feature
    # the code that stands for every whole number in [max(lb, 0), ub] no split lists
    # (``Checker._unlisted_refusal`` says where it may), or None: the codes alone
    unlisted: int | None = None


EMPTY = (INF, -INF)  # an interval holding no value (a box part that is NaN alone)


# the names libraries give the features of a model file that names none (XGBoost's and
# ONNX's f0, LightGBM's Column_0, scikit-learn's x0, CatBoost's 0): a details file or the
# data names them, and the certificate states those names, column by column
PLACEHOLDERS = ("f{}", "Column_{}", "x{}", "{}")


def placeholders(names: list[str]) -> bool:
    """Are these a library's placeholder names, the model's features named by none?"""
    return any(list(names) == [p.format(i) for i in range(len(names))] for p in PLACEHOLDERS)


def verify_file(path: str | Path, model_path: str | None = None) -> Verdict:
    if Path(path).is_dir():
        raise CertificateError(f"{path}: is a directory, not a certificate")
    if not Path(path).exists():  # as every treesens command says a file is missing
        raise CertificateError(f"{path}: certificate file not found")
    try:
        text = Path(path).read_text(encoding="utf-8")
        if not text.strip():
            raise CertificateError(f"{path}: the file is empty, not a certificate")
        doc = read_certificate(text)
    except (OSError, ValueError, RecursionError) as e:  # ValueError: JSON's own errors,
        # and an integer too long for int() (UnicodeDecodeError is one too)
        raise CertificateError(f"{path}: not a readable certificate ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else None
        has = "no 'format'" if found is None else f"format {found!r}"
        raise CertificateError(
            f"{path}: not a treesens certificate ({has}, where a certificate's is {FORMAT!r}: "
            "treesens check ... --certificate FILE writes one)"
        )
    version = doc.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version not in VERSIONS:
        raise CertificateError(
            f"{path}: certificate version {version!r}: this checker reads "
            f"{', '.join(map(str, VERSIONS))}"
        )
    try:
        return _verify(doc, model_path, Path(path).parent)
    except ModelError as e:
        return Verdict(False, f"cannot check this model: {e}")
    except KeyError as e:
        return Verdict(False, f"malformed certificate: it has no field {e.args[0]!r}")
    except (TypeError, ValueError, IndexError, ArithmeticError) as e:
        return Verdict(False, f"malformed certificate: {type(e).__name__}: {e}")


def named_model(stated: str, folder: Path) -> Path:
    """The model a certificate names: a relative path is read from the certificate's
    folder (where treesens writes it from), else, for a certificate written by an
    earlier treesens, from the working directory."""
    p = Path(stated)
    if p.is_absolute():
        return p
    beside = folder / p
    return beside if beside.exists() or not p.exists() else p


def misshapen(doc: dict) -> str | None:
    """Why the certificate's top-level fields do not have a certificate's shape (None:
    they do): a malformed file is one line naming its field, not a Python error."""
    wanted = {"model": dict, "question": dict, "columns": list}
    if int(doc.get("version", 1)) >= 2:
        wanted["parts"] = list
    for field, kind in wanted.items():
        if field in doc and not isinstance(doc[field], kind):
            return f"its field {field!r} is not {'an object' if kind is dict else 'a list'}"
    q = doc.get("question", {})
    inner = {"domain": list, "features": list, "vary": list}
    if int(doc.get("version", 1)) >= 2:
        inner["claim"] = dict
    for field, kind in inner.items():
        if field in q and not isinstance(q[field], kind):
            return f"question.{field} is not {'an object' if kind is dict else 'a list'}"
    for k, part in enumerate(doc.get("parts") or ()):
        if not isinstance(part, dict):
            return f"its field 'parts' holds {part!r:.60} (part {k}), not an object"
        if "proof" in part and not isinstance(part["proof"], (list, Steps)):
            return f"part {k}: its field 'proof' is not a list"
    if int(doc.get("version", 1)) == 1 and not isinstance(doc.get("proof", []), (list, Steps)):
        return "its field 'proof' is not a list"
    return None


def _verify(doc: dict, model_path: str | None, folder: Path) -> Verdict:
    shape = misshapen(doc)
    if shape is not None:
        return Verdict(False, f"malformed certificate: {shape}")
    m = doc["model"]
    path = Path(model_path) if model_path else named_model(m["file"], folder)
    try:
        digest = file_hash(path)  # of these bytes: a reading held under it is of them
    except OSError as e:
        given = "" if model_path else " (the path the certificate names, from its folder)"
        raise ModelUnreadable(f"{path}{given}: cannot read the model ({e.strerror})") from None
    if digest != m["sha256"]:
        return Verdict(False, f"{path} is not the model the certificate was written for")
    fields = (
        m["library"],
        float(m.get("base_score", 0.5)),
        m.get("test", "<="),
        doc.get("maps"),
        int(m.get("num_class", 1)),
        named_categories(doc["question"]),
    )
    try:  # read once for every certificate of these bytes that states the same (held.py)
        model = HELD.get(
            digest, path, key_of("model", *fields), lambda: read_model(str(path), *fields)
        )
    except ModelError as e:
        return Verdict(False, f"cannot check this model: {e}")
    stated = _stated_otherwise(m, model) if int(doc.get("version", 1)) >= 2 else None
    if stated is not None:
        return Verdict(False, f"the certificate states {stated}")
    q = doc["question"]
    if doc.get("groups") is not None:  # one-hot groups folded into one feature each
        model = folded(model, read_groups(doc["groups"]))
    if m["library"] == "xgboost-dump":  # a dump names no features: the certificate's
        if len(q["features"]) < len(model.features):
            return Verdict(False, "the model reads more features than the certificate names")
        model = replace(model, features=list(q["features"]))
    elif placeholders(model.features) and len(q["features"]) == len(model.features):
        model = replace(model, features=list(q["features"]))  # named by details or data
    if list(q["features"]) != model.features:
        return Verdict(False, "the certificate's features are not the model's")
    replay, refusal = None, ""
    if any(has_step(part["proof"], "replay") for part in _parts(doc)):
        # judged on the library's P, or its raw scores
        kind = "proba" if probability_claim(model, claim_of(doc)) else "raw"
        replay, refusal = _library_scores(kind, (digest, path), doc, model)
    row_scores, row_refusal = None, ""
    if claim_of(doc).kind == "flip":  # its row's decision, by the library's predict
        row_scores, row_refusal = _library_scores("raw", (digest, path), doc, model)
    verdict = _check_claim(doc, model, replay, refusal, (row_scores, row_refusal))
    if verdict.valid and m["library"] == "xgboost-dump":  # the file does not hold them:
        # the claim is of the model with the base score the certificate states
        classes = int(m.get("num_class", 1))
        said = f"; the dump's base score taken as {float(m.get('base_score', 0.5)):g}"
        said += f", its classes as {classes}" if classes > 2 else ""
        verdict = replace(verdict, message=verdict.message + said)
    return replace(verdict, model=f"{shown_path(path)} (sha256 {m['sha256'][:16]}...)")


def _library_scores(kind: str, file: tuple[str, Path], doc: dict, model: Model):
    """The library's own scores of the model file (``file``: its hash and path), "raw"
    or "proba" (its probabilities), as pairs of the model's inputs, and "" (else None
    and the library's refusal); read once for the certificates of these bytes (held.py).
    A file that changed while it was read fails the certificate (ModelChanged)."""
    digest, path = file
    library, maps, named = (
        doc["model"]["library"],
        doc.get("maps"),
        named_categories(doc["question"]),
    )

    def read() -> RawScores:
        if kind == "proba":
            return library_proba(str(path), library, model)
        return library_raw(str(path), library, model, maps, named)

    try:
        scores = HELD.get(digest, path, key_of(kind, library, maps, named), read, model)
    except ModelChanged:
        raise
    except ModelError as e:
        return None, str(e)
    if model.to_model is not None:  # the pair's rows as the model file's columns
        scores = _through(model.to_model, scores)
    return scores, ""


def shown_path(path: Path) -> str:
    """The model's path as a message shows it: without the ``..`` a relative path from
    the certificate's folder leaves (``/tmp/c/../../work/m.json``), when that names the
    same file."""
    short = Path(os.path.normpath(path))
    try:
        return str(short) if short.samefile(path) else str(path)
    except OSError:
        return str(path)


def _stated_otherwise(m: dict, model: Model) -> str | None:
    """What the certificate's ``model`` section states that the model file does not hold
    (None: nothing). A dump's base score and classes are the certificate's to state (the
    file holds neither); of another model the checker reads them from the file, so a
    section stating others describes another model than the one checked: the number of
    classes (1 for a binary model or a regressor) and a classifier's base score (a
    binary model's as the probability its starting margin gives, a multiclass one's as
    class 0's starting margin; a regressor's is not stated). The comparison (``test``)
    is the library's, read from the file (ONNX: the certificate's choice), and one
    stated must be it (the thresholds of the proof's splits are read under it)."""
    if "test" in m and m["library"] != "onnx" and m["test"] != model.test:
        return f"test {m['test']!r}, and {m['library']} compares {model.test!r}"
    if m["library"] == "xgboost-dump":
        return None
    classes = model.n_outputs if model.task == "classifier" else 1
    if "num_class" in m and int(m["num_class"]) != classes:
        return f"num_class {m['num_class']}, and the model has {classes}"
    if "base_score" in m and model.task == "classifier":
        if model.n_outputs > 1:
            base = model.offsets[0]
        else:
            base = 1.0 / (1.0 + math.exp(-model.offset * model.margin_per_logit))
        if not math.isclose(float(m["base_score"]), base, rel_tol=1e-6, abs_tol=1e-9):
            return f"base_score {m['base_score']!r}, and the model's is {base:.9g}"
    return None


def _kind(step) -> str | None:
    """A proof step's kind, or None for what is no step (the walk then names it)."""
    return step[0] if isinstance(step, list) and step else None


def has_step(proof, kind: str) -> bool:
    """Whether some step of ``proof`` (``Steps``, or a list) is of ``kind``."""
    if isinstance(proof, Steps):
        return kind in proof.kinds_present()
    return any(_kind(step) == kind for step in proof)


def _through(to_model, replay: RawScores) -> RawScores:
    return lambda X: replay(to_model(X))


def named_categories(question: dict) -> dict[str, list[str]]:
    """Per feature whose domain names its codes' categories (a CatBoost one-hot feature:
    ``categories``, code k's is the k-th), those names."""
    out = {}
    for name, d in zip(question["features"], question["domain"], strict=True):
        d = d.get("x1", d) if isinstance(d, dict) else d  # stated per input: x1's names them
        if "categories" in d:
            out[str(name)] = [str(c) for c in d["categories"]]
    return out


def _parts(doc: dict) -> list:
    return doc["parts"] if int(doc.get("version", 1)) >= 2 else [{"proof": doc["proof"]}]


def _check_claim(
    doc: dict, model: Model, replay: RawScores | None = None, refusal: str = "", row=(None, "")
) -> Verdict:
    """Walk every part of the proof the claim needs, with the rows the checker derives
    from the claim (verify/claims.py); a flip claim's row (x1) decided by the library's
    scores ``row`` (its scores, or None and why not: verify/flip.py)."""
    version = int(doc.get("version", 1))
    if version not in VERSIONS:
        raise CertificateError(f"certificate version {version}: this checker reads 1 to 4")
    claim = claim_of(doc)
    parts = doc["parts"] if version >= 2 else [{"proof": doc["proof"]}]
    # a varied feature's domain per input, or a relation between the inputs: the claim's
    # pairs are no longer their swaps
    one_way = bool(doc["question"].get("relations")) or any(
        isinstance(d, dict) and "x1" in d for d in doc["question"]["domain"]
    )
    need = required_parts(model, claim, one_way)
    keys = [part_key(model, claim, part, one_way) for part in parts]
    if sorted(keys) != sorted(need) or len(set(keys)) != len(keys):
        shown = ", ".join(_key_text(k) for k in need)
        return Verdict(False, f"the proof's parts are not the ones the claim needs ({shown})")
    checker = Checker(model, doc["question"], doc["columns"], version, replay, refusal)
    checker.claim = claim
    decided = ""
    if claim.kind == "flip":
        why, decided = flip_refusal(checker, claim, *row)
        if why:
            return Verdict(False, why)
    unread = [
        f
        for f in range(len(checker.domain))
        if any(checker.dom(f, k).missing for k in (0, 1)) and not model.reads_nan_of(f)
    ]
    if unread:
        return Verdict(
            False,
            "the checker does not read this model's missing values "
            f"(feature {model.features[unread[0]]!r})",
        )
    boxes = 0
    walker = Walker(checker)  # Checker.run's walk, each box's leaves carried from its parent
    for part, key in zip(parts, keys, strict=True):
        rows, link = part_rows(model, claim, part), link_rule(model, claim, part)
        checker.misses = None  # a replayed pair: its raw scores miss some row
        if probability_claim(model, claim):  # its probabilities, as the library's
            checker.misses = lambda proba, key=key: library_misses(claim, key, proba)
        if link is None and not has_step(part["proof"], "link"):
            verdict = walker.run(part["proof"], rows)
        else:  # the exp link's steps: the reference walk reads them (verify/link.py)
            verdict = checker.run(part["proof"], rows, link)
        if not verdict.valid:
            where = f"{'' if len(key) == 1 else 'classes '}{_key_text(key)}: " if key else ""
            return replace(verdict, message=where + verdict.message)
        boxes += verdict.boxes
    meets = "none meets the change" if claim.kind == "change" else "none meets the gap"
    if len(parts) > 1:
        message = (
            f"{len(parts)} proofs, one per class pair, of {boxes:,} boxes in all: each "
            f"covers the pair space, {meets}"
        )
    else:
        covers = "box covers" if boxes == 1 else "boxes cover"
        message = f"{boxes:,} {covers} the pair space, {meets}"
    message += "; " + _scope_text(model, checker)
    if claim.max_gap_upper:
        message += f"; a max gap's upper bound: {claim.describe(one_way)}"
    else:  # version 1's too: the verdict says which gap it proves
        message += f"; {claim.describe(one_way)}"
    message += relations_text(checker.relations, model.features)
    message += f"; {decided}" if decided else ""
    named = named_categories(doc["question"])
    domain = _domain_record(model, checker)
    return Verdict(True, message + _domain_text(model, checker, named), boxes, domain=domain)


def _domain_record(model: Model, checker: Checker) -> tuple[dict, ...]:
    """Per feature, the domain the proof covers (``Verdict.domain``)."""

    def number(v: float) -> float | str:
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")

    def fields(d: Domain) -> dict:
        rec = {"lb": number(d.lb), "ub": number(d.ub), "integer": d.integer}
        rec["missing"] = d.missing
        if d.codes is not None:
            rec["codes"] = list(d.codes)
        if d.unlisted is not None:
            rec["unlisted"] = d.unlisted
        return rec

    out = []
    for f, d in enumerate(checker.domain):
        rec = {"feature": model.features[f], "varied": f in checker.varied}
        if f in checker.inputs:  # stated per input (version 4)
            rec |= {"x1": fields(checker.dom(f, 0)), "x2": fields(checker.dom(f, 1))}
        else:
            rec |= fields(d)
        out.append(rec)
    return tuple(out)


# the verdict lists the other features' bounds when at most this many have any (or are
# integer); more are counted, and ``verify --json`` lists them
SHOWN_BOUNDS = 3


def _scope_text(model: Model, checker: Checker) -> str:
    """Which features the claim varies, and over what: a proof speaks of the pairs
    within the domain the certificate states (a narrower one proves less), so the verdict
    names the varied features' bounds and every other feature's that has any (or is
    integer), grouped by bounds, each number as it is (a bound rounded for show could
    name values the proof does not cover); more than SHOWN_BOUNDS such features are
    counted instead."""
    varied = []
    for f in sorted(checker.varied):
        d = checker.domain[f]
        bounds = "" if d.codes is not None else f" in {_interval(d)}"
        if f in checker.inputs and d.codes is None:  # x1's and x2's (version 4)
            one, two = (_interval(checker.dom(f, k)) for k in (0, 1))
            bounds = f" (x1 in {one}, x2 in {two})"
        varied.append(f"{model.features[f]}{bounds}" + (" (integers)" if d.integer else ""))
    groups: dict[str, list[str]] = {}
    for f, d in enumerate(checker.domain):
        if f in checker.varied or d.codes is not None:
            continue  # a coded feature's codes: ``_domain_text``
        if d.lb > -INF or d.ub < INF or d.integer:
            shown = _interval(d) + (" (integers)" if d.integer else "")
            groups.setdefault(shown, []).append(model.features[f])
    said = "varying " + ", ".join(varied)
    bounded = sum(map(len, groups.values()))
    rest = bounded + len(checker.varied) < len(checker.domain)
    if bounded > SHOWN_BOUNDS:  # counted: the line stays short (Verdict.domain has each)
        others = f"{bounded} other features" if rest else f"the other {bounded} features"
        within = (
            "at the row's values" if checker.claim.kind == "flip" else "within their stated bounds"
        )
        said += f"; {others} {within} (listed by verify --json)"
    elif groups:
        listed = "; ".join(f"{', '.join(names)} in {shown}" for shown, names in groups.items())
        said += f"; the others bounded as the certificate states: {listed}"
    if groups and rest:
        said += "; the rest unbounded"
    return said


def _interval(d: Domain) -> str:
    if d.missing and d.codes is None and not d.lb <= d.ub:  # no number: NaN alone
        return "{NaN}"
    return f"[{_number(d.lb)}, {_number(d.ub)}]"


def _number(v: float) -> str:
    """A bound as short as it reads back exactly (``%g`` when that is exact)."""
    short = f"{v:g}"
    return short if float(short) == v else repr(v)


def _domain_text(model: Model, checker: Checker, named: dict[str, list[str]]) -> str:
    """What a version-3 domain adds to the claim: each coded feature's codes (and the
    categories they name, where the domain names them: the claim is over those), and the
    features that may be missing (the claim covers NaN there); of a domain stated per
    input, each input's."""
    said = []
    for f, name, d in _each_input(model, checker):
        if d.codes is not None:
            codes = tuple(c for c in d.codes if c != d.unlisted)
            listed = ", ".join(str(c) for c in codes)
            if codes == tuple(range(len(codes))) and len(codes) > 3:
                listed = f"0 to {len(codes) - 1}"
            meaning, cats = model.meaning.get(f), named.get(model.features[f])
            if meaning is None and cats is not None:
                meaning = ", ".join(cats[c] if 0 <= c < len(cats) else "?" for c in d.codes)
            if d.unlisted is not None:  # every whole number no split lists, routed as r
                whole = f"every other whole number in {_interval(_codes_from_0(d))}"
                listed = (f"{listed}, and " if codes else "") + f"as {d.unlisted} {whole}"
            said.append(f"{name} takes the codes {listed}" + (f" ({meaning})" if meaning else ""))
        if d.missing:
            said.append(f"{name} may be missing")
    return "; " + "; ".join(said) if said else ""


def _each_input(model: Model, checker: Checker):
    """(feature, its name as the verdict says it, its domain): once per feature, and a
    domain stated per input once per input (``x1.name``)."""
    for f, name in enumerate(model.features):
        if f in checker.inputs:
            yield from ((f, f"x{k + 1}.{name}", checker.dom(f, k)) for k in (0, 1))
        else:
            yield f, name, checker.domain[f]


def _key_text(key: tuple) -> str:
    if len(key) == 1:  # a change's direction (domains per input)
        return f"direction {key[0]}"
    return f"{key[0]} -> {key[1]}" if key else "the one part"


def _bound(v) -> float:
    return float(v) if not isinstance(v, str) else float(v.replace("inf", "Infinity"))


class Checker:
    def __init__(
        self,
        model: Model,
        question: dict,
        columns: list,
        version: int = 2,
        replay: RawScores | None = None,
        replay_refusal: str = "",
    ):
        self.m = model
        self.replay, self.replay_refusal = replay, replay_refusal
        # the part's judge of a replayed pair on the library's probabilities, which
        # ``replay`` then gives (claims.library_misses); None: on its raw scores
        self.misses: Callable[[np.ndarray], bool] | None = None
        # the claim an ``alike`` step rules out (set by _check_claim), and that step's
        # walk of every tree, once: [why it fails, or None] (verify/alike.py)
        self.claim: Claim | None = None
        self.alike_walk: list = []
        names = model.features
        self.varied = {names.index(v) for v in question["vary"]}
        # the claim's relations between x1 and x2 (verify/relations.py)
        self.relations = claimed_relations(question, names, self.varied)
        # per feature its domain; a varied feature's stated per input (version 4) is in
        # ``inputs`` as (x1's, x2's), and ``domain`` holds x1's for the verdict's order
        self.inputs: dict[int, tuple[Domain, Domain]] = {}
        self.domain = []
        for f, d in enumerate(question["domain"]):
            if isinstance(d, dict) and "x1" in d:
                self.inputs[f] = per_input_domain(d, version, names[f] if f < len(names) else f)
                if f not in self.varied:
                    raise ValueError(
                        f"feature {names[f]!r}: a domain per input of a shared feature"
                    )
            self.domain.append(self.inputs[f][0] if f in self.inputs else _domain(d, version))
        if len(self.domain) != len(names):
            raise ValueError("one domain entry per feature expected")
        self.columns = [(int(f), c) for f, c in columns]
        # per column, the input its values are (0: x1, and a shared column's) and its domain
        self.col_input = [0 if c in (None, 1) else 1 for _, c in self.columns]
        self.col_of = [{}, {}]  # per input: feature -> column
        for i, (f, c) in enumerate(self.columns):
            for k in (0, 1):
                if c is None or c == k + 1:
                    self.col_of[k][f] = i
        for k in (0, 1):
            if sorted(self.col_of[k]) != list(range(len(names))):
                raise ValueError("the columns do not cover every feature of both inputs")
            if any(
                (self.columns[self.col_of[k][f]][1] is None) == (f in self.varied)
                for f in range(len(names))
            ):
                raise ValueError("a varied feature must have a column per input")
        for t in model.trees:
            for n, codes in enumerate(t.cats or ()):
                if codes is not None and self._either(t.feature[n], lambda d: d.codes is None):
                    raise ValueError(
                        f"feature {names[t.feature[n]]!r} has categorical splits: its "
                        "domain must list its codes"
                    )
        for f in model.meaning:  # a group's feature: its values are codes, never NaN
            if self._either(f, lambda d: d.codes is None or d.missing):
                raise ValueError(f"feature {names[f]!r}: a group's domain lists its codes alone")
        for f, n_codes in model.known_codes.items():
            if self._either(f, lambda d, n=n_codes: not all(0 <= c < n for c in d.codes or ())):
                raise ValueError(
                    f"feature {names[f]!r}: the model knows the codes 0..{n_codes - 1}"
                )
        for f in range(len(names)):
            why = next(filter(None, (self._unlisted_refusal(f, k) for k in (0, 1))), None)
            if why is not None:
                raise ValueError(f"feature {names[f]!r}: {why}")
        self.col_dom = [self.dom(f, k) for (f, _), k in zip(self.columns, self.col_input)]
        self.col_missing = np.array([d.missing for d in self.col_dom])
        self._require_values()
        self.eps = self._relaxation()
        self.reads_varied = [_reads(t, self.varied) for t in model.trees]
        self._tables: dict[tuple, _Table] = {}
        self._leaves: dict[tuple[int, int], LeafBoxes] = {}
        self._cuts: dict[tuple[float, float], float] = {}
        self._whole: tuple | None = None  # _full_box's

    def dom(self, f: int, k: int = 0) -> Domain:
        """Feature f's domain for input k (0: x1, 1: x2): the feature's, or the one
        stated for that input (version 4)."""
        pair = self.inputs.get(f)
        return self.domain[f] if pair is None else pair[k]

    def _either(self, f: int, test: Callable[[Domain], bool]) -> bool:
        """Whether ``test`` holds of feature f's domain for some input."""
        return any(test(self.dom(f, k)) for k in (0, 1))

    def _unlisted_refusal(self, f: int, k: int) -> str | None:
        """Why input k's domain of feature f may not state an unlisted code r (None: it
        may, or states none): r stands for every whole number c >= 0 in its bounds no
        split lists only where the library routes each such c as r (``open_codes``: of
        any code beyond its bitsets, negative or past 2^31, as predict shows), every split
        on f is categorical (a threshold would tell codes apart) listing neither r nor c,
        and r and 0 (where it is such a c) go right (LightGBM's zero band would send 0 to
        a split's default side)."""
        d = self.dom(f, k)
        if d.unlisted is None:
            return None
        if not self.m.open_codes or f in self.m.meaning or f in self.m.known_codes:
            return "this model's codes are its own: a domain's unlisted code stands for none"
        if self.m.zero_band >= 1.0:
            return "its zero band holds codes: a domain's unlisted code stands for none"
        lo, hi = _codes_from_0(d).lb, d.ub
        tried = [float(d.unlisted)] + ([0.0] if lo <= 0 <= hi and 0 not in d.codes else [])
        for t in self.m.trees:
            for n in np.flatnonzero(np.asarray(t.feature) == f).tolist():
                if t.cats is None or t.cats[n] is None:
                    return "a split on it is numeric: a domain's unlisted code stands for none"
                if d.unlisted in t.cats[n] or any(goes_left(self.m, t, n, v) for v in tried):
                    return f"a split lists its unlisted code {d.unlisted} or sends it left"
        return None

    def _require_values(self) -> None:
        """Every feature's domain (per input, where stated so) must hold some value the
        library reads: an empty one leaves every box of the pair space empty, each bound
        minus infinity, so a proof of any claim at all would pass."""
        for f in range(len(self.domain)):
            for k in (0, 1) if f in self.inputs else (0,):
                d = self.dom(f, k)
                if d.codes is not None or d.missing:
                    continue  # codes are never empty (``_domain``); NaN is a value
                lo, hi = self._domain_interval(f, k)
                if not lo < hi:
                    said = f"x{k + 1}'s domain" if f in self.inputs else "its domain"
                    raise ValueError(
                        f"feature {self.m.features[f]!r}: {said} [{d.lb:g}, {d.ub:g}]"
                        + (" of integers" if d.integer else "")
                        + " holds no value"
                    )

    def _relaxation(self) -> float:
        """How far the library's accumulation may move one raw score (in raw units):
        2^-20 of its largest sum, or for a float32 sum taken tree by tree (XGBoost),
        2^-24 of every partial sum's bound and of the result's, when that is larger; the
        largest over the outputs."""
        s = self.m.margin_per_logit
        worst = 0.0
        for k in range(self.m.n_outputs):
            tops = [_top(t, k) * s for t in self.m.trees]
            offset = abs(self.m.offset_of(k)) * s
            relax = 2.0**-20 * (sum(tops) + offset)
            if self.m.float32_sums:
                partial, err = offset, 0.0
                for top in tops:
                    if top:
                        partial += top
                        err += 2.0**-24 * partial
                relax = max(relax, err + 2.0**-24 * partial)
            worst = max(worst, relax)
        return (worst + 1e-7) / s

    # ---- intervals, normalised so that two meet iff max(lo) < min(hi) ----------
    def _norm(self, f: int, lo: float, hi: float) -> tuple[float, float]:
        """An interval of the library's test ([lo, hi) for "<", (lo, hi] for "<=") of
        feature f, as the same set of admissible values with integer ends for an
        integer feature; two normalised intervals share a value iff max lo < min hi."""
        if not self.domain[f].integer:  # the same for both inputs (per_input_domain)
            return lo, hi
        if self.m.test == "<":  # [lo, hi) holds the integers [ceil lo, ceil hi)
            return _ceil(lo), _ceil(hi)
        return _floor(lo), _floor(hi)  # (lo, hi] holds (floor lo, floor hi]

    def _domain_interval(self, f: int, k: int = 0) -> tuple[float, float]:
        d = self.dom(f, k)
        lb, ub = d.lb, d.ub
        if self.m.float32:  # the library compares float32(x), rounded to nearest: x in
            # [lb, ub] maps onto [float32(lb), float32(ub)], as rounding is monotone
            lb, ub = _f32_nearest(lb), _f32_nearest(ub)
        if self.m.test == "<":  # [lb, ub] as [lb, after(ub))
            lo, hi = lb, (_after32(ub) if self.m.float32 else _after(ub))
        else:  # [lb, ub] as (before(lb), ub]
            lo, hi = (_before32(lb) if self.m.float32 else _before(lb)), ub
        return self._norm(f, lo, hi)

    def _split(self, lo: float, hi: float, t: float):
        """The (yes, no) parts of an interval at threshold t (the test holds on yes)."""
        return (lo, min(hi, t)), (max(lo, t), hi)

    # ---- routing a box part through a node, as the library routes each value ------
    def _route(self, t: Tree, n: int, part: tuple, k: int = 0) -> tuple[list, list]:
        """The pieces of a box part (lo, hi, nan) of node n's feature that go left and
        right: each an interval (of values; of code positions for a coded feature, in
        input k's list) with or without NaN."""
        lo, hi, nan = part
        f = t.feature[n]
        codes = self.dom(f, k).codes
        sides: tuple[list, list] = ([], [])
        if codes is not None:  # each code as the library routes it, in runs
            start, end = max(lo, 0), min(hi, len(codes))  # a NaN-only part: none
            for i in range(int(start), int(end)) if start < end else ():
                side = sides[0 if goes_left(self.m, t, n, float(codes[i])) else 1]
                if side and side[-1][1] == i:
                    side[-1] = (side[-1][0], i + 1, False)
                else:
                    side.append((i, i + 1, False))
        else:
            yes, no = self._split(lo, hi, self._test_at(float(t.threshold[n])))
            band = self._band(t, n)
            if band is None:
                sides[0].append((*yes, False))
                sides[1].append((*no, False))
            else:  # the band goes as 0.0 does: carved out of both sides
                interval, left = band
                for side, part_ in ((sides[0], yes), (sides[1], no)):
                    side.extend((*p, False) for p in _minus(part_, interval))
                sides[0 if left else 1].append((max(lo, interval[0]), min(hi, interval[1]), False))
        out = tuple(_merged([p for p in side if p[0] < p[1]]) for side in sides)
        if nan:
            side = out[0 if goes_left(self.m, t, n, math.nan) else 1]
            if side:
                side[-1] = (side[-1][0], side[-1][1], True)
            else:
                side.append((*EMPTY, True))
        return out

    def _test_at(self, t: float) -> float:
        """A split's threshold as a float32 model's test parts the float32 values it
        compares: at the largest float32 at most t ("<=") or the least at least t ("<"),
        so that no value lies between (scikit-learn's thresholds are doubles)."""
        if not self.m.float32:
            return t
        return _f32_down(t) if self.m.test == "<=" else _f32_up(t)

    def _band(self, t: Tree, n: int):
        """LightGBM's zero band as an interval of the node's test, with the side it
        takes (as 0.0), when the test alone would not send all of it there; None when it
        would (or the library has no band)."""
        z = self.m.zero_band
        if not z:
            return None
        left = goes_left(self.m, t, n, 0.0)
        th = t.threshold[n]
        if self.m.test == "<=":  # the band is (before(-z), z]
            interval = (_before(-z), z)
            if (left and z <= th) or (not left and th < -z):
                return None
        else:  # [-z, after(z))
            interval = (-z, _after(z))
            if (left and z < th) or (not left and th <= -z):
                return None
        return interval, left

    # ---- the leaves as boxes of the pair space ----------------------------------
    def _leaf_boxes(self, t: Tree, k: int) -> list[tuple]:
        """Every leaf input k can reach within the domain, with its box (normalised
        per column of the pair space: lo, hi and whether NaN is in it); a leaf reached
        through pieces that are not one interval has a box per piece."""
        lo0, hi0, nan0 = (list(x) for x in self._full_box())  # Python's, a leaf at a time
        out = []
        stack = [(0, {})]
        while stack:
            n, path = stack.pop()
            f = t.feature[n]
            if f < 0:
                lo, hi, nan = lo0.copy(), hi0.copy(), nan0.copy()
                for g, (a, b, g_nan) in path.items():
                    c = self.col_of[k][g]
                    na, nb = self._norm_part(g, a, b, k)
                    lo[c], hi[c], nan[c] = max(lo[c], na), min(hi[c], nb), g_nan
                if all(a < b or m for a, b, m in zip(lo, hi, nan)):
                    box = (np.array(lo, dtype=float), np.array(hi, dtype=float))
                    out.append((n, *box, np.array(nan, dtype=bool)))
                continue
            part = path.get(f, (-INF, INF, self.dom(f, k).missing))
            yes, no = self._route(t, n, part, k)
            c = self.col_of[k][f]
            for p in no:
                if self._within(f, c, p, k, lo0, hi0):
                    stack.append((t.right[n], {**path, f: p}))
            for p in yes:
                if self._within(f, c, p, k, lo0, hi0):
                    stack.append((t.left[n], {**path, f: p}))
        return out

    def _within(self, f: int, c: int, p: tuple, k: int, lo0: list, hi0: list) -> bool:
        """Whether a piece p of feature f (column c of input k) meets the domain, by the
        test a leaf's box passes in that column: a piece that does not is not walked
        down, since every piece below it lies within it (a walk within a domain of one
        value per feature follows one path, not every leaf)."""
        a, b = self._norm_part(f, p[0], p[1], k)
        return max(lo0[c], a) < min(hi0[c], b) or p[2]

    def _full_box(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The domain as a box of the pair space (normalised; computed once, each call
        given its own copy)."""
        if self._whole is None:
            self._whole = self._domain_box()
        return tuple(x.copy() for x in self._whole)

    def _domain_box(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lo, hi = [], []
        for (f, _), k in zip(self.columns, self.col_input):
            codes = self.dom(f, k).codes
            a, b = (0, len(codes)) if codes is not None else self._domain_interval(f, k)
            lo.append(a)
            hi.append(b)
        return np.array(lo, dtype=float), np.array(hi, dtype=float), self.col_missing.copy()

    def _norm_part(self, f: int, lo: float, hi: float, k: int = 0) -> tuple[float, float]:
        """A box part's interval of input k, normalised (code positions stay as they are)."""
        return (lo, hi) if self.dom(f, k).codes is not None else self._norm(f, lo, hi)

    def box_ends(self, box: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A box of the proof (per column (lo, hi, nan)) as arrays, normalised."""
        ends = [
            self._norm_part(f, *box[c][:2], k)
            for c, ((f, _), k) in enumerate(zip(self.columns, self.col_input))
        ]
        lo = np.array([a for a, _ in ends], dtype=float)
        hi = np.array([b for _, b in ends], dtype=float)
        return lo, hi, np.array([part[2] for part in box], dtype=bool)

    def _boxes(self, ti: int, k: int) -> LeafBoxes:
        """``_leaf_boxes`` of tree ``ti`` for input ``k``, as arrays (kept: a box's
        three small arrays would cost about 300 bytes more a leaf)."""
        if (ti, k) not in self._leaves:
            self._leaves[ti, k] = LeafBoxes.of(self._leaf_boxes(self.m.trees[ti], k), self)
        return self._leaves[ti, k]

    def _table(self, row: Row, keep: bool = True) -> _Table:
        """The row's leaves (or leaf pairs) of every tree as boxes with their weight in
        the row; a tree that adds nothing to it is left out. ``keep``: held for the next
        call (the walk of walk.py holds its own copy, read by columns)."""
        key = (row.a, row.b)
        if key in self._tables:
            return self._tables[key]
        trees = []
        for ti, t in enumerate(self.m.trees):
            wa, wb = _weights(t, row.a), _weights(t, row.b)
            if wa is None and wb is None:
                continue
            if wb is None:
                trees.append(self._boxes(ti, 0).valued(wa))
            elif wa is None:
                trees.append(self._boxes(ti, 1).valued(wb))
            elif not self.reads_varied[ti]:  # both inputs reach the same leaf
                one = self._boxes(ti, 0)
                value = np.asarray(wa)[one.nodes] + np.asarray(wb)[one.nodes]
                if np.all(value == 0.0):
                    continue  # opposite weights: the tree drops out
                trees.append((one.lo, one.hi, one.nan, value))
            else:
                trees.append(self._pairs(self._boxes(ti, 0), self._boxes(ti, 1), wa, wb))
        table = _Table.of(trees, len(self.columns))
        if keep:
            self._tables[key] = table
        return table

    def _offset(self, row: Row) -> float:
        out = 0.0
        for coefs in (row.a, row.b):
            for k, c in enumerate(coefs or ()):
                out += c * self.m.offset_of(k)
        return out

    def _pairs(self, one: LeafBoxes, two: LeafBoxes, wa: list, wb: list) -> tuple:
        """The leaf pairs the two inputs reach together, as arrays (lo, hi, nan, value):
        x1's leaf bounds the columns of input 1, x2's those of input 2, both the shared
        columns; a pair whose box is empty in some column is left out. Computed a block
        of x1's leaves at a time."""
        cols = len(self.columns)
        if not len(one.nodes) or not len(two.nodes):
            return _no_boxes(cols)
        arrays, others = [one.lo, one.hi, one.nan], [two.lo, two.hi, two.nan]
        v1, v2 = np.asarray(wa)[one.nodes], np.asarray(wb)[two.nodes]
        own1 = np.array([c == 1 for _, c in self.columns])
        own2 = np.array([c == 2 for _, c in self.columns])
        block = max(1, 4_000_000 // max(1, len(two.nodes) * cols))
        out: list[list] = [[], [], [], []]
        for s in range(0, len(one.nodes), block):
            a = [x[s : s + block, None, :] for x in arrays]
            b = [x[None, :, :] for x in others]
            side = []
            for (x, y), meet in zip(
                zip(a, b, strict=True), (np.maximum, np.minimum, np.logical_and)
            ):
                m = meet(x, y)
                m = np.where(own1, x, m)
                side.append(np.where(own2, y, m))
            lo, hi, nan = side
            alive = np.all((lo < hi) | nan, axis=2)
            i, j = np.nonzero(alive)
            for k, x in enumerate((lo, hi, nan)):
                out[k].append(x[i, j])
            out[3].append(v1[s + i] + v2[j])
        return tuple(np.concatenate(x) for x in out)

    # ---- the walk -------------------------------------------------------------
    def run(self, proof: list, rows: dict[str, Row], link: LinkRule | None = None) -> Verdict:
        """Walk one part of the proof: its splits must partition the pair space, and at
        each pruned box the named row's bound, recomputed, must be the stated one and lie
        below the row's threshold (its right-hand side less the relaxation); at a ``link``
        step, the change through the exp link bounded as ``link`` says (verify/link.py)."""
        threshold = {name: r.rhs - self.eps * r.weight for name, r in rows.items()}
        box = [(-INF, INF, bool(m)) for m in self.col_missing]
        stack = [box]
        pruned = 0
        for i, step in enumerate(proof):
            if not stack:
                return Verdict(False, f"step {i}: the proof goes on after covering the space")
            box = stack.pop()
            shape = misshapen_step(i, step)
            if shape is not None:
                return Verdict(False, shape)
            if step[0] == "split":
                c = split_column(step, len(box))
                if c is None:
                    return Verdict(
                        False, f"step {i}: a split on no column of the pair space {step!r}"
                    )
                sides = self._split_box(box[c], c, step[2])
                if sides is None:
                    return Verdict(False, f"step {i}: a split this column cannot take {step!r}")
                no_box, yes_box = list(box), list(box)
                yes_box[c], no_box[c] = sides
                stack.append(no_box)
                stack.append(yes_box)
                continue
            if step[0] == "link":
                why = link_prune(self, box, step, link)
                if why is not None:
                    return Verdict(False, f"box {pruned} (step {i}): {why}", pruned)
                pruned += 1
                continue
            if step[0] in SETTLED:
                why = self.settled_refusal(box, step, rows)
                if why is not None:
                    return Verdict(False, f"box {pruned} (step {i}): {why}", pruned)
                pruned += 1
                continue
            name = step[1]
            if step[0] != "prune" or name not in rows:
                return Verdict(False, f"step {i}: unknown step {step!r}")
            row = rows[name]
            lo, hi, nan = self.box_ends(box)
            bound = self._offset(row) + self._table(row).bound(lo, hi, nan, self.col_missing)
            stated = float(step[2]) / self.m.margin_per_logit  # logit units -> raw
            wrong = prune_refusal(
                (pruned, i), name, bound, stated, self.eps * row.weight, threshold[name]
            )
            if wrong is not None:
                return wrong
            pruned += 1
        return covering(stack, pruned)

    def _read_threshold(self, t: float) -> float:
        """The threshold on the input x of a split the library makes on the value it
        reads: LightGBM reads x in its zero band [-z, z] as 0.0, so read(x) <= t holds
        for x <= t outside the band and, inside it, when 0 <= t."""
        z = self.m.zero_band
        if not z or not -z <= t < z:
            return t
        return z if t >= 0.0 else _before(-z)

    def _cut(self, at: float) -> float:
        """The test's threshold of a proof's split at the number ``at``: the library's
        reading of it (``_read_threshold``, ``_test_at``), kept per value and sign (a
        proof splits at the model's thresholds, few values many times)."""
        key = (at, math.copysign(1.0, at))
        cut = self._cuts.get(key)
        if cut is None:
            cut = self._cuts[key] = self._test_at(self._read_threshold(at))
        return cut

    def _split_box(self, part: tuple, c: int, at) -> tuple | None:
        """The (yes, no) parts of a box part at a split: a number t, the library's test
        at t on the value it reads (NaN goes "no"); "nan", the numbers and NaN; ``{"codes": [...]}``, the
        first codes of the domain's list and the rest (NaN goes "no"). None: the split
        does not fit the column (``c``)."""
        lo, hi, nan = part
        dom = self.col_dom[c]
        if isinstance(at, (int, float)) and not isinstance(at, bool) and dom.codes is None:
            yes, no = self._split(lo, hi, self._cut(float(at)))
            return (*yes, False), (*no, nan)
        if at == "nan" and dom.missing:
            return (lo, hi, False), (*EMPTY, nan)
        if isinstance(at, dict) and set(at) == {"codes"} and dom.codes is not None:
            cut = len(at["codes"])
            if [int(c) for c in at["codes"]] != list(dom.codes[:cut]):
                return None
            return (lo, min(hi, cut), False), (max(lo, cut), hi, nan)
        return None

    def settled_refusal(self, box: list, step: list, rows: dict[str, Row]) -> str | None:
        """Why a box closed by a step of ``SETTLED`` is not (None: it is): its replay,
        the same leaves for x1 and x2 (verify/alike.py), the claim's relations
        (verify/relations.py)."""
        if step[0] == "replay":
            return self._replay(box, step, rows)
        if step[0] == "relation":
            return relation_refusal(self, box, step)
        return alike_refusal(self, step)

    # ---- a box the library's own scores rule out ---------------------------------
    def _replay(self, box: list, step: list, rows: dict[str, Row]) -> str | None:
        """Why a ``["replay", x1, x2]`` step does not rule its box out (None: it does):
        the pair must lie in the box and the domain, every tree must give each input one
        value over the box (so the library scores every pair of the box as this one),
        and the library's raw scores of the pair must miss some row of the condition."""
        if self.replay is None:
            return "a replayed box needs the library's scores: " + self.replay_refusal
        xs = [np.array([_bound(v) for v in step[k]], dtype=np.float64) for k in (1, 2)]
        if any(x.shape != (len(self.domain),) for x in xs):
            return "its pair does not give every feature a value"
        for c, (f, copy) in enumerate(self.columns):
            for k in (0, 1) if copy is None else (copy - 1,):
                if not self._admits(c, box[c], float(xs[k][f])):
                    return f"its pair's x{k + 1} is outside the box or the domain (feature {f})"
            if copy is None and not _same(xs[0][f], xs[1][f]):
                return f"its pair differs in feature {f}, which is not varied"
        lo, hi, nan = self.box_ends(box)
        for ti, t in enumerate(self.m.trees):
            for k in (0, 1):
                b = self._boxes(ti, k)
                meet = (np.maximum(b.lo, lo) < np.minimum(b.hi, hi)) | (b.nan & nan)
                values = {_leaf_value(t, int(n)) for n in b.nodes[np.all(meet, axis=1)]}
                if len(values) > 1:
                    return f"tree {ti} gives x{k + 1} more than one value over the box"
        raw = self.replay(np.stack(xs))
        if self.misses is not None:  # the library's probabilities (Model.float32_link)
            if self.misses(raw):
                return None
            return "the library's probabilities of its pair meet the claim"
        for r in rows.values():
            value = sum(a * raw[0][o] for o, a in enumerate(r.a or ()))
            value += sum(b * raw[1][o] for o, b in enumerate(r.b or ()))
            if value < r.rhs:
                return None
        return "the library's scores of its pair meet every row of the condition"

    def _admits(self, c: int, part: tuple, v: float) -> bool:
        """Whether the value v of column c's feature lies in its domain and in the box's part
        (lo, hi, nan): NaN where the part holds NaN; for a coded feature, a code of the
        domain whose place in its list lies in [lo, hi); else a number within the
        domain's bounds, in the interval of the library's test, as the library compares
        it."""
        lo, hi, nan = part
        d = self.col_dom[c]
        if math.isnan(v):
            return d.missing and bool(nan)
        if d.codes is not None:
            if not v.is_integer() or int(v) not in d.codes:
                return False
            return lo <= d.codes.index(int(v)) < hi
        if not (d.lb <= v <= d.ub) or (d.integer and not v.is_integer()):
            return False
        x = float(np.float32(v)) if self.m.float32 else v
        return lo <= x < hi if self.m.test == "<" else lo < x <= hi


@dataclass(frozen=True)
class LeafBoxes:
    """The leaves one input reaches in a tree (``Checker._leaf_boxes``) as arrays: per
    box its leaf (``nodes``) and, per column of the pair space, its ends and whether it
    holds NaN ([boxes, columns])."""

    nodes: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    nan: np.ndarray

    @classmethod
    def of(cls, boxes: list[tuple], checker: Checker) -> LeafBoxes:
        if not boxes:
            lo, hi, nan, _ = _no_boxes(len(checker.columns))
            return cls(np.zeros(0, dtype=np.int64), lo, hi, nan)
        nodes = np.array([b[0] for b in boxes], dtype=np.int64)
        return cls(nodes, *(np.array([b[k] for b in boxes]) for k in (1, 2, 3)))

    def valued(self, weight: list[float]) -> tuple:
        """The boxes with each leaf's ``weight`` (per node): a table's (lo, hi, nan, value)."""
        return self.lo, self.hi, self.nan, np.asarray(weight, dtype=np.float64)[self.nodes]


def _leaf_value(t: Tree, n: int) -> tuple:
    return tuple(t.values[n]) if t.values is not None else (t.value[n], t.output)


def _same(a: float, b: float) -> bool:
    """The same input value (NaN is NaN)."""
    return bool(a == b or (math.isnan(a) and math.isnan(b)))


def _domain(d: dict, version: int) -> Domain:
    """A feature's domain: bounds and integrality, and (version 3) its category codes,
    which then are its values, and whether NaN is one."""
    codes = d.get("codes")
    missing = bool(d.get("missing", False))
    if (codes is not None or missing) and version < 3:
        raise ValueError("category codes and NaN in a domain are certificate version 3")
    if codes is not None:
        if not codes or any(type(c) is not int for c in codes) or len(set(codes)) != len(codes):
            raise ValueError("a domain's codes are distinct integers")
        codes = tuple(codes)
    if not isinstance(d["integer"], bool) or not isinstance(d.get("missing", False), bool):
        raise ValueError("a domain's integer and missing are true or false")
    unlisted = d.get("unlisted")
    if unlisted is not None and (type(unlisted) is not int or unlisted not in (codes or ())):
        raise ValueError("a domain's unlisted code is one of its codes")
    return Domain(_bound(d["lb"]), _bound(d["ub"]), d["integer"], codes, missing, unlisted)


def _codes_from_0(d: Domain) -> Domain:
    """The domain's bounds as codes' bounds (codes are at least 0)."""
    return replace(d, lb=max(d.lb, 0.0))


def per_input_domain(d: dict, version: int, name) -> tuple[Domain, Domain]:
    """A varied feature's domain stated per input (version 4: ``{"x1": ..., "x2": ...}``,
    each a domain), as (x1's, x2's); both inputs are of one kind (integer or not)."""
    if version < 4:
        raise ValueError("a domain per input is certificate version 4")
    if set(d) != {"x1", "x2"} or not all(isinstance(d[k], dict) for k in ("x1", "x2")):
        raise ValueError(f"feature {name!r}: a domain per input is {{'x1': ..., 'x2': ...}}")
    one, two = _domain(d["x1"], version), _domain(d["x2"], version)
    if one.integer != two.integer:
        raise ValueError(f"feature {name!r}: its inputs' domains are integer alike or not")
    return one, two


def _merged(pieces: list[tuple]) -> list[tuple]:
    """Pieces (lo, hi, nan) with touching intervals joined (the zero band beside the
    numbers on its side: one interval, as a plain split would give)."""
    out: list[tuple] = []
    for p in sorted(pieces):
        if out and out[-1][1] == p[0]:
            out[-1] = (out[-1][0], p[1], False)
        else:
            out.append(p)
    return out


def _minus(part: tuple[float, float], cut: tuple[float, float]) -> list[tuple[float, float]]:
    """An interval less another (both of the same test's form): up to two intervals."""
    lo, hi = part
    return [(lo, min(hi, cut[0])), (max(lo, cut[1]), hi)]


def goes_left(m: Model, t: Tree, n: int, v: float) -> bool:
    """Whether the library sends value v (a number or NaN) to node n's ``left``: NaN to
    its default side (read as 0.0 under LightGBM's missing type None), a value in
    LightGBM's zero band read as 0.0 (to the default side under missing type Zero), a
    categorical node's codes left, every other value right, else the numeric test."""
    mode = t.missing[n] if t.missing is not None else "nan"
    if math.isnan(v):
        if mode != "none":
            if t.default_left is None:
                raise ModelError("the model's NaN side was not read")
            return bool(t.default_left[n])
        v = 0.0  # LightGBM's missing type None reads NaN as 0.0
    if abs(v) <= m.zero_band:
        v = 0.0
        if mode == "zero":
            return bool(t.default_left[n])
    if t.cats is not None and t.cats[n] is not None:
        return v >= 0.0 and v == math.floor(v) and int(v) in t.cats[n]
    x = float(np.float32(v)) if m.float32 else v
    return x < t.threshold[n] if m.test == "<" else x <= t.threshold[n]


def _reads(t: Tree, varied: set[int]) -> bool:
    return any(f in varied for f in t.feature if f >= 0)


def _top(t: Tree, k: int) -> float:
    """The tree's largest |value| on output k (0 when it adds nothing to k)."""
    if t.values is not None:
        return max((abs(v[k]) for v in t.values), default=0.0)
    return max((abs(v) for v in t.value), default=0.0) if t.output == k else 0.0


def _weights(t: Tree, coefs: tuple[float, ...] | None) -> list[float] | None:
    """Per node, the leaf's weight in a row's side (None: the tree adds nothing to it)."""
    if coefs is None:
        return None
    if t.values is not None:
        if not any(coefs):
            return None
        return [sum(c * v for c, v in zip(coefs, vals, strict=True)) for vals in t.values]
    c = coefs[t.output] if t.output < len(coefs) else 0.0
    if c == 0.0:
        return None
    return [c * v for v in t.value]


@dataclass(frozen=True)
class _Table:
    """Boxes with values, grouped by tree: the bound on a box is the sum over trees of
    the largest value among the tree's boxes that meet it. Two boxes meet when, in every
    column, their intervals share a value or both hold NaN."""

    lo: np.ndarray  # [boxes, columns]
    hi: np.ndarray
    nan: np.ndarray  # [boxes, columns]: NaN is in the box
    value: np.ndarray  # [boxes]
    starts: np.ndarray  # first box of each tree
    empty_tree: bool  # some tree has no box at all: nothing is reachable

    @classmethod
    def of(cls, trees: list, columns: int) -> _Table:
        """From per tree either a list of (lo, hi, nan, value) boxes or those as arrays."""
        trees = [t if isinstance(t, tuple) else _as_arrays(t, columns) for t in trees]
        sizes = [len(t[3]) for t in trees]
        if not sum(sizes):
            z = np.zeros((0, columns))
            return cls(z, z, z.astype(bool), np.zeros(0), np.zeros(0, dtype=np.int64), bool(trees))
        lo, hi, nan, value = (np.concatenate([t[k] for t in trees]) for k in range(4))
        starts = np.cumsum([0, *sizes[:-1]]).astype(np.int64)
        return cls(lo, hi, nan.astype(bool), value.astype(np.float64), starts, 0 in sizes)

    def bound(self, lo: np.ndarray, hi: np.ndarray, nan: np.ndarray, missing: np.ndarray) -> float:
        if self.empty_tree:
            return -INF
        if self.value.size == 0:
            return 0.0
        # only the columns the box narrows can exclude (NaN left out of a column that has it)
        cut = (lo > -INF) | (hi < INF) | (missing & ~nan)
        meet = np.maximum(self.lo[:, cut], lo[cut]) < np.minimum(self.hi[:, cut], hi[cut])
        if nan[cut].any():
            meet |= self.nan[:, cut] & nan[cut]
        live = np.all(meet, axis=1)
        top = np.maximum.reduceat(np.where(live, self.value, -INF), self.starts)
        return float(top.sum())


def _no_boxes(columns: int) -> tuple:
    z = np.zeros((0, columns))
    return z, z, z.astype(bool), np.zeros(0)


def _as_arrays(boxes: list, columns: int) -> tuple:
    if not boxes:
        return _no_boxes(columns)
    return tuple(np.array([b[k] for b in boxes]) for k in range(4))


def _ceil(v: float) -> float:
    return float(math.ceil(v)) if math.isfinite(v) else v


def _floor(v: float) -> float:
    return float(math.floor(v)) if math.isfinite(v) else v


def _before(v: float) -> float:
    return float(np.nextafter(v, -INF)) if math.isfinite(v) else v


def _after(v: float) -> float:
    return float(np.nextafter(v, INF)) if math.isfinite(v) else v


def _before32(v: float) -> float:
    if not math.isfinite(v):
        return v
    return float(np.nextafter(np.float32(v), np.float32(-np.inf)))


def _after32(v: float) -> float:
    if not math.isfinite(v):
        return v
    return float(np.nextafter(np.float32(v), np.float32(np.inf)))


def _f32_nearest(v: float) -> float:
    with np.errstate(over="ignore"):  # beyond float32's range: infinite, as the library's
        return float(np.float32(v))


def _f32_down(v: float) -> float:
    if not math.isfinite(v):
        return v
    with np.errstate(over="ignore"):  # beyond float32's range: infinite, then its neighbour
        x = np.float32(v)
    return float(x if float(x) <= v else np.nextafter(x, np.float32(-np.inf)))


def _f32_up(v: float) -> float:
    if not math.isfinite(v):
        return v
    with np.errstate(over="ignore"):  # beyond float32's range: infinite, then its neighbour
        x = np.float32(v)
    return float(x if float(x) >= v else np.nextafter(x, np.float32(np.inf)))
