"""What a GitHub-hosted runner has and act in host mode does not: setup-python's tool cache, the event that
started the run, and a HOME of its own (host mode runs in the real one; a job that caches `~/.cache/crosslane`
would save the user's whole cache)."""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Mapping
from pathlib import Path

from crosslane.process.runner import Runner

# The event kinds the workflow answers; the payload fields act and the workflow's expressions read.
EVENTS = ("push", "pull_request", "schedule", "workflow_dispatch")
REPOSITORY = "crosslane/crosslane"  # github.repository of an offline run (there is no GitHub to name it)


def seed_python(runner: Runner, tool_cache: Path, python: Path | None = None) -> str:
    """A Python setup-python finds in *tool_cache* (`Python/<version>/x64` and its `x64.complete` marker): a venv
    of the interpreter running crosslane (pip included: jobs install into it). Returns the version served."""
    base = python or Path(getattr(sys, "_base_executable", sys.executable))
    version = platform.python_version()
    folder = tool_cache / "Python" / version / "x64"
    marker = folder.with_name("x64.complete")
    if not marker.is_file():
        folder.parent.mkdir(parents=True, exist_ok=True)
        runner.run([base, "-m", "venv", "--clear", folder])
        marker.touch()
    return version


def event(kind: str, *, head: str, before: str = "", base: str = "",
          inputs: Mapping[str, str] | None = None) -> dict[str, object]:
    """The payload of a *kind* event on main at commit *head* (github.event in the workflow's expressions)."""
    repository = {"full_name": REPOSITORY, "name": REPOSITORY.split("/")[1], "default_branch": "main"}
    match kind:
        case "push":
            return {"ref": "refs/heads/main", "before": before or "0" * 40, "after": head, "repository": repository}
        case "pull_request":
            return {"number": 1, "repository": repository,
                    "pull_request": {"number": 1, "head": {"sha": head, "ref": "topic"},
                                     "base": {"sha": base or head, "ref": "main"}}}
        case "schedule":
            return {"schedule": "23 2 * * *", "repository": repository}
        case "workflow_dispatch":
            return {"ref": "refs/heads/main", "inputs": dict(inputs or {}), "repository": repository}
    raise ValueError(f"unknown event {kind!r} (known: {', '.join(EVENTS)})")


def write_event(path: Path, payload: Mapping[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
    return path
