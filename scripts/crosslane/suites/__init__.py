"""Upstream's own test suites (components.<c>.tests), built or installed for the target and run on its profiles.

A kind (registry.TEST_KINDS) is `run(ctx, arch, component, profiles) -> SuiteRun`: it makes what the suite needs
(a test build, a board with the wheel) and returns every case per profile. The stage (stage.py) judges them
(verdict.py), compares with the amd64 control and records each case in the build report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from crosslane.report import Row
from crosslane.suites.junit import Case


def no_missing_data(case: Case) -> str | None:
    return None


@dataclass(frozen=True, kw_only=True)
class SuiteRun:
    """What running a suite gave: rows of what it took (a build, an install; a FAIL there means no cases), the
    cases of each profile that ran, and how to tell a case that failed for lack of a staged data file."""

    rows: tuple[Row, ...] = ()
    cases: Mapping[str, tuple[Case, ...]] = field(default_factory=dict)
    missing_data: Callable[[Case], str | None] = no_missing_data
