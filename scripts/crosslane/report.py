"""The summary every command ends with: component × arch × step → PASS/FAIL/SKIP and the reason."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path


class Verdict(enum.StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIP = "SKIP"


@dataclass(frozen=True)
class Row:
    component: str
    arch: str
    step: str
    verdict: Verdict
    reason: str = ""


def table(rows: Iterable[Row]) -> str:
    rows = list(rows)
    header = ("component", "arch", "step", "verdict", "reason")
    cells = [header] + [(r.component, r.arch, r.step, r.verdict.value, r.reason) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    lines = []
    for index, cell in enumerate(cells):
        lines.append("  ".join(c.ljust(w) for c, w in zip(cell[:4], widths, strict=True)) + "  " + cell[4])
        if index == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 6)
    return "\n".join(line.rstrip() for line in lines)


def markdown(rows: Iterable[Row]) -> str:
    lines = ["| component | arch | step | verdict | reason |", "|---|---|---|---|---|"]
    lines += [f"| {r.component} | {r.arch} | {r.step} | {r.verdict.value} | {r.reason.replace('|', '/')} |"
              for r in rows]
    return "\n".join(lines) + "\n"


def to_json(rows: Iterable[Row]) -> str:
    return json.dumps([{**asdict(r), "verdict": r.verdict.value} for r in rows], indent=1)


def failed(rows: Iterable[Row]) -> list[Row]:
    return [r for r in rows if r.verdict is Verdict.FAIL]


def write_json(rows: Iterable[Row], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_json(rows) + "\n")
