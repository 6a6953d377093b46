"""`invoke report-diff OLD NEW`: what changed between two build reports (reports/build.py, same schema) — pins and
versions, verdicts, sizes and timings — one line per change, so a reviewer sees a bump's whole effect. Every field
taken from a report is printed as the summary prints a cell (summary.shown): a newline in a component, package or
test name would otherwise forge lines of its own, a verdict or a `::error::` workflow command on CI among them."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from crosslane.errors import UsageError
from crosslane.files import bounded
from crosslane.report import REPORT_FIX, Row
from crosslane.reports import build as buildreport
from crosslane.reports.build import SCHEMA
from crosslane.reports.summary import MAX_CELL, shown

# What identifies a component's build inputs in a report (the stamp's inputs) and the figures worth comparing.
PINS = ("source", "fetchcontent", "patches", "compiler", "cmake", "ninja", "sysroot", "wheel", "cmake_args")
FIGURES = ("seconds", "outputs", "bytes")
# Timings within this factor, or this many seconds, are noise (2 cores, other work alongside), not a change.
TIMING_NOISE = 1.25
TIMING_FLOOR = 5.0


def load(path: Path) -> dict[str, Any]:
    data = bounded.read_json(path, error=UsageError, fix=REPORT_FIX)
    if isinstance(data, list):
        raise UsageError(f"{path}: a --json row list, not a build report",
                         fix="pass build/reports/report-<arch>.json or what invoke report wrote")
    if not isinstance(data, dict) or data.get("schema", SCHEMA) != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else None
        raise UsageError(f"{path}: report schema {found}, this crosslane reads schema {SCHEMA}",
                         fix="compare reports written by the same crosslane schema")
    buildreport.check_shape(data, path)
    _rows(data, path)
    return data


def _show(value: object, limit: int = MAX_CELL) -> str:
    """A report's value as one printed field: control characters escaped, cut at *limit*."""
    return shown(json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value), limit)


def _project(data: Mapping[str, Any]) -> str | None:
    """The checkout a report was written in (the folder of its versions.toml)."""
    config = data.get("config")
    return str(Path(config).parent) if isinstance(config, str) and config.startswith("/") else None


def _pin(value: object, root: str | None) -> str:
    """*value* as shown, with its report's checkout written <project>: two clones' reports differ in their paths
    (the toolchain file, the build folder in cmake_args), which is not a change of what was built."""
    text = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
    # Not cut: two pins alike in their first MAX_CELL characters must still show what changed.
    return shown(text.replace(f"{root}/", "<project>/") if root and root != "/" else text, sys.maxsize)


def _components(data: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {f"{c.get('component')}@{c.get('arch')}": c for c in data.get("components") or [] if isinstance(c, dict)}


def _rows(data: Mapping[str, Any], path: Path | None = None) -> dict[str, str]:
    """Each row's verdict by what identifies it (component, arch and the fields its label is made of)."""
    try:
        rows = [Row.from_dict(entry, index) for index, entry in enumerate(data.get("rows") or [])]
    except ValueError as exc:
        raise UsageError(f"{path or 'report'}: rows: {exc}", fix="pass a report crosslane wrote, unedited") from None
    return {f"{r.component} {r.arch} {r.label}": r.verdict.value for r in rows}


def diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    if old.get("tools") != new.get("tools"):
        lines.append(f"tools: {_show(old.get('tools'))} → {_show(new.get('tools'))}")
    old_roots, new_roots = old.get("sysroots") or {}, new.get("sysroots") or {}
    for arch in sorted(set(old_roots) | set(new_roots)):
        before = (old_roots.get(arch) or {}).get("versions") or {}
        after = (new_roots.get(arch) or {}).get("versions") or {}
        for package in sorted(set(before) | set(after)):
            if before.get(package) != after.get(package):
                lines.append(f"sysroot {_show(arch)} {_show(package)}: {_show(before.get(package, '—'))} → "
                             f"{_show(after.get(package, '—'))}")
    old_parts, new_parts = _components(old), _components(new)
    old_root, new_root = _project(old), _project(new)
    for name in sorted(set(old_parts) | set(new_parts)):
        if name not in new_parts or name not in old_parts:
            lines.append(f"component {_show(name)}: {'removed' if name not in new_parts else 'added'}")
            continue
        before, after = old_parts[name], new_parts[name]
        for key in PINS:
            was, now = _pin(before.get(key, "—"), old_root), _pin(after.get(key, "—"), new_root)
            if was != now:
                lines.append(f"{key} {_show(name)}: {was} → {now}")
        for key in FIGURES:
            a, b = before.get(key), after.get(key)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a != b:
                if key == "seconds" and (abs(a - b) < TIMING_FLOOR or max(a, b) <= TIMING_NOISE * min(a, b)):
                    continue
                lines.append(f"{key} {_show(name)}: {a} → {b}")
    lines += _test_changes(old, new)
    old_rows, new_rows = _rows(old), _rows(new)
    for key in sorted(set(old_rows) | set(new_rows)):
        if old_rows.get(key) != new_rows.get(key):
            lines.append(f"verdict {_show(key)}: {old_rows.get(key, '—')} → {new_rows.get(key, '—')}")
    return lines + _time_changes(old, new)


TIME_CHANGES_SHOWN = 10


def _times(data: Mapping[str, Any]) -> dict[str, float]:
    """Each measured row's wall seconds, by what identifies it (as _rows)."""
    rows = [Row.from_dict(entry, index) for index, entry in enumerate(data.get("rows") or [])]
    return {f"{r.component} {r.arch} {r.label}": r.wall for r in rows if r.wall}


def _time_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The rows whose wall time changed most (beyond noise: TIMING_NOISE and TIMING_FLOOR), largest first."""
    before, after = _times(old), _times(new)
    changed = [(abs(after[k] - before[k]), k) for k in set(before) & set(after)
               if abs(after[k] - before[k]) >= TIMING_FLOOR
               and max(after[k], before[k]) > TIMING_NOISE * min(after[k], before[k])]
    changed.sort(key=lambda item: (-item[0], item[1]))
    lines = [f"time {_show(k)}: {before[k]:.1f}s → {after[k]:.1f}s" for _, k in changed[:TIME_CHANGES_SHOWN]]
    if len(changed) > TIME_CHANGES_SHOWN:
        lines.append(f"time: {len(changed) - TIME_CHANGES_SHOWN} more rows changed beyond noise")
    return lines


def _cases(data: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Each upstream suite (component@arch/profile) → its cases' outcomes by id."""
    return {f"{t['component']}@{t['arch']}/{t['profile']}": {str(c["id"]): str(c["outcome"]) for c in t["cases"]}
            for t in data.get("tests") or []}


def _test_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Cases whose outcome changed, one line each; cases a suite gained or lost, counted."""
    lines = []
    before, after = _cases(old), _cases(new)
    for suite in sorted(set(before) | set(after)):
        if suite not in before or suite not in after:
            count = len(after.get(suite) or before.get(suite) or {})
            lines.append(f"tests {_show(suite)}: {'added' if suite in after else 'removed'} ({count} cases)")
            continue
        a, b = before[suite], after[suite]
        lines += [f"test {_show(suite)} {_show(case)}: {_show(a[case])} → {_show(b[case])}"
                  for case in sorted(set(a) & set(b)) if a[case] != b[case]]
        gained, lost = len(set(b) - set(a)), len(set(a) - set(b))
        if gained or lost:
            lines.append(f"tests {_show(suite)}: {gained} cases added, {lost} removed")
    return lines
