"""``treesens verify`` on a file JSON cannot turn into a certificate: one line naming
the file, exit code 2, never an internal error."""

from __future__ import annotations

import pytest

from treesens.tests.conftest import treesens_here

UNREADABLE = {
    "an integer of 5,000 digits": '{"version": 1' + "0" * 5000 + "}",
    "arrays nested 100,000 deep": "[" * 100_000 + "]" * 100_000,
}


@pytest.mark.parametrize("text", UNREADABLE.values(), ids=list(UNREADABLE))
def test_a_certificate_json_cannot_read_is_one_line_and_exit_2(tmp_path, text):
    bad = tmp_path / "c.json"
    bad.write_text(text)
    p = treesens_here("verify", bad)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a readable certificate" in lines[0], p.stderr
