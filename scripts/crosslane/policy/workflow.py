"""Rules a GitHub Actions workflow of this project keeps, read from the parsed workflow (`invoke consistency`).

Each was a defect an Actions engine showed (act, offline): what GitHub does with caches, concurrency groups,
`always()` and artifacts, not what the YAML seems to say.

  cache-per-leg     a leg of a per-component matrix saves its caches under keys naming its component: GitHub keeps
                    the first save of a key, so a key shared by every component of an arch keeps one leg's cache
                    and every other leg restores it.
  group-per-event   the concurrency group names the event: GitHub keeps one pending run per group, so a nightly
                    queued behind a push in a shared group is dropped by the next push.
  not-cancelled     `!cancelled()`, never `always()`: always() is true in a cancelled run too, so a run superseded
                    by cancel-in-progress keeps those jobs until GitHub kills them.
  root-decides      no `sudo` in a step (a runner that is root has none; .ci/as-root runs a command as root either
                    way) and no `|| true` (it hides the failure of what it follows).
  own-artifacts     a download names what its leg uses: a name, or a pattern naming the leg's matrix values; a
                    download of every artifact (no name, no pattern) or of every pack (`build-*`) in a matrix leg
                    moves every pack of the run to every leg.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from crosslane.report import Check, Row, Scope, Verdict

MATRIX_REF = re.compile(r"matrix\.(\w+)")
SUDO = re.compile(r"(^|[;&|(`]|\$\()\s*sudo\b", re.M)
OR_TRUE = re.compile(r"\|\|\s*true\b")


@dataclass(frozen=True, kw_only=True)
class Defect:
    job: str
    step: str  # the step's name, id or `uses`/first line; "" for the job itself
    rule: str
    message: str

    def where(self) -> str:
        return f"jobs.{self.job}" + (f" step '{self.step}'" if self.step else "")


def _text(value: object) -> str:
    return "" if value is None else str(value)


def step_label(step: Mapping[str, Any], index: int) -> str:
    for key in ("name", "id", "uses"):
        if step.get(key):
            return str(step[key])
    first = _text(step.get("run")).strip().splitlines()
    return f"#{index + 1} {first[0][:60]}" if first else f"#{index + 1}"


def _uses(step: Mapping[str, Any], action: str) -> bool:
    return _text(step.get("uses")).split("@", 1)[0] in (action, f"{action}/restore", f"{action}/save")


def _matrix_keys(job: Mapping[str, Any]) -> set[str]:
    """The matrix values a job's steps and name use (the matrix itself is often fromJSON of a plan's output)."""
    return set(MATRIX_REF.findall(repr(job)))


def steps(job: Mapping[str, Any]) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(index in the job's `steps:`, step) of each step that is a mapping."""
    steps = job.get("steps")
    for index, step in enumerate(steps if isinstance(steps, list) else []):
        if isinstance(step, Mapping):
            yield index, step


def cache_per_leg(name: str, job: Mapping[str, Any]) -> Iterator[Defect]:
    if "component" not in _matrix_keys(job):
        return
    for index, step in steps(job):
        if not _uses(step, "actions/cache"):
            continue
        key = _text((step.get("with") or {}).get("key"))
        if "matrix.component" not in key:
            yield Defect(job=name, step=step_label(step, index), rule="cache-per-leg",
                         message=f"cache key '{key}' is shared by every component of the matrix: key it by "
                                 "${{ matrix.component }} too (GitHub keeps the first save of a key)")


def group_per_event(workflow: Mapping[str, Any]) -> Iterator[Defect]:
    concurrency = workflow.get("concurrency")
    group = _text(concurrency.get("group") if isinstance(concurrency, Mapping) else concurrency)
    if group and "github.event_name" not in group:
        yield Defect(job="*", step="", rule="group-per-event",
                     message=f"concurrency group '{group}' is one for push, schedule and dispatch: name "
                             "${{ github.event_name }} in it (GitHub keeps one pending run per group)")


def not_cancelled(name: str, job: Mapping[str, Any]) -> Iterator[Defect]:
    places = [("", job.get("if"))] + [(step_label(step, index), step.get("if")) for index, step in steps(job)]
    for where, condition in places:
        if "always()" in _text(condition):
            yield Defect(job=name, step=where, rule="not-cancelled",
                         message=f"if: {_text(condition).strip()} is true in a cancelled run too: use !cancelled()")


def root_decides(name: str, job: Mapping[str, Any]) -> Iterator[Defect]:
    for index, step in steps(job):
        script = _text(step.get("run"))
        if SUDO.search(script):
            yield Defect(job=name, step=step_label(step, index), rule="root-decides",
                         message="runs sudo: a runner that is root has none; run it through .ci/as-root")
        if OR_TRUE.search(script):
            yield Defect(job=name, step=step_label(step, index), rule="root-decides",
                         message="'|| true' hides the failure of the command before it: test for the case that is fine")


def own_artifacts(name: str, job: Mapping[str, Any]) -> Iterator[Defect]:
    matrix = _matrix_keys(job)
    for index, step in steps(job):
        if not _uses(step, "actions/download-artifact"):
            continue
        given = step.get("with") or {}
        named, pattern = _text(given.get("name")), _text(given.get("pattern"))
        label = step_label(step, index)
        if not named and not pattern:
            yield Defect(job=name, step=label, rule="own-artifacts",
                         message="downloads every artifact of the run: name what it reads "
                                 "(a name, or a pattern such as reports-*)")
        elif pattern and matrix and not MATRIX_REF.search(pattern):
            yield Defect(job=name, step=label, rule="own-artifacts",
                         message=f"pattern '{pattern}' downloads every leg's artifacts into each leg: name this leg's "
                                 f"({', '.join(f'matrix.{k}' for k in sorted(matrix))}) in it")


def defects(workflow: Mapping[str, Any]) -> list[Defect]:
    """Every rule of the module docstring broken by *workflow* (a parsed workflow file)."""
    found = list(group_per_event(workflow))
    jobs = workflow.get("jobs")
    for name, job in (jobs.items() if isinstance(jobs, Mapping) else []):
        if isinstance(job, Mapping):
            for rule in (cache_per_leg, not_cancelled, root_decides, own_artifacts):
                found += rule(str(name), job)
    return found


STEP = "workflow"


def lint(root: Path) -> list[Row]:
    """`invoke consistency`'s rows for every workflow file under .github/workflows/: a FAIL per defect, naming
    the file, job, step and rule, or one PASS."""
    rows: list[Row] = []
    files = sorted((root / ".github" / "workflows").glob("*.y*ml"))
    for path in files:
        name = path.relative_to(root).as_posix()
        try:
            parsed = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            rows.append(Row(component=name, arch=Scope.ALL, check=Check.POLICY, verdict=Verdict.FAIL,
                            reason=f"{name}: not a readable workflow ({exc})"[:300], subject=STEP))
            continue
        rows += [Row(component=name, arch=Scope.ALL, check=Check.POLICY, verdict=Verdict.FAIL,
                     reason=f"{name}: {d.where()}: {d.rule}: {d.message}",
                     subject=STEP) for d in defects(parsed if isinstance(parsed, Mapping) else {})]
    return rows or [Row(component="workflows", arch=Scope.ALL, check=Check.POLICY, verdict=Verdict.PASS,
                        reason=f"{len(files)} workflow files keep the rules (caches per leg, a group per event, "
                        "!cancelled(), root without sudo, each leg's own artifacts)", subject=STEP)]
