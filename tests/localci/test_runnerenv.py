"""What act's host mode lacks and the check makes: setup-python's tool cache and the events' payloads."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

import pytest

from crosslane.localci import runnerenv
from crosslane.log import Log
from crosslane.process.runner import Runner


@pytest.mark.spawns
def test_the_tool_cache_serves_this_python_with_pip_and_the_marker(tmp_path: Path) -> None:
    runner = Runner(Log())
    version = runnerenv.seed_python(runner, tmp_path)
    folder = tmp_path / "Python" / version / "x64"
    assert version == platform.python_version() and (tmp_path / "Python" / version / "x64.complete").is_file()
    ran = subprocess.run([folder / "bin" / "python", "-m", "pip", "--version"], capture_output=True, text=True,
                         check=True)
    assert str(folder) in ran.stdout
    runner.commands.clear()
    assert runnerenv.seed_python(runner, tmp_path) == version and not runner.commands  # seeded once


def test_each_event_carries_what_the_workflow_reads() -> None:
    head, parent = "b" * 40, "a" * 40
    push = runnerenv.event("push", head=head, before=parent)
    assert push["ref"] == "refs/heads/main" and push["after"] == head and push["before"] == parent
    pull = runnerenv.event("pull_request", head=head, base=parent)
    assert pull["pull_request"] == {"number": 1, "head": {"sha": head, "ref": "topic"},
                                    "base": {"sha": parent, "ref": "main"}}
    assert runnerenv.event("workflow_dispatch", head=head, inputs={"arch": "riscv64"})["inputs"] == {"arch": "riscv64"}
    assert "schedule" in runnerenv.event("schedule", head=head)
    with pytest.raises(ValueError, match="unknown event 'release'"):
        runnerenv.event("release", head=head)
