"""JUnit XML of a contract's outcomes (``treesens test --junit``), the report format CI
systems show: one ``testsuite`` per ``.sens`` file, one ``testcase`` per expectation.

The shape is the common JUnit schema's (Jenkins' ``junit-10.xsd``, which pytest validates
its ``--junitxml`` against, and GitLab's and GitHub actions' reporters read):
``testsuites`` with ``tests``, ``failures``, ``errors`` and ``time``, ``testsuite`` with
these and ``skipped``; ``testcase`` with
``classname``, ``name`` and ``time``; a FAIL (or an UNKNOWN not allowed) is a
``failure`` with ``message`` and ``type``, an error an ``error``, an UNKNOWN the file
allows a ``skipped``; what was proven or found is in ``system-out``.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

from ..questions.contract import ERROR, FAIL, UNKNOWN, Outcome

# characters XML 1.0 cannot hold (control characters but tab, newline, carriage return)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(s: str) -> str:
    return _NOT_XML.sub("?", s)


def _seconds(s: float) -> str:
    return f"{max(s, 0.0):.3f}"


def testcase(out: Outcome, classname: str) -> ET.Element:
    """One expectation's test case: its verdict and what backs it."""
    case = ET.Element(
        "testcase", classname=classname, name=_text(out.name), time=_seconds(out.seconds)
    )
    body = _text("\n".join(p for p in (out.message, out.detail) if p))
    if out.verdict == ERROR:
        ET.SubElement(case, "error", message=_text(out.message), type="error").text = body
    elif out.verdict == FAIL or (out.verdict == UNKNOWN and not out.expectation.allow_unknown):
        kind = "unknown" if out.verdict == UNKNOWN else "expectation"
        ET.SubElement(case, "failure", message=_text(out.message), type=kind).text = body
    elif out.skipped:
        ET.SubElement(case, "skipped", message=_text(out.message))
    out_text = body
    if out.certificate:
        out_text += f"\ncertificate: {out.certificate}"
    ET.SubElement(case, "system-out").text = _text(out_text)
    return case


def counts(outcomes: list[Outcome]) -> dict[str, int]:
    """tests, failures (a FAIL, or an UNKNOWN not allowed), errors, skipped."""
    errors = sum(o.verdict == ERROR for o in outcomes)
    skipped = sum(o.skipped for o in outcomes)
    failures = sum(not o.ok and o.verdict != ERROR for o in outcomes)
    return {"tests": len(outcomes), "failures": failures, "errors": errors, "skipped": skipped}


def junit_xml(
    outcomes: list[Outcome],
    *,
    suite: str,
    classname: str,
    seconds: float,
    properties: dict[str, str] | None = None,
    timestamp: datetime | None = None,
) -> str:
    """The JUnit XML document of one file's outcomes, as text (UTF-8, with declaration)."""
    n = {k: str(v) for k, v in counts(outcomes).items()}
    # the schema declares no "skipped" on testsuites (an undeclared attribute is invalid)
    totals = {k: v for k, v in n.items() if k != "skipped"}
    root = ET.Element("testsuites", name="treesens test", **totals, time=_seconds(seconds))
    when = (timestamp or datetime.now(timezone.utc)).replace(microsecond=0)
    ts = ET.SubElement(
        root,
        "testsuite",
        name=_text(suite),
        **n,
        time=_seconds(seconds),
        timestamp=when.isoformat(),
        hostname=socket.gethostname(),
    )
    if properties:
        props = ET.SubElement(ts, "properties")
        for k, v in properties.items():
            ET.SubElement(props, "property", name=k, value=_text(str(v)))
    for out in outcomes:
        ts.append(testcase(out, classname))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
