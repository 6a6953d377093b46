"""Mutation fuzzing of the report readers (fixed seeds; `nox -s reliability` runs 20 times as many rounds): a
report, once mutated in its bytes or its structure, is read by report-diff, report, floors and the Markdown writer,
which either work or raise crosslane's own one-line error; nothing else escapes."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from crosslane.errors import CrosslaneError
from crosslane.policy import floors
from crosslane.reports import build as buildreport
from crosslane.reports import diff as reportdiff
from crosslane.reports import summary
from test_hostile_reports import GOOD

pytestmark = [pytest.mark.hostile("reports")]

ROUNDS = int(os.environ.get("CROSSLANE_FUZZ_FACTOR", "1"))
ODD_VALUES: list[object] = [None, 0, -1, 1e308, True, "", "x" * 300, [], {}, [[[]]], {"rows": []}, ["PASS"],
                            {"component": 1}, "NOTICE"]


def structural(value: object, rng: random.Random) -> object:
    """*value* with one node somewhere replaced by an odd value, dropped or duplicated."""
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(list(value))
        changed = dict(value)
        match rng.randrange(3):
            case 0:
                changed[key] = structural(value[key], rng)
            case 1:
                del changed[key]
            case _:
                changed[key] = rng.choice(ODD_VALUES)
        return changed
    if isinstance(value, list) and value and rng.random() < 0.7:
        index = rng.randrange(len(value))
        changed_list = list(value)
        changed_list[index] = structural(value[index], rng) if rng.random() < 0.5 else rng.choice(ODD_VALUES)
        return changed_list
    return rng.choice(ODD_VALUES)


def byte_level(data: bytes, rng: random.Random) -> bytes:
    raw = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        spot = rng.randrange(len(raw))
        match rng.randrange(3):
            case 0:
                raw[spot] = rng.choice(b'{}[],:"0123456789eE.-\\ntfn\xff')
            case 1:
                del raw[spot:spot + rng.randint(1, 40)]
            case _:
                raw[spot:spot] = rng.choice([b"[" * 50, b"1e999", b"NaN", b'"\\ud800"', b"9" * 400])
    return bytes(raw)


def read_everywhere(path: Path, folder: Path) -> str:
    """Every reader on one file; the outcome's name ("read" or the error kind)."""
    outcomes = []
    for read in (reportdiff.load, floors.load_report):
        try:
            data = read(path)
            if read is reportdiff.load:
                assert isinstance(data, dict)
                reportdiff.diff(GOOD, data)
                buildreport.markdown(data)
            outcomes.append("read")
        except CrosslaneError as exc:
            assert "\n" not in exc.one_line()
            outcomes.append(type(exc).__name__)
    try:
        summary.merge(folder)
        buildreport.merge_facts(folder)
        outcomes.append("merged")
    except CrosslaneError as exc:
        outcomes.append(type(exc).__name__)
    return "/".join(outcomes)


@pytest.mark.parametrize("seed", range(6))
def test_mutated_reports_are_read_or_refused_in_one_line(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    folder = tmp_path / "jobs"
    folder.mkdir()
    path = folder / "report-riscv64.json"
    seen: set[str] = set()
    for _ in range(40 * ROUNDS):
        if rng.random() < 0.5:
            path.write_text(json.dumps(structural(GOOD, rng)))
        else:
            path.write_bytes(byte_level(json.dumps(GOOD).encode(), rng))
        seen.add(read_everywhere(path, folder))
    assert len(seen) > 1, seen  # the mutations reach more than one outcome
