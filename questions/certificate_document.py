"""A certificate's document (docs/certificates.md, "The format"): the model it names (its
file relative to the certificate, hash, library, split test, base score), the question
(features, varied ones, claim, domains) and the proof parts of the box searches
(certificate_steps.py), written a piece at a time (certificate_json.py)."""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path

from ..compiler.encode import ensemble_structure
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError, setting, spelled
from ..compiler.query import ANY, Query, feature_index
from ..search.anchored_boxes import anchor_of, is_anchored
from ..search.relation_boxes import stated_relations
from .certificate_json import write_json
from .certificate_steps import (
    OPEN_CODES,
    anchored_domains,
    input_domains,
    json_number,
    with_unlisted,
)
from .certify_groups import group_section, model_test
from .certify_pipeline import NoMaps, pipeline_maps
from .output_folder import make_folder_of

# version 1: binary probability gaps (``question.gap``, one ``proof``); 2: every claim
# (``question.claim``, a ``proof`` per part); 3: domains with codes and NaN; 4: a varied
# feature's domain per input (``{"x1": ..., "x2": ...}``); each written only where needed
FORMAT, VERSION = "treesens-certificate", 2
LIBRARIES = {
    "xgboost": "xgboost",
    "xgboost-dump": "xgboost-dump",
    "lightgbm": "lightgbm",
    "sklearn": "sklearn",
    "catboost": "catboost",
    "onnx": "onnx",
    "pipeline": "sklearn-pipeline",
}


def model_library(ens: Ensemble) -> str | None:
    """The library whose own reader the checker uses for this model, if it has one."""
    return LIBRARIES.get(model_format(ens))


def model_format(ens: Ensemble) -> str:
    """The format treesens read the model in ("" for one built in memory)."""
    return ens.origin.format if ens.origin is not None else ""


def refuse_budget_alone(seconds, certificate, keyword: str = "certificate") -> None:
    """A certify_budget (--certify-budget) given without the certificate (``keyword``:
    check's certificate, a sweep's or audit's certificates folder) to spend it on: an
    InputError, where it was taken and nothing certified."""
    if seconds is not None and certificate is None:
        one = keyword == "certificate"
        value, proofs = ("FILE", "proof") if one else ("DIR", "proofs")
        given = spelled(f"{keyword}={value}", f"--{keyword} {value}")
        raise InputError(
            f"{setting('certify_budget', seconds)} is the time for the {proofs} {given} "
            f"writes: give {spelled(keyword + '=', '--' + keyword)} too (without it nothing "
            "is certified)"
        )


def refuse_rows_alone(flag: str, value, certificates) -> None:
    """An audit's --certify-rows or --certify-timeout (``flag``, given ``value``) without
    --certificates DIR, whose rows they bound: an InputError, where it was taken and
    nothing certified."""
    if value is not None and certificates is None:
        what = "how many" if flag == "--certify-rows" else "for how long"
        raise InputError(
            f"{flag} {value:g} is {what} audited rows --certificates DIR certifies: give "
            "--certificates too (without it nothing is certified)"
        )


def check_certify_budget(seconds) -> None:
    """The API's certify_budget: None (the default) or seconds above 0, as the CLI's."""
    if seconds is None:
        return
    number = isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
    if not (number and math.isfinite(seconds) and seconds > 0):
        raise InputError(f"certify_budget takes a positive number of seconds, not {seconds!r}")


def check_certificate_path(path: str | Path) -> None:
    """A certificate's path, refused before any work (InputError) where no certificate can
    be written there, or where one written would be missed: a folder, a name not ending in
    .json, a file that is no certificate (not overwritten)."""
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"certificate takes a file's path, not {path!r}")
    p = Path(path)
    if p.is_dir() or str(path).endswith(("/", os.sep)):  # 'c/': a file 'c' was written
        raise InputError(
            "cannot write the certificate there: it is a directory (give a file name)", str(path)
        )
    # verify DIR checks a folder's *.json (c.JSON too): another name hides a proof
    if p.suffix.lower() != ".json":
        raise InputError(
            f"a certificate is JSON and its name ends in .json (treesens verify DIR checks "
            f"the *.json files of a folder): name it {p.with_suffix('.json').name}",
            str(path),
        )
    if p.is_file() and p.stat().st_size > 0 and not is_certificate(p):
        raise InputError(
            "is a file and not a treesens certificate (the model, or data?): not overwritten; "
            "give the certificate a file name of its own",
            str(path),
        )
    make_folder_of(p, str(path))


def is_certificate(path: Path) -> bool:
    """Whether the file opens as a certificate this package writes (its first key)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return False
    return head.replace(b" ", b"").startswith(b'{"format":"treesens-certificate"')


def write_document(ens, q, enc, tables, parts, model_file, path, max_gap_upper: bool):
    """Write the certificate of ``parts`` (proof_part's) to ``path``; None, or why it
    cannot be written (a pipeline whose steps the checker cannot map)."""
    doc = certificate_document(ens, q, enc, tables, parts, Path(model_file), Path(path))
    doc["question"]["max_gap_upper"] = max_gap_upper
    if enc.query.relations:  # the claim's relations between x1 and x2
        doc["question"]["relations"] = stated_relations(enc)
    if group_section(ens) is not None:
        doc["groups"] = group_section(ens)
    if doc["model"]["library"] == "sklearn-pipeline":
        try:
            doc["maps"] = pipeline_maps(ens, str(model_file))
        except NoMaps as e:
            return str(e)
    write_json(path, doc)  # its proofs' steps converted and written a piece at a time
    return None


def certificate_document(ens, q, enc, tables, parts, model_file: Path, certificate: Path) -> dict:
    columns = [[int(f), None if c is None else int(c) + 1] for f, c in tables.columns]
    # the domains searched: the features' own, or as a query's bounds narrowed them
    domain = [_domain(enc.ensemble, f) for f in range(ens.n_features)]
    for r in enc.query.relations:
        # a relation's codes are stated one by one, two per run of unlisted codes
        # (domain.with_order_codes): the checker's relation step reads no unlisted code
        domain[feature_index(ens, r.feature)].pop("unlisted", None)
    coded = any("codes" in d or "missing" in d for d in domain)
    if is_anchored(q):  # x1 the row; x2 the row outside F
        per_input = anchored_domains(enc, anchor_of(q), domain)
    else:  # a bound on one input of a varied feature
        per_input = input_domains(enc, domain)
    for f, sides in per_input.items():
        domain[f] = sides
    return {
        "format": FORMAT,
        # version 3 where a domain holds codes or NaN, 4 where one is stated per input (a
        # checker reading an earlier version refuses it rather than check another claim)
        "version": 4 if per_input or is_anchored(q) else 3 if coded else VERSION,
        "model": {
            "file": model_path_from(certificate, model_file),
            "sha256": hashlib.sha256(model_file.read_bytes()).hexdigest(),
            "library": model_library(ens),
            # the comparison the library's splits use (the checker maps ONNX nodes' modes
            # onto it; of other libraries it must be the library's own)
            "test": model_test(ens),
            # a dump does not store them: the base score the answer assumed (binary: as a
            # probability) and the number of classes
            "base_score": _base_score(ens),
            "num_class": max(ens.n_outputs, 1) if not ens.is_regressor else 1,
        },
        "question": {
            "features": list(ens.feature_names),
            "vary": [ens.feature_names[f] for f in sorted(enc.varying)],
            "claim": _claim(ens, q),
            "domain": domain,
        },
        "columns": columns,
        "parts": parts,
    }


def _domain(ens, f: int) -> dict:
    """Feature f's domain: its bounds, and (version 3) its codes and whether it may be
    missing."""
    feat = ens.features[f]
    out: dict = {
        "lb": json_number(feat.lb),
        "ub": json_number(feat.ub),
        "integer": bool(feat.integral),
    }
    dom = ensemble_structure(ens).domains.get(f)
    if dom is not None and dom.codes is not None:
        out["codes"] = [int(c) for c in dom.codes]
    if feat.may_be_missing:
        out["missing"] = True
    if "codes" in out and model_library(ens) == "catboost":  # the checker hashes the names
        out["categories"] = list(feat.categories or ())
    return with_unlisted(out, ens, f, model_library(ens) in OPEN_CODES)


def _claim(ens, q: Query) -> dict:
    if is_anchored(q):  # an audit's row: x2's flip alone (verify/claims.py)
        claim = {"kind": "flip", "gap": float(q.gap.value), "gap_kind": str(q.gap.kind)}
        d = int(q.param("decision"))
        if ens.n_outputs > 1:
            to = q.classes[1] if q.classes else ANY
            claim["classes"] = [d, to if to == ANY else int(to)]
        else:
            claim["to"] = 1 - d
        return claim
    if q.delta is not None:
        return {"kind": "change", "delta": float(q.delta), "direction": str(q.direction)}
    claim = {"kind": "gap", "gap": float(q.gap.value), "gap_kind": str(q.gap.kind)}
    if ens.n_outputs > 1:
        claim["classes"] = [c if c == ANY else int(c) for c in q.classes]
    return claim


def _base_score(ens) -> float:
    """The base score a dump's answer assumed (read by the checker from dumps only): a
    multiclass dump's is every class's starting margin; a binary one's, the probability
    whose logit is the margin's start."""
    if ens.is_regressor:
        return 0.5
    if ens.n_outputs > 1:
        return float(ens.intercept[0])
    return 1.0 / (1.0 + math.exp(-float(ens.intercept[0])))


def model_path_from(certificate: Path, model_file: Path) -> str:
    """The model's path as the certificate states it: relative to the certificate's
    folder (``treesens verify`` reads it from there, wherever it is run), or absolute
    when given so."""
    if model_file.is_absolute():
        return str(model_file)
    return os.path.relpath(model_file.resolve(), certificate.resolve().parent)
