"""Floors: per-arch minimum counts of components whose smoke passed; they only ever go up.

A component's smoke passed on an arch when it has at least one row of stage SMOKE and none of them failed
(parity rows against the control are not smokes: they do not count). `check` compares a report with
`[floors]`; `check_change` refuses lowering a floor, and raising one unless the two most recent recorded
runs (observations, one JSON file each) both reached the new value.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from crosslane.archs import Arch
from crosslane.errors import ConfigError
from crosslane.files import bounded
from crosslane.report import Check, Row, Scope, Verdict, rows_from

# What a component's smoke reported: its runs, and the claims about what they loaded.
SMOKE_CHECKS = frozenset({Check.SMOKE, Check.PROVENANCE})
RUNS_TO_RAISE = 2
OBSERVATION_LIMIT = 1 << 20


def passed_counts(rows: Iterable[Row]) -> dict[Arch, int]:
    verdicts: dict[tuple[Arch, str], list[Verdict]] = {}
    for r in rows:
        if r.check in SMOKE_CHECKS and isinstance(r.arch, Arch):
            verdicts.setdefault((r.arch, r.component), []).append(r.verdict)
    counts: dict[Arch, int] = {}
    for (arch, _), seen in verdicts.items():
        ok = Verdict.FAIL not in seen and Verdict.PASS in seen
        counts[arch] = counts.get(arch, 0) + int(ok)
    return counts


def load_report(path: Path) -> list[Row]:
    """The JSON a command writes with --json (a list of Row dicts), or `invoke report`'s merged report (an
    object whose "rows" is that list)."""
    fix = "pass the file --json wrote"
    data = bounded.read_json(path, error=ConfigError, fix=fix)
    if isinstance(data, dict):
        data = data.get("rows")
    try:
        return rows_from(data, path)
    except ValueError as exc:
        raise ConfigError(f"not a crosslane --json report: {exc}", fix=fix) from None


def check(floors: Mapping[Arch, int], rows: Iterable[Row]) -> list[Row]:
    counts = passed_counts(rows)
    result = []
    for arch, floor in sorted(floors.items()):
        count = counts.get(arch, 0)
        if count < floor:
            result.append(Row(component="floors", arch=arch, check=Check.FLOOR, verdict=Verdict.FAIL,
                              reason=f"{count} components passed their smoke, below the floor {floor} "
                              f"([floors] {arch} = {floor}); a regression: fix it, floors only go up"))
        else:
            result.append(Row(component="floors", arch=arch, check=Check.FLOOR, verdict=Verdict.PASS,
                              reason=f"{count} passed ≥ floor {floor}"))
    return result


@dataclass(frozen=True, kw_only=True)
class Observation:
    recorded: float
    counts: Mapping[Arch, int]


def record(rows: Iterable[Row], folder: Path, *, now: float | None = None) -> Path:
    """Store this run's passed counts as one observation file; return its path."""
    stamp = time.time() if now is None else now
    folder.mkdir(parents=True, exist_ok=True)
    counts = {a.value: n for a, n in sorted(passed_counts(rows).items())}
    path = folder / f"run-{stamp:.6f}.json"
    path.write_text(json.dumps({"recorded": stamp, "counts": counts}, indent=1) + "\n")
    return path


def observations(folder: Path) -> list[Observation]:
    """Recorded runs, oldest first; unreadable files are refused, not skipped."""
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        fix = "delete it or re-record"
        data = bounded.read_json(path, error=ConfigError, fix=fix, limit=OBSERVATION_LIMIT)
        try:
            if not isinstance(data, dict):
                raise TypeError("not a JSON object")
            counts = {Arch(k): int(v) for k, v in data["counts"].items()}
            found.append(Observation(recorded=float(data["recorded"]), counts=counts))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{path}: not a floors observation ({type(exc).__name__}: {exc})", fix=fix) from None
    return sorted(found, key=lambda o: o.recorded)


def check_change(old: Mapping[Arch, int], new: Mapping[Arch, int], seen: list[Observation]) -> list[str]:
    """Problems with moving [floors] from *old* to *new*; empty when the change is allowed."""
    problems = []
    for arch in sorted(set(old) | set(new)):
        before, after = old.get(arch, 0), new.get(arch, 0)
        if after < before:
            problems.append(f"[floors] {arch}: lowering {before} → {after} refused: floors only go up, a lower "
                            "count is a regression to fix, not a new normal")
        elif after > before:
            recent = [o.counts.get(arch, 0) for o in seen if arch in o.counts][-RUNS_TO_RAISE:]
            if len(recent) < RUNS_TO_RAISE or min(recent) < after:
                problems.append(f"[floors] {arch}: raising {before} → {after} needs the last {RUNS_TO_RAISE} "
                                f"recorded runs to reach {after}; they reached {recent or 'nothing recorded'}")
    return problems


def observations_dir(build_root: Path) -> Path:
    return build_root / "reports" / "observations"


def run(floors: Mapping[Arch, int], build_root: Path, *, report: Path | None = None, record_it: bool = False,
        previous: Mapping[Arch, int] | None = None) -> list[Row]:
    """`invoke floors`: check a report against [floors], optionally record it, optionally vet a floors change."""
    rows: list[Row] = []
    folder = observations_dir(build_root)
    if report is not None:
        report_rows = load_report(report)
        rows += check(floors, report_rows)
        if record_it:
            path = record(report_rows, folder)
            rows.append(Row(component="floors", arch=Scope.ALL, check=Check.FLOOR, verdict=Verdict.PASS,
                            reason=f"observation recorded: {path}", subject="record"))
    if previous is not None:
        problems = check_change(previous, floors, observations(folder))
        rows += [Row(component="floors", arch=Scope.ALL, check=Check.FLOOR, verdict=Verdict.FAIL, reason=p,
                     subject="floor-change") for p in problems]
        if not problems:
            rows.append(Row(component="floors", arch=Scope.ALL, check=Check.FLOOR, verdict=Verdict.PASS,
                            reason="floors change allowed", subject="floor-change"))
    return rows
