"""The summary every command ends with: the rows as a table, Markdown and JSON, and reports merged from a folder."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from crosslane.errors import UsageError
from crosslane.files import bounded, userpaths
from crosslane.log import redact
from crosslane.report import REPORT_FIX, ROW_VERDICTS, Check, Row, Verdict, rows_from

MAX_CELL = 2000  # characters of a printed cell: a 20 MiB test name is not a 20 MiB row
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def shown(text: str, limit: int = MAX_CELL) -> str:
    """*text* as one printed cell: URL credentials redacted, control characters (a newline would start a line of
    its own: a forged row, a `::error` workflow command) written as escapes, and cut at *limit*."""
    text = CONTROL.sub(lambda m: repr(m.group(0))[1:-1], redact(text))
    return text if len(text) <= limit else f"{text[:limit]}… (+{len(text) - limit} characters)"


def table(rows: Iterable[Row]) -> str:
    rows = list(rows)
    header = ("component", "arch", "step", "verdict", "wall/cpu", "reason")
    cells = [header] + [(shown(r.component, 200), shown(str(r.arch), 40), shown(r.label, 200), r.verdict.value, r.time,
                         shown(r.reason)) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(5)]
    lines = []
    for index, cell in enumerate(cells):
        lines.append("  ".join(c.ljust(w) for c, w in zip(cell[:5], widths, strict=True)) + "  " + cell[5])
        if index == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 6)
    return "\n".join(line.rstrip() for line in lines)


def stage_table(totals: Iterable[tuple[str, float, float]]) -> str:
    """The run's stages: each one's wall and CPU seconds (children included), and the run's."""
    totals = list(totals)
    if not totals:
        return ""
    width = max(len(name) for name, _, _ in totals)
    lines = [f"{'stage'.ljust(width)}  {'wall':>9}  {'cpu':>9}", f"{'-' * width}  {'-' * 9}  {'-' * 9}"]
    lines += [f"{name.ljust(width)}  {wall:8.1f}s  {cpu:8.1f}s" for name, wall, cpu in totals]
    return "\n".join(lines)


def markdown(rows: Iterable[Row], stages: Iterable[tuple[str, float, float]] = ()) -> str:
    lines = ["| component | arch | step | verdict | wall/cpu | reason |", "|---|---|---|---|---|---|"]
    lines += [f"| {markdown_cell(r.component, 200)} | {markdown_cell(str(r.arch), 40)} | "
              f"{markdown_cell(r.label, 200)} | {r.verdict.value} | {r.time} | {markdown_cell(r.reason)} |"
              for r in rows]
    stages = list(stages)
    if stages:
        lines += ["", "| stage | wall | cpu |", "|---|---|---|"]
        lines += [f"| {markdown_cell(name, 80)} | {wall:.1f}s | {cpu:.1f}s |" for name, wall, cpu in stages]
    details = [redact(r.detail)[:20000] for r in rows if r.detail]
    return "\n".join(lines) + "\n" + "".join(f"\n{d}\n" for d in details)


def markdown_cell(text: str, limit: int = MAX_CELL) -> str:
    """A table cell of GitHub Markdown: nothing in it can close the cell, start a line, or be read as markup."""
    cell = shown(text, limit)
    for character in "\\|`*_[]<>#!~":
        cell = cell.replace(character, "\\" + character)
    return cell


def to_json(rows: Iterable[Row]) -> str:
    """The rows as JSON (URL credentials redacted: a report crosses jobs and is kept)."""
    entries = [{**asdict(r), "arch": str(r.arch), "verdict": r.verdict.value, "check": r.check.value} for r in rows]
    return redact(json.dumps(entries, indent=1))


def failed(rows: Iterable[Row]) -> list[Row]:
    return [r for r in rows if r.verdict is Verdict.FAIL]


def write_json(rows: Iterable[Row], path: Path) -> None:
    """The rows as a --json report at *path* (a user's: userpaths decides what may be replaced)."""
    userpaths.write_file("--json", path, to_json(rows) + "\n")


@dataclass(frozen=True, kw_only=True)
class Merged:
    """The reports of a folder as one: every row, duplicates once, and the reports they came from."""

    rows: list[Row]
    reports: list[Path]


def merge(folder: Path) -> Merged:
    """Every row of every report under *folder*. JSON files that are not reports are skipped (downloaded artifacts
    hold other JSON too); one that cannot be read at all (a FIFO, a device, a file too large to be a report) is an
    error, never a hang."""
    rows: list[Row] = []
    used: list[Path] = []
    for path in sorted(folder.rglob("*.json")):
        data = bounded.read_bytes(path, limit=bounded.JSON_LIMIT, error=UsageError, fix=REPORT_FIX)
        try:
            found = rows_from(bounded.parse_json(data, str(path), error=UsageError, fix=REPORT_FIX), path)
        except (UsageError, ValueError):
            continue
        used.append(path)
        rows += [r for r in found if r not in rows]
    return Merged(rows=rows, reports=used)


def counts_markdown(rows: Iterable[Row]) -> str:
    """Verdicts per check: the first thing a reviewer reads."""
    rows = list(rows)
    checks = sorted({r.check for r in rows}, key=list(Check).index)
    lines = ["| check | PASS | FAIL | SKIP |", "|---|---|---|---|"]
    for check in checks:
        count = {v: sum(1 for r in rows if r.check is check and r.verdict is v) for v in ROW_VERDICTS}
        lines.append(f"| {check.value} | {count[Verdict.PASS]} | {count[Verdict.FAIL]} | {count[Verdict.SKIP]} |")
    return "\n".join(lines) + "\n"
