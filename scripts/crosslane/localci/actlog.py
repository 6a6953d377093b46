"""act's JSON log (`act --json`), read job by job: which legs ran, each step's result, the outputs steps set.

act reports one result per job, shared by its matrix legs (a leg whose steps all passed ends "Job failed" when a
sibling failed), so a leg passes only on its own evidence: it reached "Complete job", none of its steps failed,
act logged no error of its own for it (an action that would not load, an `if:` it could not evaluate: failures
that write no step result), and its job's result is success — or failure with a sibling leg that failed on its own
evidence. A job act skipped (its `if:` false) writes nothing at info level.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

MATRIX_SUFFIX = re.compile(r"-\d+$")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
SAID = 3  # lines kept of what the current step printed
COMPLETE = ["--complete-job"]


@dataclass
class Leg:
    """One run of one job: a matrix leg, or the job itself."""

    job_id: str
    name: str  # the job's name as the workflow renders it ("build riscv64 canary")
    matrix: dict[str, object]
    failed_steps: list[str] = field(default_factory=list)
    completed: bool = False
    result: str = ""  # the job's result as act logged it for this leg ("success", "failure")
    engine_errors: list[str] = field(default_factory=list)  # act's own error lines ("exit status 1", a bad `if:`)
    outputs: dict[str, str] = field(default_factory=dict)  # "<step id>.<name>" → what the step set
    start: datetime | None = None
    end: datetime | None = None
    # What each step printed, by (stage, step id): act may log a step's result before the last of its output.
    _errors: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    _said: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    _first_failed: tuple[str, str] | None = None

    @property
    def evidence(self) -> list[str]:
        """The first failed step's ::error:: lines, else the last line it printed."""
        if self._first_failed is None:
            return []
        return [e for e in self._errors.get(self._first_failed, []) if e] or self._said.get(self._first_failed, [])[-1:]

    @property
    def own_failure(self) -> bool:
        """Positive evidence that this leg failed: a failed step or an error act logged for it."""
        return bool(self.failed_steps or self.engine_errors)

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds() if self.start and self.end else 0.0

    def take(self, record: dict[str, object], message: str) -> str | None:
        """Take one record of this leg; return the label and result of the step it finished, if it did."""
        step = (str(record.get("stage", "")), json.dumps(record.get("stepID") or record.get("stepid")))
        command = record.get("command")
        if command == "set-output" and isinstance(record.get("name"), str):
            ids = record.get("stepID")
            step_id = str(ids[0]) if isinstance(ids, list) and ids else ""
            self.outputs[f"{step_id}.{record['name']}"] = str(record.get("arg", ""))
        if command == "error":
            self._errors.setdefault(step, []).append(str(record.get("arg", "")).strip())
        elif record.get("level") in ("error", "fatal") and command is None and message:
            self.engine_errors.append(message)
        if record.get("raw_output") and message:
            self._said[step] = [*self._said.get(step, [])[-(SAID - 1):], ANSI.sub("", message)]
        result = record.get("stepResult")
        if result == "failure":
            if self._first_failed is None:
                self._first_failed = step
            self.failed_steps.append(step_label(record))
        if result == "success" and record.get("stepid") == COMPLETE and "stage" not in record:
            self.completed = True
        if isinstance(record.get("jobResult"), str):
            self.result = str(record["jobResult"])
        return f"{step_label(record)}: {result}" if isinstance(result, str) and "stage" in record else None


@dataclass(frozen=True)
class Event:
    """What a line finished: a step of a leg (its label and result), or the leg itself (step None)."""

    leg: Leg
    step: str | None


@dataclass
class ActLog:
    """Everything one act run logged."""

    legs: dict[tuple[str, str], Leg] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # error lines outside any job (planning, the engine)

    def feed(self, line: str) -> Event | None:
        """Take one line of act's output; return the step or job it finished, if it did."""
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # not a record of act's (nested too deeply: not one either)
            if line.startswith("Error:"):
                self.errors.append(line.removeprefix("Error:").strip())
            return None
        if not isinstance(record, dict):
            return None
        message = ANSI.sub("", str(record.get("msg", ""))).strip()
        if "jobID" not in record:
            if record.get("level") in ("error", "fatal"):
                self.errors.append(message)
            return None
        leg = self._leg(record)
        when = _time(record.get("time"))
        if when is not None:
            leg.start = leg.start or when
            leg.end = when
        step = leg.take(record, message)
        if "jobResult" in record:
            return Event(leg, None)
        return Event(leg, step) if step else None

    def _leg(self, record: dict[str, object]) -> Leg:
        matrix = record.get("matrix")
        if not isinstance(matrix, dict):
            matrix = {}
        key = (str(record["jobID"]), json.dumps(matrix, sort_keys=True))
        if key not in self.legs:
            self.legs[key] = Leg(key[0], job_name(str(record.get("job", key[0]))), matrix)
        return self.legs[key]

    def of_job(self, job_id: str) -> list[Leg]:
        return [leg for leg in self.legs.values() if leg.job_id == job_id]

    def passed(self, leg: Leg) -> bool:
        if not leg.completed or leg.own_failure:
            return False
        if leg.result == "success":
            return True
        # act's one result per job: "failure" is this leg's too unless a sibling failed on its own evidence
        return leg.result == "failure" and any(o.own_failure for o in self.of_job(leg.job_id) if o is not leg)


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
        found = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    # act writes its zone; a line without one is read as UTC, so two times of a leg always subtract
    return found if found.tzinfo is not None else found.replace(tzinfo=timezone.utc)
