"""A compile cache shared by runners (ccache remote_storage on a real redis server started here and stopped after):
runner A builds XNNPACK for riscv64 in a clean build folder with an empty local ccache, runner B the same in
another clean folder with another empty local ccache. Prints B's hit rate from the remote and B's build against
A's (the build step's own seconds, from each stamp). Debian's redis-server, installed here when missing (apt,
through crosslane's host setup: sudo when not root).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from common import BIN, Measure, run

# Compile-bound (~480 compiles, ~40 s cold on 2 cores): the configure step, which no compile cache serves, is a
# small part of it. With cpuinfo (27 compiles) configure is ~0.6 s of a 2.4 s build, and B could not reach a third.
COMPONENT = "xnnpack"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def redis_server() -> Iterator[str]:
    """A redis server on a free loopback port for the block (Debian's, as a team would run it), stopped after."""
    if shutil.which("redis-server") is None:
        from crosslane.host import hostsetup
        from crosslane.log import Log
        from crosslane.process.runner import Runner

        hostsetup.install(Runner(Log()), ("redis-server",))
    server_binary = shutil.which("redis-server")
    if server_binary is None:
        raise SystemExit("redis-server not found after installing it: apt-get install redis-server")
    port = free_port()
    with subprocess.Popen([server_binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                           "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as server:
        try:
            for _ in range(100):
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.1)
            else:
                raise SystemExit(f"redis-server did not listen on 127.0.0.1:{port} within 10 s")
            yield f"redis://127.0.0.1:{port}"
        finally:
            server.terminate()
            server.wait(timeout=30)


def runner_build(folder: Path, name: str, url: str) -> tuple[dict[str, int], float]:
    """(ccache counts, build seconds: the step's configure + compile + install) of `invoke build` of the component
    as a fresh runner."""
    env = {"CCACHE_DIR": str(folder / f"ccache-{name}"), "CROSSLANE_BUILD_DIR": str(folder / name),
           "CROSSLANE_CCACHE_REMOTE": url}
    run([BIN / "invoke", "build", "--arch", "riscv64", "--component", COMPONENT], env=env)
    facts = json.loads((folder / name / "riscv64" / COMPONENT / ".crosslane-stamp.json").read_text())["facts"]
    return {k: int(v) for k, v in facts["ccache"].items()}, float(sum(facts["phases"].values()))


def run_bench() -> list[Measure]:
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-ccache-") as tmp, redis_server() as url:
        folder = Path(tmp)
        a_counts, a_seconds = runner_build(folder, "A", url)
        b_counts, b_seconds = runner_build(folder, "B", url)
    compiles = b_counts.get("hits", 0) + b_counts.get("misses", 0)
    remote = b_counts.get("remote_hits", 0)
    print(f"   runner A: {a_counts.get('misses', 0)} misses, {a_counts.get('remote_hits', 0)} remote hits; "
          f"runner B: {remote} of {compiles} compiles from the remote ({url})", flush=True)
    return [Measure(f"remote ccache, runner B ({COMPONENT} riscv64, empty local cache): remote hits vs compiles",
                    remote, compiles, "", ">= 0.90"),
            Measure(f"remote ccache: runner B's build vs runner A's ({COMPONENT} riscv64, clean folders)",
                    b_seconds, a_seconds, "s", "<= 0.33")]
