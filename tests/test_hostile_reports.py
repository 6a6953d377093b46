"""The report readers under attack, through real invoke processes: `report-diff`, `report`, `floors --check`
and `floors --previous` (with its recorded observations). Every case: its exit code and one error line, no
traceback, no hang on a FIFO or a device, nothing written outside the build folder and the cache."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from crosslane.reports.build import SCHEMA
from hostilekit import REPO, Sandbox

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("reports")]

ROW = {"component": "canary", "arch": "riscv64", "check": "smoke", "verdict": "PASS", "reason": "ok",
       "subject": "cli", "profile": "rvv128"}
COMPONENT = {"component": "canary", "arch": "riscv64", "source": "tree:abc", "seconds": 3.5,
             "patches": [{"patch": "p.patch", "state": "APPLIED", "sha256": "a" * 64}], "ccache": {"hits": 1}}
GOOD = {"schema": SCHEMA, "generated": "2026-12-01T00:00:00Z", "tools": {"cmake": "3.31.6"},
        "sysroots": {"riscv64": {"suite": "forky", "key": "k", "versions": {"libc6": "2.43"}}},
        "components": [COMPONENT], "asserted": [{"what": "x", "reason": "y"}], "rows": [ROW]}


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


def good(box: Sandbox) -> Path:
    path = box.inputs / "old.json"
    path.write_text(json.dumps(GOOD))
    return path


def edited(change: Callable[[dict[str, object]], None]) -> bytes:
    data = json.loads(json.dumps(GOOD))
    change(data)
    return json.dumps(data).encode()


def sparse(size: int) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        with path.open("wb") as handle:
            handle.truncate(size)
    return make


def text(data: bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.write_bytes(data)
    return make


# What a reader is given: made at a path, then the words its one error line must hold.
SPECIAL: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (lambda p: os.mkfifo(p), "a FIFO"),
    "dev-zero": (lambda p: p.symlink_to("/dev/zero"), "a device"),
    "folder": (lambda p: p.mkdir(), "a folder"),
    "missing": (lambda p: None, "cannot read"),
    "huge": (sparse(65 << 20), "larger than 64 MiB"),
    "deep": (text(b"[" * 200_000 + b"]" * 200_000), "nested too deeply"),
    "not-utf8": (text(b'{"schema": "\xff\xfe"}'), "not valid JSON"),
    "nan": (text(b'{"schema": NaN}'), "not valid JSON"),
    "infinite": (text(b'{"schema": 1e999}'), "not finite"),
    "huge-int": (text(b'{"schema": ' + b"1" * 5000 + b"}"), "not valid JSON"),
    "big-int": (text(b'{"schema": ' + b"1" * 400 + b"}"), "beyond 64 bits"),  # a float would overflow
    "truncated": (text(json.dumps(GOOD).encode()[:-7]), "not valid JSON"),
}

SHAPES: dict[str, tuple[bytes, str]] = {
    "row-list": (json.dumps([ROW]).encode(), "a --json row list"),
    "schema-1": (edited(lambda d: d.update(schema=1)), "report schema 1"),
    "a-string": (b'"report"', "report schema None"),
    "sysroots-list": (edited(lambda d: d.update(sysroots=["riscv64"])), "'sysroots'"),
    "sysroot-entry-text": (edited(lambda d: d.update(sysroots={"riscv64": "forky"})), "'sysroots'"),
    "sysroot-versions-list": (edited(lambda d: d.update(sysroots={"riscv64": {"versions": ["libc6"]}})),
                              "'sysroots'"),
    "components-dict": (edited(lambda d: d.update(components={"canary": {}})), "'components'"),
    "component-text": (edited(lambda d: d.update(components=["canary"])), "'components'"),
    "component-no-arch": (edited(lambda d: d.update(components=[{"component": "canary"}])), "'components'"),
    "patches-text": (edited(lambda d: d.update(components=[{**COMPONENT, "patches": "p.patch"}])), "'components'"),
    "patch-no-digest": (edited(lambda d: d.update(components=[{**COMPONENT, "patches": [{"patch": "p",
                                                                                         "state": "APPLIED"}]}])),
                        "'components'"),
    "ccache-list": (edited(lambda d: d.update(components=[{**COMPONENT, "ccache": [1]}])), "'components'"),
    "asserted-text": (edited(lambda d: d.update(asserted="none")), "'asserted'"),
    "claim-no-reason": (edited(lambda d: d.update(asserted=[{"what": "x"}])), "'asserted'"),
    "rows-dict": (edited(lambda d: d.update(rows={"a": ROW})), "'rows'"),
    "row-notice": (edited(lambda d: d.update(rows=[{**ROW, "verdict": "NOTICE"}])), "PASS, FAIL or SKIP"),
    "row-unknown-check": (edited(lambda d: d.update(rows=[{**ROW, "check": "vibes"}])), "'vibes'"),
    "row-number-component": (edited(lambda d: d.update(rows=[{**ROW, "component": 7}])), "lacks the text fields"),
    "row-text": (edited(lambda d: d.update(rows=["PASS"])), "lacks the text fields"),
}


@pytest.mark.parametrize("case", list(SPECIAL))
def test_report_diff_reads_nothing_it_cannot_bound(box: Sandbox, case: str) -> None:
    make, words = SPECIAL[case]
    path = box.inputs / "new.json"
    make(path)
    box.refused(2, words, "report-diff", str(good(box)), str(path))


@pytest.mark.parametrize("case", list(SHAPES))
def test_report_diff_refuses_a_report_of_the_wrong_shape(box: Sandbox, case: str) -> None:
    data, words = SHAPES[case]
    path = box.inputs / "new.json"
    path.write_bytes(data)
    box.refused(2, words, "report-diff", str(good(box)), str(path))


def test_report_diff_of_two_good_reports_still_works(box: Sandbox) -> None:
    new = box.inputs / "new.json"
    new.write_bytes(edited(lambda d: d.update(rows=[{**ROW, "verdict": "FAIL"}])))
    done = box.invoke("report-diff", str(good(box)), str(new))
    assert done.rc == 0 and "verdict canary riscv64 cli@rvv128: PASS → FAIL" in done.out, done.out


def test_a_lone_surrogate_in_a_row_is_printed_escaped_by_both_readers(box: Sandbox) -> None:
    new = box.inputs / "new.json"
    new.write_bytes(edited(lambda d: d.update(rows=[{**ROW, "component": "\ud800", "profile": "\udfff"}])))
    done = box.invoke("report-diff", str(good(box)), str(new))
    assert done.rc == 0 and "verdict \\ud800 riscv64" in done.out, done.out
    folder = box.inputs / "downloaded"
    (folder / "build-riscv64").mkdir(parents=True)
    (folder / "build-riscv64" / "rows.json").write_text(json.dumps([{**ROW, "component": "\ud800"}]))
    done = box.invoke("report", "--input", str(folder), "--output", str(box.build / "merged"))
    assert done.rc == 0, done.out
    assert "\\ud800" in (box.build / "merged.md").read_text()


FORGED = "x\nverdict canary riscv64 smoke: FAIL → PASS\n::error::forged"
SUITE = {"component": "canary", "arch": "riscv64", "profile": "rvv128", "cases": [{"id": "t1", "outcome": "passed"}]}


def suite_with(case: dict[str, str]) -> Callable[[dict[str, object]], None]:
    return lambda d: d.update(tests=[{**SUITE, "cases": [case]}])


# Where a report carries the forging text: (the old report's change, the new report's change).
FORGERIES: dict[str, tuple[Callable[[dict[str, object]], None], Callable[[dict[str, object]], None]]] = {
    "component": (lambda d: None, lambda d: d.update(components=[COMPONENT, {**COMPONENT, "component": FORGED}])),
    "pin": (lambda d: None, lambda d: d.update(components=[{**COMPONENT, "source": FORGED}])),
    "sysroot-arch": (lambda d: None, lambda d: d.update(sysroots={FORGED: {"versions": {"libc6": "2.43"}}})),
    "sysroot-package": (lambda d: None, lambda d: d.update(sysroots={"riscv64": {"versions": {FORGED: "1"}}})),
    "sysroot-version": (lambda d: None, lambda d: d.update(sysroots={"riscv64": {"versions": {"libc6": FORGED}}})),
    "row": (lambda d: None, lambda d: d.update(rows=[ROW, {**ROW, "component": FORGED}])),
    "row-time": (lambda d: d.update(rows=[{**ROW, "subject": FORGED, "wall": 10}]),
                 lambda d: d.update(rows=[{**ROW, "subject": FORGED, "wall": 100}])),
    "test-suite": (lambda d: None, lambda d: d.update(tests=[{**SUITE, "profile": FORGED}])),
    "test-id": (suite_with({"id": FORGED, "outcome": "passed"}), suite_with({"id": FORGED, "outcome": "failed"})),
    "test-outcome": (suite_with({"id": "t1", "outcome": "passed"}), suite_with({"id": "t1", "outcome": FORGED})),
}


@pytest.mark.hostile("report text in report-diff")
@pytest.mark.parametrize("case", list(FORGERIES))
def test_report_text_cannot_forge_a_report_diff_line(box: Sandbox, case: str) -> None:
    """A newline in any field a report carries is printed escaped, inside the one line that names the change: no
    forged verdict, no `::error::` workflow command."""
    old_change, new_change = FORGERIES[case]
    old, new = box.inputs / "old.json", box.inputs / "new.json"
    old.write_bytes(edited(old_change))
    new.write_bytes(edited(new_change))
    done = box.invoke("report-diff", str(old), str(new))
    assert done.rc == 0 and "Traceback" not in done.out, done.out
    lines = done.out.splitlines()
    assert not [line for line in lines if line.startswith(("::", "verdict canary riscv64 smoke:"))], done.out
    assert "x\\nverdict canary riscv64 smoke: FAIL → PASS\\n::error::forged" in done.out, done.out


def jobs(box: Sandbox) -> Path:
    folder = box.inputs / "downloaded"
    (folder / "build-riscv64").mkdir(parents=True)
    (folder / "build-riscv64" / "rows.json").write_text(json.dumps([ROW]))
    return folder


@pytest.mark.parametrize("case", ["fifo", "dev-zero", "huge"])
def test_report_input_holding_what_cannot_be_read(box: Sandbox, case: str) -> None:
    make, words = SPECIAL[case]
    folder = jobs(box)
    make(folder / "build-riscv64" / "x.json")
    box.refused(2, words, "report", "--input", str(folder), "--output", str(box.build / "merged"))


@pytest.mark.parametrize("case", ["sysroots-list", "component-text", "asserted-text", "claim-no-reason",
                                  "patch-no-digest"])
def test_report_input_with_a_build_report_of_the_wrong_shape(box: Sandbox, case: str) -> None:
    folder = jobs(box)
    (folder / "build-riscv64" / "report-riscv64.json").write_bytes(SHAPES[case][0])
    box.refused(2, SHAPES[case][1], "report", "--input", str(folder), "--output", str(box.build / "merged"))


def test_report_input_with_a_build_report_that_is_not_json(box: Sandbox) -> None:
    folder = jobs(box)
    (folder / "build-riscv64" / "report-riscv64.json").write_text("{")
    box.refused(2, "not valid JSON", "report", "--input", str(folder), "--output", str(box.build / "merged"))


@pytest.mark.parametrize("output", ["/", ".", "..", "folder"])
def test_report_output_must_be_a_prefix(box: Sandbox, output: str) -> None:
    where = str(box.build) if output == "folder" else output
    box.refused(2, "a path prefix names files", "report", "--input", str(jobs(box)), "--output", where)


@pytest.mark.parametrize("case", ["missing", "a-file"])
def test_report_input_must_be_a_folder(box: Sandbox, case: str) -> None:
    path = box.inputs / "nothing"
    if case == "a-file":
        path.write_text("[]")
    box.refused(2, "no such folder", "report", "--input", str(path), "--output", str(box.build / "merged"))


def test_report_merges_the_good_ones(box: Sandbox) -> None:
    folder = jobs(box)
    (folder / "build-riscv64" / "report-riscv64.json").write_text(json.dumps(GOOD))
    (folder / "other.json").write_text('{"not": "a report"}')
    done = box.invoke("report", "--input", str(folder), "--output", str(box.build / "merged"))
    assert done.rc == 0, done.out
    assert json.loads((box.build / "merged.json").read_text())["rows"][0]["component"] == "canary"


@pytest.mark.parametrize("case", ["fifo", "dev-zero", "folder", "missing", "huge", "deep", "nan", "infinite"])
def test_floors_check_reads_nothing_it_cannot_bound(box: Sandbox, case: str) -> None:
    make, words = SPECIAL[case]
    path = box.inputs / "rows.json"
    make(path)
    box.refused(2, words, "floors", "--check", str(path))


@pytest.mark.parametrize(("data", "words"), [
    (b'{"rows": {"a": 1}}', "a report is a JSON list of rows"),
    (b'{"no": "rows"}', "a report is a JSON list of rows"),
    (json.dumps([{**ROW, "verdict": "WARN"}]).encode(), "PASS, FAIL or SKIP"),
    (b"[1, 2]", "lacks the text fields"),
], ids=["rows-dict", "no-rows", "row-warn", "row-numbers"])
def test_floors_check_refuses_what_is_no_row_list(box: Sandbox, data: bytes, words: str) -> None:
    path = box.inputs / "rows.json"
    path.write_bytes(data)
    box.refused(2, words, "floors", "--check", str(path))


def previous(box: Sandbox) -> Path:
    path = box.inputs / "old-versions.toml"
    shutil.copy(REPO / "versions.toml", path)
    return path


@pytest.mark.parametrize(("data", "words"), [
    (b'{"recorded": 1, "counts": {"riscv64": 1e999}}', "not finite"),
    (b'{"recorded": 1, "counts": ["riscv64"]}', "not a floors observation"),
    (b'{"recorded": "yesterday", "counts": {}}', "not a floors observation"),
    (b'{"recorded": 1, "counts": {"mips": 1}}', "not a floors observation"),
    (b"[" * 200_000, "nested too deeply"),
    (b'{"recorded": 1, "counts": {"riscv64": ' + b"9" * 5000 + b"}}", "not valid JSON"),
], ids=["count-infinite", "counts-list", "recorded-text", "unknown-arch", "deep", "huge-int"])
def test_floors_previous_refuses_a_bad_observation(box: Sandbox, data: bytes, words: str) -> None:
    folder = box.build / "reports" / "observations"
    folder.mkdir(parents=True)
    (folder / "run-1.json").write_bytes(data)
    box.refused(2, words, "floors", "--previous", str(previous(box)))


@pytest.mark.parametrize("case", ["fifo", "dev-zero"])
def test_floors_observation_that_cannot_be_read(box: Sandbox, case: str) -> None:
    folder = box.build / "reports" / "observations"
    folder.mkdir(parents=True)
    SPECIAL[case][0](folder / "run-1.json")
    box.refused(2, SPECIAL[case][1], "floors", "--previous", str(previous(box)))


@pytest.mark.parametrize("case", ["fifo", "dev-zero", "missing", "huge"])
def test_floors_previous_config_that_cannot_be_read(box: Sandbox, case: str) -> None:
    make, words = SPECIAL[case]
    path = box.inputs / "old.toml"
    make(path)
    box.refused(2, words.replace("64 MiB", "1 MiB"), "floors", "--previous", str(path))
