"""Helpers for the source and patch tests: a throwaway versions.toml, patches made in Python, tree hashes."""

from __future__ import annotations

import difflib
import hashlib
import io
import subprocess
import tarfile
from pathlib import Path

from crosslane import config as config_mod
from crosslane import stamps
from crosslane.context import Context
from crosslane.log import Log
from crosslane.runner import Runner
from crosslane_helpers import versions_header

BASE = versions_header(riscv64_toolchain="gcc")


def write_config(root: Path, components: str) -> config_mod.Config:
    path = root / "versions.toml"
    text = BASE + components
    path.write_text(text)
    return config_mod.parse(text, path, root)


def context(cfg: config_mod.Config) -> Context:
    return Context(cfg, Runner(Log()))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree_hash(root: Path) -> str:
    return stamps.tree_digest(root, ignore=())


def diff(name: str, before: bytes, after: bytes, context_lines: int = 3) -> bytes:
    """A -p1 unified diff of one file, byte-exact (CRLF lines keep their CR)."""
    old = before.decode().splitlines(keepends=True)
    new = after.decode().splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, f"a/{name}", f"b/{name}", n=context_lines)
    return "".join(lines).encode()


def write_patch(root: Path, rel: str, data: bytes) -> str:
    """Write patches/<rel>; return its sha256."""
    path = root / "patches" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return sha256(data)


def patch_entry(rel: str, digest: str, arches: list[str] | None = None) -> str:
    when = f", when = {{ arch = {arches!r} }}".replace("'", '"') if arches else ""
    return f'{{ path = "{rel}", sha256 = "{digest}"{when} }}'


def tarball(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return path


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "core.autocrlf=false", "-C", str(repo),
                           *args], capture_output=True, text=True, env=env, check=True, timeout=60)
    return done.stdout.strip()
