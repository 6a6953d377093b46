"""A compile cache shared by runners: ccache's remote storage on a real redis server started here.

Runner A builds XNNPACK for riscv64 in a clean build folder with an empty local ccache; runner B does the same in
another clean folder with another empty local ccache. B's hits come from the remote (>= 90 %) and its build step
takes at most a third of A's. With the server down the build still succeeds, on the local cache, and says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.cross, pytest.mark.network]

REPO = Path(__file__).resolve().parents[2]
INVOKE = Path(sys.executable).parent / "invoke"


sys.path.insert(0, str(REPO / "bench"))  # the bench's server helper: one way to start and stop it
from bench_ccache_remote import free_port, redis_server  # noqa: E402


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:  # installs Debian's redis-server when missing
        yield url


def runner_build(tmp_path: Path, name: str, url: str, component: str = "cpuinfo") -> tuple[dict[str, int], float, str]:
    """`invoke build` of *component* as a fresh runner: its own build folder and empty local cache; the build
    step's seconds are its phases' (configure, compile, install)."""
    env = {**os.environ, "CCACHE_DIR": str(tmp_path / f"ccache-{name}"), "CROSSLANE_BUILD_DIR": str(tmp_path / name),
           "CROSSLANE_CCACHE_REMOTE": url}
    done = subprocess.run([str(INVOKE), "build", "--arch", "riscv64", "--component", component], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:]
    facts = json.loads((tmp_path / name / "riscv64" / component / ".crosslane-stamp.json").read_text())["facts"]
    report = (tmp_path / name / "reports" / "report-riscv64.md").read_text()
    return facts["ccache"], float(sum(facts["phases"].values())), report


def test_runner_b_is_served_by_the_remote_cache(tmp_path: Path, redis_url: str) -> None:
    # XNNPACK: compile-bound (~480 compiles), so the configure step no compile cache serves is a small part.
    a_counts, a_seconds, _ = runner_build(tmp_path, "A", redis_url, "xnnpack")
    assert a_counts["misses"] > 100 and not a_counts.get("remote_hits")
    b_counts, b_seconds, report = runner_build(tmp_path, "B", redis_url, "xnnpack")
    compiles = b_counts["hits"] + b_counts["misses"]
    assert b_counts.get("remote_hits", 0) >= 0.9 * compiles, b_counts
    assert b_seconds <= a_seconds / 3, (a_seconds, b_seconds)
    assert f"{b_counts['remote_hits']} from the remote" in report


def test_with_the_server_down_the_build_uses_the_local_cache_and_says_so(tmp_path: Path) -> None:
    counts, _, report = runner_build(tmp_path, "C", f"redis://127.0.0.1:{free_port()}")
    assert counts["misses"] > 10 and counts.get("remote_errors", 0) > 0
    assert "remote errors: local cache only" in report


def test_a_url_that_is_no_remote_storage_is_refused_before_building(tmp_path: Path) -> None:
    env = {**os.environ, "CROSSLANE_BUILD_DIR": str(tmp_path / "D"), "CROSSLANE_CCACHE_REMOTE": "redis://x|y"}
    done = subprocess.run([str(INVOKE), "build", "--arch", "riscv64", "--component", "cpuinfo"], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "CROSSLANE_CCACHE_REMOTE is not a ccache remote storage URL (redis, 11 characters" in said
