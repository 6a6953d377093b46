"""Tool roots: host tools newer than the host's (forky's GCC 16 cross compilers, its GCC 15 for bare metal, qemu 11,
rustc/cargo), as a Debian root.

Debian 12 cannot install forky's compilers beside its own; Yocto's buildtools and uninative solve the same
problem by shipping a root of tools. Here a `[toolroots.<name>]` table names a suite and packages; `ensure`
makes the root once with mmdebstrap (apt's own resolver, the archive's signatures), keyed by its inputs, with a
manifest of every package and version; `command` turns an argv into one that runs inside it: a private mount
namespace (`unshare`), the build tree, cache and sources bound at their own paths, chroot (host/enter_root.py).
As root the namespace is the host's kernel's plain one; otherwise an unprivileged user namespace, where the
host allows it (`entry_mode` says which works, and preflight says how to fix it when neither does).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from crosslane.config import ToolRootSpec
from crosslane.errors import IntegrityError, MissingPrerequisite
from crosslane.files import atomic, bounded
from crosslane.files.paths import cache_dir
from crosslane.host import probecache
from crosslane.process.runner import Runner

FORMAT = 1  # bump when the assembly below changes, so old roots are not reused
MANIFEST = "crosslane-toolroot.json"
ENTER = Path(__file__).with_name("enter_root.py")
EntryMode = Literal["root", "userns"]
CARGO_REGISTRY = "/usr/share/cargo/registry"  # where Debian's librust-*-dev packages put their crates
# Forky's Release file served here is past its Valid-Until date; the archive's signature still binds it.
APT_OPTIONS = ('Acquire::Check-Valid-Until "false"',)


@dataclass(frozen=True)
class ToolRoot:
    """A built tool root: its spec, folder and the key of the inputs it was made from."""

    spec: ToolRootSpec
    path: Path
    key: str

    def packages(self) -> dict[str, str]:
        """package[:arch] → version, as dpkg inside the root has them (a manifest crosslane did not write is an
        error naming it and the fix: the cache crosses jobs)."""
        fix = f"delete {self.path} and run invoke sources (it makes the root again)"
        data = bounded.read_json(self.path / MANIFEST, error=IntegrityError, fix=fix)
        found = data.get("packages") if isinstance(data, dict) else None
        if not isinstance(found, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in found.items()):
            raise IntegrityError(f"{self.path / MANIFEST}: not a tool root manifest crosslane wrote (packages: "
                                 "name -> version)", fix=fix)
        return found


def inputs(spec: ToolRootSpec) -> dict[str, object]:
    return {"format": FORMAT, "suite": spec.suite, "mirror": spec.mirror,
            "architectures": list(spec.architectures), "packages": sorted(spec.packages)}


def root_key(spec: ToolRootSpec) -> str:
    return hashlib.sha256(json.dumps(inputs(spec), sort_keys=True).encode()).hexdigest()[:16]


def root_path(spec: ToolRootSpec) -> Path:
    return cache_dir() / "toolroots" / f"{spec.name}-{spec.suite}-{root_key(spec)}"


def find(spec: ToolRootSpec) -> ToolRoot | None:
    path = root_path(spec)
    return ToolRoot(spec, path, root_key(spec)) if (path / MANIFEST).is_file() else None


# What decides whether a user namespace may be made (read into the probe key, not interpreted).
USERNS_SYSCTLS = ("/proc/sys/kernel/unprivileged_userns_clone",
                  "/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "/proc/sys/user/max_user_namespaces",
                  "/proc/sys/kernel/random/boot_id")


def entry_mode(runner: Runner) -> EntryMode | None:
    """How this host lets crosslane enter a root: as root (private namespaces), through an unprivileged user
    namespace, or (None) not at all. Probed by entering the namespaces entry uses and mounting a /proc each way; a
    mode that worked is kept in the probe cache under the user and its capabilities, the unshare binary and the
    kernel's namespace settings of this boot (None is probed again each time)."""
    unshare = runner.find("unshare")
    if unshare is None:
        return None
    key: dict[str, object] = {"probe": PROBE_FORMAT, "unshare": probecache.identity(unshare), "uid": os.getuid(),
                              "capabilities": _effective_capabilities(),
                              "sysctls": [_read(Path(p)) for p in USERNS_SYSCTLS]}
    cached = probecache.read_cached("entry-mode", key)
    if cached in ("root", "userns"):
        return "root" if cached == "root" else "userns"
    mode = _probe_mode(runner, unshare)
    if mode is not None and not runner.dry_run:
        probecache.write_cached("entry-mode", key, mode)
    return mode


def _effective_capabilities() -> str | None:
    # root in a container without CAP_SYS_ADMIN shares the uid and the kernel with one that has it.
    for line in (_read(Path("/proc/self/status")) or "").splitlines():
        if line.startswith("CapEff:"):
            return line.split(":", 1)[1].strip()
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


# What entering needs (command() and enter_root.py): private mount, PID and network namespaces and a fresh /proc.
PROBE_NAMESPACES = ("--mount", "--pid", "--fork", "--net", "--propagation", "private")
PROBE_FORMAT = 2  # in the cache key: a mode probed with fewer namespaces is probed again


def _probe_mode(runner: Runner, unshare: str) -> EntryMode | None:
    mount_proc = ["--", "mount", "-t", "proc", "-o", "nosuid,nodev,noexec", "proc", "/proc"]
    if runner.run([unshare, *PROBE_NAMESPACES, *mount_proc], check=False, probe=True, quiet=True, timeout=30).ok:
        return "root"
    userns = runner.run([unshare, "--map-root-user", *PROBE_NAMESPACES, *mount_proc], check=False, probe=True,
                        quiet=True, timeout=30)
    return "userns" if userns.ok else None


ENTRY_FIX = ("run as root (CI does), or allow unprivileged user namespaces "
             "(sysctl kernel.unprivileged_userns_clone=1 / kernel.apparmor_restrict_unprivileged_userns=0)")


def ensure(runner: Runner, spec: ToolRootSpec) -> ToolRoot:
    """The tool root of *spec*, made once (mmdebstrap into a staging folder, then renamed into place)."""
    existing = find(spec)
    if existing is not None:
        runner.log.info(f"    tool root {spec.name}: up to date ({existing.path})")
        return existing
    if os.environ.get("CROSSLANE_OFFLINE", "") not in ("", "0"):
        raise MissingPrerequisite(f"the tool root {spec.name} is not made and CROSSLANE_OFFLINE=1 forbids fetching its "
                                  "packages", fix="make it first where the Debian archive is reachable: invoke sources "
                                                  "--arch <arch> (or invoke baremetal for a bare-metal target)")
    mmdebstrap = runner.which("mmdebstrap", fix="invoke setup (installs mmdebstrap)")
    final = root_path(spec)
    if runner.dry_run:  # a dry run writes nothing, not even the cache folder
        runner.run(_mmdebstrap_argv(mmdebstrap, spec, final))
        return ToolRoot(spec, final, root_key(spec))
    final.parent.mkdir(parents=True, exist_ok=True)
    atomic.sweep_stale(final)
    runner.log.step(f"tool root {spec.name}: {spec.suite} with {len(spec.packages)} packages (once; cached)")
    with atomic.publish_dir(final, lambda found: (found / MANIFEST).is_file()) as staging:
        runner.run(_mmdebstrap_argv(mmdebstrap, spec, staging), timeout=3600)
        listed = runner.run(["dpkg-query", f"--admindir={staging / 'var/lib/dpkg'}", "-W", "-f",
                             "${Package}:${Architecture}\t${Version}\n"], quiet=True)
        packages = dict(sorted(line.split("\t", 1) for line in listed.output.splitlines() if "\t" in line))
        atomic.write_text(staging / MANIFEST, json.dumps({"inputs": inputs(spec), "packages": packages},
                                                         indent=1, sort_keys=True) + "\n")
    runner.log.info(f"    tool root {spec.name}: {len(packages)} packages at {final}")
    return ToolRoot(spec, final, root_key(spec))


def _mmdebstrap_argv(mmdebstrap: str, spec: ToolRootSpec, target: Path) -> list[str]:
    argv = [mmdebstrap, "--variant=apt", *(f"--aptopt={option}" for option in APT_OPTIONS),
            f"--architectures={','.join(spec.architectures)}"]
    if spec.packages:
        argv.append(f"--include={','.join(spec.packages)}")
    if os.geteuid() != 0:
        return [*argv, "--mode=unshare", spec.suite, str(target), spec.mirror]
    # As root mmdebstrap mounts proc, sys and dev inside the root it makes and unmounts them at its end; killed
    # (a timeout, a cancelled job) it would leave them in the host's mount table under a staging folder nobody can
    # remove. In a mount namespace of its own they go with it.
    return ["unshare", "--mount", "--propagation", "private", "--fork", "--kill-child", "--",
            *argv, spec.suite, str(target), spec.mirror]


def command(root: ToolRoot, argv: Sequence[str | Path], *, binds: Sequence[Path], cwd: Path | None = None,
            mode: EntryMode = "root", read_only: Sequence[Path] = (), network: bool = True,
            sealed: bool = False) -> list[str]:
    """*argv* as run inside *root*: the host's python enters it (enter_root.py) in private mount and PID namespaces
    (without *network*, a network namespace of its own too), with *binds* (written) and *read_only* folders at their
    own paths; *sealed*: the root itself read-only (a program that only runs from it)."""
    namespace = ["unshare", "--mount", "--pid", "--fork", "--propagation", "private", *([] if network else ["--net"])]
    if mode == "userns":
        namespace.insert(1, "--map-root-user")
    writable = list(dict.fromkeys(binds))
    mounts = [*((path, "--bind") for path in writable),
              *((path, "--bind-ro") for path in dict.fromkeys(read_only) if path not in writable)]
    # Outer folders first: a folder bound inside another bind (a writable ccache folder under the read-only cache)
    # is mounted over it, not hidden by it.
    mounts.sort(key=lambda mount: len(mount[0].parts))
    bound = [word for path, flag in mounts for word in (flag, str(path))]
    return [*namespace, "--", sys.executable, str(ENTER), str(root.path), *bound,
            *(["--read-only-root"] if sealed else []), "--cwd", str(cwd or Path.cwd()), "--", *map(str, argv)]


def wrapper_script(root: ToolRoot, tool: str, *, binds: Sequence[Path], mode: EntryMode,
                   read_only: Sequence[Path] = ()) -> str:
    """A shell script that runs *tool* of the root with the caller's arguments, in the caller's folder: what a
    CMake toolchain file names as the compiler (CMake and ninja stay the host's). Run from a folder no bind holds
    (a probe, a user's shell), the folder is bound too: a compiler reads and writes where it is run."""
    argv = command(root, [tool], binds=binds, cwd=Path("/"), mode=mode, read_only=read_only)
    cwd = argv.index("--cwd")
    line = " ".join([*map(shlex.quote, argv[:cwd]), '--bind-cwd --cwd "$PWD"', *map(shlex.quote, argv[cwd + 2:]),
                     '"$@"'])
    return f"#!/bin/sh\n# {tool} of the tool root {root.path.name} (crosslane host/toolroot.py)\nexec {line}\n"


def require_mode(runner: Runner) -> EntryMode:
    mode = entry_mode(runner)
    if mode is None:
        raise MissingPrerequisite("this host lets no process enter a tool root (unshare --mount failed as root and "
                                  "as an unprivileged user namespace)", fix=ENTRY_FIX)
    return mode


CRATE_NAME = re.compile(r'^name = "([^"]+)"', re.M)
CRATE_VERSION = re.compile(r'^version = "([^"]+)"', re.M)


def registry_index(registry: Path) -> dict[str, Path]:
    """"<name>-<version>" → the registry folder holding it (Debian's folder names need not say the version)."""
    index: dict[str, Path] = {}
    for folder in sorted(registry.iterdir()) if registry.is_dir() else []:
        manifest = folder / "Cargo.toml"
        text = manifest.read_text(errors="replace") if manifest.is_file() else ""
        name, version = CRATE_NAME.search(text), CRATE_VERSION.search(text)
        if name and version:
            index.setdefault(f"{name.group(1)}-{version.group(1)}", folder)
    return index
