"""`invoke repro`: does a component rebuild bit for bit? Two builds from two clones of this checkout, at paths of
different length, one after the other, under varied conditions (reprotest's variations: build path, time, umask,
locale, time zone, HOME; the second with ccache off), each output compared by sha256.

Both clones are made with `git clone` of HEAD (what a second builder would check out) in build/repro/, and each
builds with its own crosslane code (PYTHONPATH) into its own build/ folder, sharing the cache (sources, sysroots,
tool roots) as two machines of one team share a mirror. A difference is a FAIL naming the files, with diffoscope's
first lines on the first of them, so the row says what differs.

What is not committed is in neither clone: a working tree with changes (a component added to versions.toml, a patch
edited) is refused before anything is built, naming the changes, rather than building the last commit and
reporting on code other than the one in front of the user. Building the working tree's content instead would mean
copying it (ignored files and all) into each clone, which is no longer what a second builder checks out.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.errors import StepFailed, UsageError
from crosslane.files import stamps
from crosslane.files.paths import cache_dir
from crosslane.host import toolchains
from crosslane.report import Check, Row, Verdict
from crosslane.run import plan

DIFFOSCOPE_LINES = 12
DIFFOSCOPE_TIMEOUT = 600.0
BUILD_TIMEOUT = 4 * 3600.0


@dataclass(frozen=True)
class Variation:
    """One build's conditions."""

    folder: str  # the clone's folder name under build/repro/<arch>-<component>/
    umask: int
    env: Mapping[str, str]
    what: str


VARIATIONS = (
    Variation("a", 0o022, {"TZ": "UTC", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}, "ccache on, umask 022, UTC"),
    Variation("second-clone-at-a-longer-path", 0o002,
              {"TZ": "Pacific/Kiritimati", "LC_ALL": "C", "LANG": "C", "CCACHE_DISABLE": "1"},
              "ccache off, umask 002, UTC+14, another HOME"),
)


def outputs(install: Path) -> dict[str, str]:
    """relative path -> sha256 (files), `-> target` (links), `folder` or what else it is, of everything a build
    installed: a folder or a FIFO one build made and the other did not is a difference too."""
    found: dict[str, str] = {}
    for path in sorted(install.rglob("*")):
        relative = path.relative_to(install).as_posix()
        if path.is_symlink():
            found[relative] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[relative] = stamps.file_sha256(path)
        elif path.is_dir():
            found[relative] = "folder"
        else:
            found[relative] = f"special file (mode {oct(path.lstat().st_mode)})"
    return found


def head(ctx: Context) -> str:
    """The checkout's commit: both clones are made at it, whatever is committed while they build."""
    found = ctx.runner.run(["git", "-C", ctx.config.root, "rev-parse", "--verify", "HEAD"], timeout=60, check=False,
                           quiet=True, env={"GIT_CONFIG_NOSYSTEM": "1"})
    if not found.ok:
        raise UsageError(f"{ctx.config.root}: not a git checkout; invoke repro builds from clones of one",
                         fix="run it in a clone of crosslane's repository")
    return found.output.strip()


def uncommitted(ctx: Context) -> list[str]:
    """The working tree's paths that differ from HEAD (changed, staged, untracked and not ignored), the build
    folder aside: what the clones of HEAD would not have."""
    root = ctx.config.root
    argv: list[str | Path] = ["git", "-C", root, "status", "--porcelain", "--untracked-files=all", "--", "."]
    if ctx.build_root.resolve().is_relative_to(root.resolve()):
        argv.append(f":(exclude){ctx.build_root.resolve().relative_to(root.resolve()).as_posix()}")
    found = ctx.runner.run(argv, timeout=60, check=False, quiet=True, env={"GIT_CONFIG_NOSYSTEM": "1"})
    if not found.ok:
        raise UsageError(f"{root}: git status failed ({found.tail(2)})",
                         fix="run it in a clone of crosslane's repository")
    return [line[3:] for line in found.output.splitlines() if len(line) > 3]


def require_committed(ctx: Context, commit: str) -> None:
    changed = uncommitted(ctx)
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        raise UsageError(f"repro builds the last commit ({commit[:12]}) in two clean clones, and the working tree "
                         f"has changes it would not build: {shown}",
                         fix="commit them (or stash them) and run invoke repro again")


def clone(ctx: Context, into: Path, commit: str) -> None:
    shutil.rmtree(into, ignore_errors=True)
    into.parent.mkdir(parents=True, exist_ok=True)
    env = {"GIT_CONFIG_NOSYSTEM": "1"}
    ctx.runner.run(["git", "clone", "--quiet", "--no-hardlinks", "--no-checkout", ctx.config.root, into],
                   timeout=600, env=env)
    ctx.runner.run(["git", "-C", into, "checkout", "--quiet", "--detach", commit], timeout=600, env=env)


def build_in(ctx: Context, checkout: Path, arch: Arch, component: str, variation: Variation, home: Path) -> Path:
    """The component built in *checkout* under *variation*; its install folder."""
    invoke = Path(sys.executable).parent / "invoke"
    env = {**variation.env, "PYTHONPATH": str(checkout / "scripts"), "HOME": str(home),
           "CROSSLANE_CACHE": str(cache_dir()), "CROSSLANE_BUILD_DIR": str(checkout / "build"),
           **ccache_dir(ctx)}
    argv = ["sh", "-c", f'umask {variation.umask:03o} && exec "$@"', "sh", str(invoke), "build", "--arch", arch.value,
            "--component", component]

    def shown(line: str) -> None:
        if line.startswith(("PASS", "    build ", "==> ")) or "FAIL" in line:  # the clone's progress and verdicts
            ctx.log.info(f"      {line}")

    result = ctx.runner.run(argv, cwd=checkout, env=env, timeout=BUILD_TIMEOUT, check=False, on_line=shown)
    if not result.ok:
        raise StepFailed(f"the build in {checkout} failed ({variation.what})", detail=result.tail(20))
    return checkout / "build" / arch.value / component / "install"


def ccache_dir(ctx: Context) -> dict[str, str]:
    """CCACHE_DIR as this user's ccache has it, so a build with another HOME uses the same cache."""
    if "CCACHE_DIR" in os.environ:
        return {}
    found = toolchains.ccache_setting(ctx.runner, "cache_dir")
    return {"CCACHE_DIR": found} if found else {}


def differences(first: Mapping[str, str], second: Mapping[str, str]) -> list[str]:
    return sorted(name for name in set(first) | set(second) if first.get(name) != second.get(name))


def explain(ctx: Context, one: Path, other: Path) -> str:
    """What diffoscope (Debian's diffoscope-minimal) finds between two files, shortly: the first sections that
    differ, each with its first removed and added line."""
    diffoscope = ctx.runner.find("diffoscope")
    if diffoscope is None:
        return "diffoscope not installed (invoke repro installs diffoscope-minimal)"
    if not one.is_file() or not other.is_file():
        return "present in one build only"
    result = ctx.runner.run([diffoscope, "--no-progress", "--text", "-", one, other], timeout=DIFFOSCOPE_TIMEOUT,
                            check=False, quiet=True)
    return summarize(result.output)


def summarize(text: str, sections: int = 3) -> str:
    """diffoscope's text output as "section: -old +new; …" for the first *sections* that changed."""
    found: list[str] = []
    title, removed, added = "", "", ""

    def close() -> None:
        if title and (removed or added):
            found.append(f"{title}: -{removed[:100]} +{added[:100]}")

    for line in text.splitlines():
        if line.startswith(("├── ", "│   ├── ")):
            close()
            title, removed, added = line.split("── ", 1)[1].strip(), "", ""
        elif line.startswith("│ -") and not removed:
            removed = line[3:].strip()
        elif line.startswith("│ +") and not added:
            added = line[3:].strip()
    close()
    return "; ".join(found[:sections]) or " | ".join(text.splitlines()[:DIFFOSCOPE_LINES])[:600]


def run(ctx: Context, arch: Arch, names: Sequence[str], *, keep: bool = False) -> list[Row]:
    """Each named component built twice (VARIATIONS) and compared; one row each."""
    if not names:
        raise UsageError("repro: name the components to check (--component)", fix="e.g. --component canary")
    plan.components_for(ctx.config, arch, names)  # unknown names are a UsageError before anything is built
    commit = head(ctx)
    require_committed(ctx, commit)
    return [check_one(ctx, arch, name, commit, keep=keep) for name in names]


def check_one(ctx: Context, arch: Arch, name: str, commit: str, *, keep: bool) -> Row:
    work = ctx.build_root / "repro" / f"{arch}-{name}"
    found: list[dict[str, str]] = []
    installs: list[Path] = []
    verdict = Verdict.FAIL
    try:
        for index, variation in enumerate(VARIATIONS, 1):
            checkout = work / variation.folder
            with ctx.log.group(f"repro {name} ({arch}): build {index} of {len(VARIATIONS)} in {checkout} "
                               f"({variation.what})"):
                clone(ctx, checkout, commit)
                with tempfile.TemporaryDirectory(prefix="crosslane-home-") as home:
                    installs.append(build_in(ctx, checkout, arch, name, variation, Path(home)))
                found.append(outputs(installs[-1]))
        differing = differences(found[0], found[1])
        if not found[0]:
            return Row(component=name, arch=arch, check=Check.REPRO, verdict=Verdict.FAIL,
                       reason="the builds installed nothing to compare")
        if differing:
            detail = explain(ctx, installs[0] / differing[0], installs[1] / differing[0])
            shown = ", ".join(differing[:5]) + (f" (+{len(differing) - 5} more)" if len(differing) > 5 else "")
            return Row(component=name, arch=arch, check=Check.REPRO, verdict=Verdict.FAIL,
                       reason=f"{len(differing)} of {len(found[0])} outputs differ: {shown}; {differing[0]}: {detail} "
                       f"(both builds kept in {work})")
        wheels = sum(1 for n in found[0] if n.endswith(".whl"))
        verdict = Verdict.PASS
        return Row(component=name, arch=arch, check=Check.REPRO, verdict=Verdict.PASS,
                   reason=f"{len(found[0])} outputs byte-identical (sha256){f', {wheels} wheels' if wheels else ''}, "
                   f"two clones of {commit[:12]} at paths of {len(str(work / VARIATIONS[0].folder))} and "
                   f"{len(str(work / VARIATIONS[1].folder))} characters: {' / '.join(v.what for v in VARIATIONS)}")
    finally:
        if verdict is Verdict.PASS and not keep:  # a difference is kept to look at
            shutil.rmtree(work, ignore_errors=True)
