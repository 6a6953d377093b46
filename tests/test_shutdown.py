"""The exit without the final collections, in a real interpreter: what still runs at exit, and what is frozen."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.spawns

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def run_child(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(SCRIPTS)})


def test_objects_are_frozen_before_shutdown_and_exit_handlers_still_run() -> None:
    # atexit runs its handlers last-registered first: the one registered before ours sees what ours did.
    child = run_child("""
        import atexit, gc, sys
        atexit.register(lambda: print("handler ran; frozen", gc.get_freeze_count() > 0, flush=True))
        from crosslane.shutdown import skip_final_collection
        skip_final_collection()
        sys.stdout.write("unflushed output")
    """)
    assert child.stdout == "unflushed outputhandler ran; frozen True\n"


def test_without_it_nothing_is_frozen_at_exit() -> None:
    child = run_child("""
        import atexit, gc
        atexit.register(lambda: print("frozen", gc.get_freeze_count() > 0))
    """)
    assert child.stdout == "frozen False\n"


def test_tasks_file_asks_for_it() -> None:
    child = run_child(f"""
        import atexit, gc, runpy, sys
        sys.argv = ["invoke"]
        atexit.register(lambda: print("frozen", gc.get_freeze_count() > 0))
        runpy.run_path({str(SCRIPTS.parent / "tasks.py")!r})
    """)
    assert child.stdout == "frozen True\n"
