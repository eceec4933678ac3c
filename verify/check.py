"""Re-check a certificate of "insensitive" against the model, from the trees up: the
certificate's shape, its model (the file's hash, its features, how the library reads it)
and its claim, part by part (verify_file).

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

This module holds the certificate- and claim-level checks; pair_space.py the pair space
and the trees' leaves as its boxes, box_checks.py the walk of a proof's steps over it
(the Checker), domain.py a feature's stated domain, rounding.py the ends of intervals
as the library's test reads them, verdict.py the verdict and the refusals, and
verdict_text.py what a verdict says of the domain it covers.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace
from pathlib import Path

from .box_checks import Checker
from .certificate_text import Steps, read_certificate
from .claims import (
    claim_of,
    library_misses,
    part_key,
    part_rows,
    probability_claim,
    required_parts,
)
from .flip import flip_refusal
from .held import HELD, ModelChanged, file_hash, key_of
from .link import link_rule
from .models import Model, ModelError, read_model
from .models_groups import folded, read_groups
from .relations import relations_text
from .replay import RawScores, library_proba, library_raw
from .verdict import CertificateError, ModelUnreadable, Verdict, number
from .verdict_text import domain_record, domain_text, scope_text
from .walk import Walker

FORMAT = "treesens-certificate"
# 1: binary probability gaps only (a ``proof``); 2: every claim (``parts``); 3: domains
# with category codes and NaN (``codes``, ``missing``), and their splits; 4: a varied
# feature's domain per input (``{"x1": ..., "x2": ...}``)
VERSIONS = (1, 2, 3, 4)


# the names libraries give the features of a model file that names none (XGBoost's and
# ONNX's f0, LightGBM's Column_0, scikit-learn's x0, CatBoost's 0): a details file or the
# data names them, and the certificate states those names, column by column
PLACEHOLDERS = ("f{}", "Column_{}", "x{}", "{}")


def placeholders(names: list[str]) -> bool:
    """Are these a library's placeholder names, the model's features named by none?"""
    return any(list(names) == [p.format(i) for i in range(len(names))] for p in PLACEHOLDERS)


def unreadable_json(text: str, e: json.JSONDecodeError) -> str:
    """Why a file given as a certificate is not one JSON reads: not JSON at all (another
    kind of file, named by its start), cut short, or JSON's own words at its place."""
    start = text.lstrip()
    if not start.startswith(("{", "[")):
        shown = start.splitlines()[0][:30] if start else ""
        return (
            f"not a certificate: not JSON (it starts {shown!r}; treesens check ... "
            "--certificate FILE writes one)"
        )
    if e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string"):
        return (
            f"not a readable certificate: the JSON ends before it is complete (after "
            f"{len(text):,} characters): the file is cut short (a copy not finished?)"
        )
    return f"not a readable certificate ({e})"


def verify_file(
    path: str | Path, model_path: str | Path | None = None, *, model: str | Path | None = None
) -> Verdict:
    """Check the certificate at ``path`` against its model: the file it names, or
    ``model_path`` (``model=`` is the same, as ``treesens.check`` calls it)."""
    model_path = _model_file(model_path, model)
    if Path(path).is_dir():
        raise CertificateError(f"{path}: is a directory, not a certificate")
    if not Path(path).exists():  # as every treesens command says a file is missing
        raise CertificateError(f"{path}: certificate file not found")
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a BOM some editors save
        if not text.strip():
            raise CertificateError(f"{path}: the file is empty, not a certificate")
        doc = read_certificate(text)
    except json.JSONDecodeError as e:
        raise CertificateError(f"{path}: {unreadable_json(text, e)}") from None
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
    readable = ", ".join(map(str, VERSIONS))
    if isinstance(version, bool) or not isinstance(version, int):
        raise CertificateError(
            f"{path}: certificate version {_shown(version)}: a version is an integer "
            f"(this checker reads {readable})"
        )
    if version not in VERSIONS:
        raise CertificateError(
            f"{path}: certificate version {version}: this checker reads {readable}"
        )
    try:
        return _verify(doc, model_path, Path(path).parent)
    except ModelError as e:
        return Verdict(False, f"cannot check this model: {e}")
    except KeyError as e:
        return Verdict(False, f"malformed certificate: it has no field {e.args[0]!r}")
    except ValueError as e:  # the checker's own words of a field it refuses
        return Verdict(False, f"malformed certificate: {e}")
    except (TypeError, IndexError, ArithmeticError) as e:
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
    if "version" not in doc and "parts" in doc:  # version 1 stated none, and had a 'proof'
        return "it has no field 'version' (its 'parts' are those of version 2 and later)"
    wanted = {"model": dict, "question": dict, "columns": list}
    if int(doc.get("version", 1)) >= 2:
        wanted["parts"] = list
    for field, kind in wanted.items():
        if field in doc and not isinstance(doc[field], kind):
            return f"its field {field!r} is not {'an object' if kind is dict else 'a list'}"
    for k, col in enumerate(doc.get("columns") or ()):
        if not (isinstance(col, list) and len(col) == 2 and type(col[0]) is int) or not (
            col[1] is None or (type(col[1]) is int and col[1] in (1, 2))
        ):
            return f"columns[{k}] is {json.dumps(col)}, not [feature index, null, 1 or 2]"
    m = doc.get("model", {})
    if "base_score" in m and not number(m["base_score"]):
        return f"model.base_score is {json.dumps(m['base_score'])}, not a number"
    if "num_class" in m and (type(m["num_class"]) is not int):
        return f"model.num_class is {json.dumps(m['num_class'])}, not a whole number"
    q = doc.get("question", {})
    inner = {"domain": list, "features": list, "vary": list}
    if int(doc.get("version", 1)) >= 2:
        inner["claim"] = dict
    for field, kind in inner.items():
        if field in q and not isinstance(q[field], kind):
            return f"question.{field} is not {'an object' if kind is dict else 'a list'}"
    question = misshapen_question(q)
    if question is not None:
        return question
    for k, part in enumerate(doc.get("parts") or ()):
        if not isinstance(part, dict):
            return f"its field 'parts' holds {part!r:.60} (part {k}), not an object"
        if "proof" in part and not isinstance(part["proof"], (list, Steps)):
            return f"part {k}: its field 'proof' is not a list"
    if int(doc.get("version", 1)) == 1 and not isinstance(doc.get("proof", []), (list, Steps)):
        return "its field 'proof' is not a list"
    return None


def misshapen_question(q: dict) -> str | None:
    """Why the question's features, varied features and domains do not fit together
    (None: they do), named by its fields rather than by the Python error reading them
    would raise."""
    features, domain = q.get("features"), q.get("domain")
    if isinstance(features, list) and isinstance(domain, list) and len(features) != len(domain):
        return (
            f"question.domain has {len(domain)} entries and question.features {len(features)} "
            "(a domain for each feature)"
        )
    for name in q.get("vary") or () if isinstance(features, list) else ():
        if name not in features:
            return f"question.vary names {name!r}, which question.features does not"
    for k, d in enumerate(domain or ()):
        for side in (d.get("x1"), d.get("x2")) if isinstance(d, dict) and "x1" in d else (d,):
            if not isinstance(side, dict):
                return f"question.domain[{k}] is not an object"
            for end in ("lb", "ub"):
                if end in side and not stated_bound(side[end]):
                    shown = json.dumps(side[end])
                    return (
                        f'question.domain[{k}]: its {end} is {shown}, not a number, "inf" or "-inf"'
                    )
    claim = q.get("claim") if isinstance(q.get("claim"), dict) else {}  # version 1: q's gap
    for place, fields in (("question", q), ("question.claim", claim)):
        for field in ("gap", "delta"):
            if field in fields and not number(fields[field]):
                return f"{place}.{field} is {json.dumps(fields[field])}, not a number"
    return None


def stated_bound(v) -> bool:
    """A domain's bound as a certificate states it: a number, or "inf" / "-inf"."""
    return number(v) or v in ("inf", "-inf")


def _model_file(model_path: str | Path | None, model: str | Path | None) -> str | None:
    if model_path is not None and model is not None:
        raise TypeError("verify_file: give the model once, as model_path= or model=, not both")
    given = model if model is not None else model_path
    if given is not None and not isinstance(given, (str, os.PathLike)):
        raise TypeError(
            f"verify_file: the model is given as its file (a path), not a {type(given).__name__}: "
            "the checker reads the model from its file itself"
        )
    return None if given is None else os.fspath(given)


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


def _shown(value) -> str:
    """A JSON value as the certificate spells it, or its kind when that is long."""
    text = json.dumps(value)
    kind = {"dict": "object", "list": "array"}.get(type(value).__name__, type(value).__name__)
    return text if len(text) <= 40 else f"a JSON {kind}"


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
    if unread and model.refuses_nan:
        return Verdict(
            False,
            f"the domain says feature {model.features[unread[0]]!r} may be missing, and the "
            "model's library refuses missing values: a claim about inputs it cannot score",
        )
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
    message += "; " + scope_text(model, checker)
    if claim.max_gap_upper:
        message += f"; a max gap's upper bound: {claim.describe(one_way)}"
    else:  # version 1's too: the verdict says which gap it proves
        message += f"; {claim.describe(one_way)}"
    message += relations_text(checker.relations, model.features)
    message += f"; {decided}" if decided else ""
    named = named_categories(doc["question"])
    domain = domain_record(model, checker)
    return Verdict(True, message + domain_text(model, checker, named), boxes, domain=domain)


def _key_text(key: tuple) -> str:
    if len(key) == 1:  # a change's direction (domains per input)
        return f"direction {key[0]}"
    return f"{key[0]} -> {key[1]}" if key else "the one part"
