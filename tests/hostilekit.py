"""The hostile-input suite's kit: run a crosslane command as a user would (a real process, bounded by a timeout
that is itself a failure), and prove that it answered with one line and its exit code, printed no traceback and
changed nothing outside the build folder and the cache."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent
CASE_TIMEOUT = 90.0


@dataclass(frozen=True)
class Done:
    rc: int
    out: str

    @property
    def errors(self) -> list[str]:
        return [line for line in self.out.splitlines() if line.startswith("crosslane: error:")]


def invoke(*args: str, env: dict[str, str], timeout: float = 600) -> Done:
    """A real `invoke` process on the repository, with the real cache (its sysroots) and *env* over the environment."""
    done = subprocess.run([str(BIN / "invoke"), "--search-root", str(REPO), *args], cwd=REPO,
                          env={**os.environ, "CROSSLANE_NO_WAIT": "1", **env}, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                          timeout=timeout)
    return Done(done.returncode, done.stdout)


def build_canary(tmp_path: Path) -> dict[str, str]:
    """The canary built for riscv64 in a build folder of the test's own (the real cache's sysroot); its env."""
    env = {"CROSSLANE_BUILD_DIR": str(tmp_path / "build"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    done = invoke("build", "--arch", "riscv64", "--component", "canary", env=env)
    assert done.rc == 0, done.out
    return env


def snapshot(root: Path, skip: tuple[Path, ...]) -> dict[str, tuple[object, ...]]:
    """Every path under *root* but *skip*: kind, size, times and link text (a write anywhere shows)."""
    found: dict[str, tuple[object, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d not in skip]
        for name in dirnames + filenames:
            path = here / name
            st = path.lstat()
            link = os.readlink(path) if path.is_symlink() else ""
            found[str(path.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns, link)
    return found


def temp_leftovers(folder: Path) -> set[str]:
    return {name for name in os.listdir(folder) if name.startswith("crosslane")}


@dataclass
class Sandbox:
    """tmp_path laid out as a user's machine: work/build and work/cache are crosslane's; the rest must not change."""

    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def build(self) -> Path:
        return self.root / "work" / "build"

    @property
    def cache(self) -> Path:
        return self.root / "work" / "cache"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    @property
    def inputs(self) -> Path:
        return self.root / "inputs"

    @property
    def temp(self) -> Path:
        """The commands' TMPDIR: their own, so another process's temporary folders are not taken for theirs."""
        return self.root / "temp"

    def __post_init__(self) -> None:
        for folder in (self.build, self.cache, self.outside, self.inputs, self.temp):
            folder.mkdir(parents=True, exist_ok=True)
        (self.outside / "sentinel.txt").write_text("not yours\n")
        self.env = {**os.environ, "CROSSLANE_BUILD_DIR": str(self.build), "CROSSLANE_CACHE": str(self.cache),
                    "CROSSLANE_NO_WAIT": "1", "PYTHONUNBUFFERED": "1", "TMPDIR": str(self.temp), **self.env}
        self.env.pop("CROSSLANE_DEBUG", None)

    def invoke(self, *args: str, env: dict[str, str] | None = None, timeout: float = CASE_TIMEOUT) -> Done:
        try:
            done = subprocess.run([str(BIN / "invoke"), "--search-root", str(REPO), *args], cwd=REPO,
                                  env={**self.env, **(env or {})}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, errors="replace", timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"hang: invoke {' '.join(args)} did not return within {timeout} s") from exc
        return Done(done.returncode, done.stdout)

    def interrupted(self, sig: int, started: Callable[[], bool], *args: str) -> Done:
        """Run a command, send it *sig* once *started* says it is midway (a staging folder exists), and return
        how it ended; a command that ends before it could be interrupted, or prints a traceback, fails."""
        argv = [str(BIN / "invoke"), "--search-root", str(REPO), *args]
        with subprocess.Popen(argv, cwd=REPO, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) as run:
            deadline = time.monotonic() + 60
            while not started() and time.monotonic() < deadline and run.poll() is None:
                time.sleep(0.01)
            assert run.poll() is None, f"invoke {' '.join(args)} ended before it could be interrupted"
            run.send_signal(sig)
            out = run.communicate(timeout=60)[0]
        assert "Traceback" not in out, out
        return Done(run.returncode, out)

    def refused(self, rc: int, words: str, *args: str, env: dict[str, str] | None = None,
                before: Callable[[], None] | None = None) -> Done:
        """Run a command that must fail: exit *rc*, one error line holding *words*, no traceback, nothing outside
        work/build and work/cache changed (nor a crosslane-* folder left in the temp folder)."""
        skip = (self.build, self.cache, self.inputs, self.temp)
        seen, temps = snapshot(self.root, skip), temp_leftovers(self.temp)
        done = self.invoke(*args, env=env)
        assert "Traceback" not in done.out, done.out
        assert done.rc == rc, f"exit {done.rc}, not {rc}:\n{done.out}"
        assert len(done.errors) == 1, done.out
        assert words in done.errors[0], done.errors[0]
        assert snapshot(self.root, skip) == seen, "a write outside the build folder and the cache"
        assert temp_leftovers(self.temp) <= temps, temp_leftovers(self.temp) - temps
        return done


# --- packs -----------------------------------------------------------------------------------------------------

@dataclass
class Member:
    info: tarfile.TarInfo
    data: bytes = b""


def read_pack(path: Path) -> list[Member]:
    with tarfile.open(path, "r:gz") as tar:
        members = []
        for info in tar.getmembers():
            handle = tar.extractfile(info) if info.isreg() else None
            members.append(Member(info, handle.read() if handle else b""))
    return members


def manifest_of(members: list[Member]) -> dict[str, object]:
    head = json.loads(members[0].data)
    assert isinstance(head, dict)
    return head


def remanifest(members: list[Member], **changes: object) -> list[Member]:
    """The members with a manifest recomputed from them (so only the case's own defect remains)."""
    head = manifest_of(members)
    base = f"crosslane-pack/{head['arch']}/{head['component']}/"
    listed = []
    for m in members[1:]:
        rel = m.info.name.removeprefix(base).rstrip("/")
        kind = "file" if m.info.isreg() else "dir" if m.info.isdir() else "link" if m.info.issym() else ""
        if not kind:
            continue  # a hard link, device or FIFO: no manifest entry can describe it
        listed.append({"path": rel, "kind": kind, "size": len(m.data) if kind == "file" else 0,
                       "sha256": hashlib.sha256(m.data).hexdigest() if kind == "file" else "",
                       "target": m.info.linkname if kind == "link" else "", "mode": m.info.mode & 0o755})
    head = {**head, "members": listed, **changes}
    return [with_data(members[0], json.dumps(head).encode()), *members[1:]]


def with_data(member: Member, data: bytes) -> Member:
    info = tarfile.TarInfo(member.info.name)
    info.size, info.mode, info.type = len(data), member.info.mode, tarfile.REGTYPE
    return Member(info, data)


def entry(name: str, *, data: bytes | None = None, link: str | None = None, hard: str | None = None,
          kind: bytes | None = None, mode: int = 0o644) -> Member:
    info = tarfile.TarInfo(name)
    info.mode = mode
    if link is not None:
        info.type, info.linkname = tarfile.SYMTYPE, link
    elif hard is not None:
        info.type, info.linkname = tarfile.LNKTYPE, hard
    elif kind is not None:
        info.type = kind
    elif data is None:
        info.type = tarfile.DIRTYPE
    else:
        info.size = len(data)
    return Member(info, data or b"")


def write_pack(path: Path, members: list[Member], *, level: int = 6) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=level, format=tarfile.PAX_FORMAT) as tar:
        for m in members:
            tar.addfile(m.info, io.BytesIO(m.data) if m.info.isreg() else None)
    path.write_bytes(buffer.getvalue())
    return path
