"""The rules of the common JUnit XML schema, the one CI systems read (Jenkins' xunit
plugin's ``junit-10.xsd``, which pytest's own tests validate its ``--junitxml`` against),
as a check with the standard library (no XSD validator is a dependency of treesens).

XSD rejects an attribute it does not declare and an element where its parent does not
allow it, so the check does too: per element, the attributes it may and must carry, the
elements it may hold, and the form of ``time``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    required: frozenset[str]
    optional: frozenset[str]
    children: frozenset[str]
    text: bool = False  # may hold text


def _rule(required="", optional="", children="", text=False) -> Rule:
    return Rule(
        frozenset(required.split()), frozenset(optional.split()), frozenset(children.split()), text
    )


_MESSAGE = _rule(optional="type message", text=True)
_RERUN = _rule(
    required="type", optional="message", children="stackTrace system-out system-err", text=True
)
RULES: dict[str, Rule] = {
    "testsuites": _rule(optional="name time tests failures errors", children="testsuite"),
    "testsuite": _rule(
        required="name tests failures errors",
        optional="group time skipped timestamp hostname id package file log url",
        children="testsuite properties testcase system-out system-err",
    ),
    "properties": _rule(children="property"),
    "property": _rule(required="name value"),
    "testcase": _rule(
        required="name",
        optional="time classname group",
        children="skipped error failure rerunFailure rerunError flakyFailure flakyError "
        "system-out system-err",
    ),
    "failure": _MESSAGE,
    "error": _MESSAGE,
    "skipped": _MESSAGE,
    "system-out": _rule(text=True),
    "system-err": _rule(text=True),
    "stackTrace": _rule(text=True),
    "rerunFailure": _RERUN,
    "rerunError": _RERUN,
    "flakyFailure": _RERUN,
    "flakyError": _RERUN,
}
ROOTS = ("testsuites", "testsuite")
# the schema's SUREFIRE_TIME: digits, optionally grouped by commas, and a decimal part
TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")


def schema_problems(xml_text: str) -> list[str]:
    """What in the document the schema does not allow (an empty list: it is valid)."""
    root = ET.fromstring(xml_text)
    if root.tag not in ROOTS:
        return [f"the root is <{root.tag}>, not one of {ROOTS}"]
    problems: list[str] = []
    _check(root, root.tag, problems)
    return problems


def _check(el: ET.Element, where: str, problems: list[str]) -> None:
    rule = RULES[el.tag]
    attrs = set(el.attrib)
    for a in sorted(rule.required - attrs):
        problems.append(f"{where}: attribute {a!r} is required")
    for a in sorted(attrs - rule.required - rule.optional):
        problems.append(f"{where}: attribute {a!r} is not declared")
    timed = el.tag in ("testsuite", "testsuites") and "time" in attrs
    if timed and not TIME.fullmatch(el.get("time")):
        problems.append(f"{where}: time {el.get('time')!r} is not a number of seconds")
    if not rule.text and (el.text or "").strip():
        problems.append(f"{where}: holds text")
    for child in el:
        here = f"{where}/{child.tag}"
        if child.tag not in rule.children:
            problems.append(f"{here}: <{child.tag}> is not allowed in <{el.tag}>")
            continue
        if not rule.text and (child.tail or "").strip():
            problems.append(f"{where}: holds text")
        _check(child, here, problems)
