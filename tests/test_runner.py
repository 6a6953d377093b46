"""The runner with real tiny processes."""

from __future__ import annotations

import io
import sys
import threading
import time
from pathlib import Path

import pytest

from crosslane.errors import MissingPrerequisite, StepFailed, Terminated
from crosslane.log import Log
from crosslane.process.runner import Runner

pytestmark = pytest.mark.spawns


def runner(dry_run: bool = False) -> tuple[Runner, io.StringIO]:
    stream = io.StringIO()
    return Runner(Log(stream), dry_run=dry_run), stream


def test_runs_and_logs_quoted_command() -> None:
    r, stream = runner()
    result = r.run([sys.executable, "-c", "print('hello world')"])
    assert result.ok and result.output == "hello world"
    assert "-c 'print('\"'\"'hello world'\"'\"')'" in stream.getvalue()


def test_failure_carries_command_code_and_tail() -> None:
    r, _ = runner()
    with pytest.raises(StepFailed) as raised:
        r.run([sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"])
    assert "exited 3" in raised.value.message
    assert raised.value.detail == "boom"


def test_timeout_kills_the_whole_process_group() -> None:
    r, _ = runner()
    result = r.run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5, check=False)
    assert result.timed_out and not result.ok
    # A grandchild holding the output pipe must not keep the runner waiting.
    result = r.run(["bash", "-c", "sleep 20; echo done"], timeout=0.5, check=False)
    assert result.timed_out and result.seconds < 5


def test_env_diff_and_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIBRARY_PATH", "/target/lib")
    r, stream = runner()
    code = "import os; print(os.environ.get('LIBRARY_PATH'), os.environ.get('CC'))"
    result = r.run([sys.executable, "-c", code], env={"CC": "riscv64-linux-gnu-gcc"}, unset=["LIBRARY_PATH"])
    assert result.output == "None riscv64-linux-gnu-gcc"
    log = stream.getvalue()
    assert "env CC=riscv64-linux-gnu-gcc" in log and "env -u LIBRARY_PATH" in log


def test_dry_run_records_without_running(tmp_path: Path) -> None:
    r, _ = runner(dry_run=True)
    marker = tmp_path / "touched"
    r.run(["touch", str(marker)])
    assert not marker.exists()
    assert r.commands == [("touch", str(marker))]
    assert r.run([sys.executable, "-c", "print(1)"], probe=True).output == "1"


def test_which_missing_names_the_fix() -> None:
    r, _ = runner()
    with pytest.raises(MissingPrerequisite) as raised:
        r.which("no-such-tool-xyz", fix="invoke setup --arch riscv64")
    assert raised.value.one_line() == "no-such-tool-xyz not found; invoke setup --arch riscv64"
    with pytest.raises(MissingPrerequisite):
        r.run(["no-such-tool-xyz"])


@pytest.mark.spawns
def test_cancel_kills_the_commands_other_threads_run_and_refuses_new_ones() -> None:
    """An interrupted run (pipeline.run) cancels its runner: a smoke beside the builds stops now, not in minutes."""
    runner = Runner(Log(io.StringIO()))
    outcome: list[BaseException] = []

    def beside() -> None:
        try:
            runner.run(["sleep", "30"], timeout=60)
        except BaseException as exc:  # Terminated is what the test waits for
            outcome.append(exc)

    thread = threading.Thread(target=beside)
    started = time.monotonic()
    thread.start()
    while not runner._live and time.monotonic() - started < 10:
        time.sleep(0.01)
    runner.cancel()
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started < 5
    assert len(outcome) == 1 and isinstance(outcome[0], Terminated)
    with pytest.raises(Terminated):
        runner.run(["true"])
