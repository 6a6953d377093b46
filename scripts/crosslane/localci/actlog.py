"""act's JSON log (`act --json`), read job by job: which legs ran, each step's result, the outputs steps set.

act reports one result per job, shared by its matrix legs (a leg whose steps all passed ends "Job failed" when a
sibling failed), so a leg's verdict is read from its own steps: failed if one of them failed, passed if it ran to
"Complete job" with none failed. A job act skipped (its `if:` false) writes nothing at info level.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime

MATRIX_SUFFIX = re.compile(r"-\d+$")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
SAID = 3


@dataclass
class Leg:
    """One run of one job: a matrix leg, or the job itself."""

    job_id: str
    name: str  # the job's name as the workflow renders it ("build riscv64 canary")
    matrix: dict[str, object]
    failed_steps: list[str] = field(default_factory=list)
    completed: bool = False
    outputs: dict[str, str] = field(default_factory=dict)  # what its steps set with set-output / $GITHUB_OUTPUT
    errors: list[str] = field(default_factory=list)  # ::error:: lines, the evidence of a failure
    said: list[str] = field(default_factory=list)  # the last lines its steps printed, when no ::error:: says why
    start: datetime | None = None
    end: datetime | None = None

    @property
    def passed(self) -> bool:
        return self.completed and not self.failed_steps

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds() if self.start and self.end else 0.0


@dataclass
class Run:
    """Everything one act run logged."""

    legs: dict[tuple[str, str], Leg] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # error lines outside any job (planning, the engine)

    def feed(self, line: str) -> Leg | None:
        """Take one line of act's output; return the leg it finished, if it did."""
        try:
            record = json.loads(line)
        except ValueError:
            if line.startswith("Error:"):
                self.errors.append(line.removeprefix("Error:").strip())
            return None
        if not isinstance(record, dict):
            return None
        message = str(record.get("msg", "")).strip()
        if "jobID" not in record:
            if record.get("level") in ("error", "fatal"):
                self.errors.append(message)
            return None
        leg = self._leg(record)
        when = _time(record.get("time"))
        if when is not None:
            leg.start = leg.start or when
            leg.end = when
        if record.get("command") == "set-output" and isinstance(record.get("name"), str):
            leg.outputs[record["name"]] = str(record.get("arg", ""))
        if record.get("raw_output") and message:
            leg.said = [*leg.said[-(SAID - 1):], ANSI.sub("", message)]
        if record.get("command") == "error":
            leg.errors.append(str(record.get("arg", "")).strip())
        result = record.get("stepResult")
        if result == "failure":
            leg.failed_steps.append(step_label(record))
        if result == "success" and record.get("step") == "Complete job":
            leg.completed = True
        return leg if "jobResult" in record else None

    def _leg(self, record: dict[str, object]) -> Leg:
        matrix = record.get("matrix") if isinstance(record.get("matrix"), dict) else {}
        assert isinstance(matrix, dict)
        key = (str(record["jobID"]), json.dumps(matrix, sort_keys=True))
        if key not in self.legs:
            self.legs[key] = Leg(key[0], job_name(str(record.get("job", key[0]))), matrix)
        return self.legs[key]

    def of_job(self, job_id: str) -> list[Leg]:
        return [leg for leg in self.legs.values() if leg.job_id == job_id]


def job_name(logged: str) -> str:
    """"ci/build riscv64 canary-1   " → "build riscv64 canary": act prefixes the workflow's name and suffixes the
    matrix leg's index."""
    name = logged.strip().partition("/")[2] or logged.strip()
    return MATRIX_SUFFIX.sub("", name).strip()


def step_label(record: dict[str, object]) -> str:
    """A step as a reader finds it in the workflow: its stage (Pre/Main/Post) and its name or first line."""
    step = str(record.get("step", "")).strip().splitlines()
    first = step[0] if step else "?"
    stage = str(record.get("stage", "")).strip()
    return f"{stage} {first[:100]}".strip()


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
