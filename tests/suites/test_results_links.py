"""JUnit files a program under test wrote are read only as the files they are: a link in their place (to a host
file, or to another program's results) is refused naming it, never followed. For the board's junit.xml and
ctest's file that is a ValueError; for a googletest program's own file, a failed case of that program naming it,
so the profile's row fails instead of reporting cases it did not run."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.suites import ctest, junit
from crosslane.suites.junit import Case, Outcome

pytestmark = [pytest.mark.hostile("11 test results that are links")]

PASSING = ('<testsuites><testsuite name="S"><testcase classname="S" name="{name}"/></testsuite></testsuites>')


def test_a_junit_file_that_is_a_link_is_refused_naming_it(tmp_path: Path) -> None:
    host_file = tmp_path / "elsewhere.xml"
    host_file.write_text(PASSING.format(name="forged"))
    results = tmp_path / "board" / "junit.xml"
    results.parent.mkdir()
    results.symlink_to(host_file)
    with pytest.raises(ValueError, match=f"{results}: a link, not a regular file"):
        junit.read(results)


def test_a_googletest_file_that_is_a_link_is_a_failed_case_naming_it(tmp_path: Path) -> None:
    gtest = tmp_path / "gtest"
    gtest.mkdir()
    (tmp_path / "forged.xml").write_text(PASSING.format(name="never_ran"))
    (gtest / "prog-0.xml").symlink_to(tmp_path / "forged.xml")
    (gtest / "other-0.xml").write_text(PASSING.format(name="ran"))
    cases = ctest.merge([Case("prog", Outcome.PASSED, 1.0), Case("other", Outcome.PASSED, 1.0)], gtest)
    assert [c.id for c in cases if c.outcome is Outcome.PASSED] == ["other/S.ran"]
    failed = [c for c in cases if c.outcome is Outcome.FAILED]
    assert [c.id for c in failed] == ["prog"] and "prog-0.xml: a link" in failed[0].message, cases
