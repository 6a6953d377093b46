"""The patch engine: a pinned series per component, planned as a whole, then applied.

The state belongs to the series, not to each patch alone: a later patch may change lines an earlier one
touched, so "does patch 1 reverse-apply?" is the wrong question once patch 2 is in. The plan unwinds in a
scratch copy of the files the series touches — reverse patch N, then N-1, … — to find the longest applied
prefix k, then checks that patches k+1…N apply forward on the tree as it is:
  k = N         -> APPLIED (nothing to do)
  0 < k < N     -> PARTIAL: the first k are APPLIED, the rest APPLICABLE (applied in order)
  k = 0         -> CLEAN: every patch APPLICABLE
  no k fits     -> CONFLICT: an error naming the patch, file and hunk; the tree is not touched (exit 4)
A patch whose `when.arch` excludes the arch is NOT-FOR-ARCH and never read against the tree. Every decision
comes from GNU patch's exit codes, never its prose; the output is parsed only to name the failing hunk.

patch runs with -F0 (fuzz refused, offsets fine, as Yocto's patch-fuzz QA), --binary (CRLF bytes are
bytes), --batch --forward (never a question, never a guessed -R), -p0 or -p1 per patch, and writes no .orig
or .rej files. Applying backs up every file the series touches first: a patch that fails half way (an
unwritable folder) restores the tree to exactly what it was, its own partial hunks included.
"""

from __future__ import annotations

import enum
import hashlib
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from crosslane.archs import Arch
from crosslane.config import Component, PatchSpec
from crosslane.errors import ConfigError, PatchConflict
from crosslane.host import probecache
from crosslane.process.runner import Result, Runner
from crosslane.report import Check, Row, Verdict

PATCH = ("patch", "--batch", "--forward", "--binary", "-F0", "--no-backup-if-mismatch", "-r", "-")
PATCH_TIMEOUT = 120.0


class State(enum.StrEnum):
    APPLIED = "APPLIED"
    APPLICABLE = "APPLICABLE"
    NOT_FOR_ARCH = "NOT-FOR-ARCH"
    CONFLICT = "CONFLICT"


@dataclass(frozen=True)
class Step:
    """One patch's planned state against a tree (applied, applicable, not for this arch, conflict), with detail."""

    spec: PatchSpec
    name: str  # path under patches/
    state: State
    detail: str = ""


def patches_root(root: Path) -> Path:
    return (root / "patches").resolve()


def name_of(root: Path, spec: PatchSpec) -> str:
    try:
        return spec.path.relative_to(patches_root(root)).as_posix()
    except ValueError:
        return str(spec.path)


def verify_pins(root: Path, component: Component) -> None:
    """Every patch of the component lives under patches/ and matches its sha256 pin."""
    base = patches_root(root)
    for index, spec in enumerate(component.patches):
        where = f"versions.toml: components.{component.name}.patches[{index}]"
        if not spec.path.resolve().is_relative_to(base):
            raise ConfigError(f"{where}: {spec.path} is not under patches/", fix="move the patch into patches/")
        try:
            data = spec.path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read patches/{name_of(root, spec)} ({exc.strerror})",
                              fix="add the patch file or fix path") from None
        actual = hashlib.sha256(data).hexdigest()
        if actual != spec.sha256:
            raise ConfigError(f"{where}: patches/{name_of(root, spec)} has sha256 {actual}, the pin is {spec.sha256}",
                              fix="if the edit is intended, update sha256 in versions.toml")


def touched_files(patch: bytes, strip: int = 1) -> list[str]:
    """Paths (after -p*strip*) named by the patch's ---/+++ and git rename headers: the scratch copy's and
    the backup's file list."""
    found: list[str] = []
    for raw in patch.splitlines():
        if raw.startswith((b"--- ", b"+++ ")):
            name = raw[4:].decode("utf-8", "replace").split("\t", 1)[0].strip()
            parts = PurePosixPath(name).parts
            if name == "/dev/null" or len(parts) <= strip or ".." in parts or name.startswith("/"):
                continue
            rel = PurePosixPath(*parts[strip:]).as_posix()
        elif raw.startswith((b"rename from ", b"rename to ")):
            rel = raw.split(b" ", 2)[2].decode("utf-8", "replace").strip()
            if ".." in PurePosixPath(rel).parts or rel.startswith("/"):
                continue
        else:
            continue
        if rel not in found:
            found.append(rel)
    return found


def _patch(runner: Runner, tree: Path, spec: PatchSpec, *, reverse: bool = False, dry_run: bool = True) -> Result:
    argv = [*PATCH, f"-p{spec.strip}", *(["-R"] if reverse else []), *(["--dry-run"] if dry_run else []),
            "-d", str(tree), "-i", str(spec.path)]
    # The scratch copy and dry runs change no tree the user owns, so they run even under --dry-run.
    return runner.run(argv, env={"LC_ALL": "C"}, timeout=PATCH_TIMEOUT, check=False, probe=True, quiet=True)


def conflict_detail(output: str) -> str:
    """Name the file and hunk that failed, from patch's output (for the message only)."""
    current = "?"
    for line in output.splitlines():
        file_match = re.match(r"(?:checking|patching) file (.+)$", line)
        if file_match:
            current = file_match.group(1).strip("'")
            continue
        hunk = re.match(r"Hunk #(\d+) FAILED at (\d+)", line)
        if hunk:
            return f"{current}, hunk #{hunk.group(1)} (at line {hunk.group(2)}) does not apply without fuzz"
        if "No file to patch" in line or "can't find file" in line:
            return f"{current if current != '?' else 'a file it patches'} is missing from the tree"
        if "Reversed (or previously applied)" in line:
            return f"{current}: partly applied already"
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "patch failed without output"


def _touched(specs: Sequence[PatchSpec]) -> list[str]:
    found: list[str] = []
    for spec in specs:
        found += [rel for rel in touched_files(spec.path.read_bytes(), spec.strip) if rel not in found]
    return found


def _scratch_copy(tree: Path, scratch: Path, specs: Sequence[PatchSpec]) -> None:
    for rel in _touched(specs):
        source, dest = tree / rel, scratch / rel
        if (source.is_file() or source.is_symlink()) and not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest, follow_symlinks=False)


@dataclass(frozen=True)
class Series:
    """The series' state on a tree: the first *applied* patches are in; *conflict* is (index, detail) of the
    first patch that fits no prefix, None when the rest apply."""

    applied: int
    conflict: tuple[int, str] | None = None


def _unwinds(runner: Runner, tree: Path, specs: Sequence[PatchSpec], count: int) -> bool:
    """Do the first *count* patches reverse out of *tree*, last first? (in a scratch copy)"""
    if count == 0:
        return True
    with tempfile.TemporaryDirectory(prefix="crosslane-patch-unwind-") as tmp:
        scratch = Path(tmp)
        _scratch_copy(tree, scratch, specs)
        for spec in reversed(specs[:count]):
            if not _patch(runner, scratch, spec, reverse=True).ok:
                return False
            _patch(runner, scratch, spec, reverse=True, dry_run=False)
    return True


def _rest_applies(runner: Runner, tree: Path, specs: Sequence[PatchSpec], start: int) -> tuple[int, str] | None:
    """None when patches start… apply forward in order on *tree* (in a scratch copy), else the first failure."""
    with tempfile.TemporaryDirectory(prefix="crosslane-patch-plan-") as tmp:
        scratch = Path(tmp)
        _scratch_copy(tree, scratch, specs)
        for index in range(start, len(specs)):
            forward = _patch(runner, scratch, specs[index])
            if not forward.ok:
                return index, conflict_detail(forward.output)
            _patch(runner, scratch, specs[index], dry_run=False)
    return None


def series_state(runner: Runner, tree: Path, specs: Sequence[PatchSpec]) -> Series:
    """The longest applied prefix whose remainder applies; tried from the whole series down to none."""
    first_failure: Series | None = None
    for count in range(len(specs), -1, -1):
        if not _unwinds(runner, tree, specs, count):
            continue
        failure = _rest_applies(runner, tree, specs, count) if count < len(specs) else None
        if failure is None:
            return Series(count)
        first_failure = first_failure or Series(count, failure)
    assert first_failure is not None  # count == 0 always unwinds
    return first_failure


def evidence(tree: Path, specs: Sequence[PatchSpec]) -> dict[str, object]:
    """What decides a series' state on *tree*: the patches' bytes, the content of every file they touch, and
    which patch program judges them. Equal evidence, equal state: a no-op reads the state it recorded instead of
    running patch twice per patch (the reverse and forward checks, in scratch copies)."""
    digest = hashlib.sha256()
    for spec in specs:
        digest.update(f"{spec.strip}\0".encode() + spec.path.read_bytes() + b"\0")
    for rel in sorted(_touched(specs)):
        path = tree / rel
        content = (b"link:" + str(path.readlink()).encode() if path.is_symlink()
                   else b"file:" + path.read_bytes() if path.is_file() else b"absent")
        digest.update(rel.encode() + b"\0" + hashlib.sha256(content).digest())
    program = shutil.which(PATCH[0]) or PATCH[0]
    return {"tree": str(tree), "series": digest.hexdigest(), "patch": probecache.identity(program)}


def plan(runner: Runner, root: Path, component: Component, arch: Arch, tree: Path) -> list[Step]:
    """Every patch's state for *arch*, in series order, from the series' state; lists nothing after a
    CONFLICT. Changes nothing."""
    verify_pins(root, component)
    relevant = [spec for spec in component.patches if arch in spec.arches]
    key = evidence(tree, relevant) if relevant else {}
    recorded = probecache.read_cached("patch-series", key) if relevant else None
    if isinstance(recorded, int) and 0 <= recorded <= len(relevant):
        state = Series(recorded)
    else:
        state = series_state(runner, tree, relevant)
        if relevant and state.conflict is None and not runner.dry_run:
            probecache.write_cached("patch-series", key, state.applied)
    steps: list[Step] = []
    for spec in component.patches:
        name = name_of(root, spec)
        if spec not in relevant:
            steps.append(Step(spec, name, State.NOT_FOR_ARCH, f"when.arch = {', '.join(a.value for a in spec.arches)}"))
            continue
        index = relevant.index(spec)
        if state.conflict is not None and index >= state.conflict[0]:
            if index == state.conflict[0]:
                steps.append(Step(spec, name, State.CONFLICT, state.conflict[1]))
            continue
        steps.append(Step(spec, name, State.APPLIED if index < state.applied else State.APPLICABLE))
    return steps


def show(runner: Runner, component: Component, arch: Arch, steps: Sequence[Step]) -> None:
    for step in steps:
        detail = f" ({step.detail})" if step.detail else ""
        runner.log.info(f"    plan {component.name} {arch}: {step.name}: {step.state.value}{detail}")


def apply(runner: Runner, root: Path, component: Component, arch: Arch, tree: Path, *,
          check: bool = False) -> list[Step]:
    """Plan the series, then apply what is APPLICABLE (unless *check*). A conflict leaves *tree* as it was."""
    steps = plan(runner, root, component, arch, tree)
    show(runner, component, arch, steps)
    for step in steps:
        if step.state is State.CONFLICT:
            raise PatchConflict(f"patch {step.name} conflicts with {tree}: {step.detail}; the tree was left as it was",
                                fix="refresh the patch against the pinned source and update its sha256")
    if check or runner.dry_run:
        return steps
    todo = [step.spec for step in steps if step.state is State.APPLICABLE]
    if not todo:
        return steps
    with tempfile.TemporaryDirectory(prefix="crosslane-patch-backup-") as tmp:
        backup = Backup(tree, Path(tmp), _touched(todo))
        for spec in todo:
            result = _patch(runner, tree, spec, dry_run=False)
            if not result.ok:  # the plan said it applies: put back every file the series touches
                backup.restore()
                raise PatchConflict(f"patch {name_of(root, spec)} failed on {tree} although planned: "
                                    f"{conflict_detail(result.output)}; the tree was restored as it was",
                                    fix="is the tree writable, and is nothing else writing to it?")
    relevant = [spec for spec in component.patches if arch in spec.arches]
    probecache.write_cached("patch-series", evidence(tree, relevant), len(relevant))
    return steps


class Backup:
    """Copies of the files a series touches (and which did not exist), to restore a tree exactly."""

    def __init__(self, tree: Path, folder: Path, files: Sequence[str]) -> None:
        self.tree, self.folder = tree, folder
        self.absent = [rel for rel in files if not (tree / rel).exists() and not (tree / rel).is_symlink()]
        self.saved = [rel for rel in files if rel not in self.absent]
        for rel in self.saved:
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(tree / rel, folder / rel, follow_symlinks=False)

    def restore(self) -> None:
        for rel in self.saved:
            current, saved = self.tree / rel, self.folder / rel
            if current.is_file() and not current.is_symlink() and current.read_bytes() == saved.read_bytes():
                continue  # unchanged (perhaps in a folder that cannot be written)
            current.unlink(missing_ok=True)
            shutil.copy2(saved, current, follow_symlinks=False)
        for rel in self.absent:
            (self.tree / rel).unlink(missing_ok=True)


def rows(component: Component, arch: Arch, steps: Sequence[Step], *, check: bool = False) -> list[Row]:
    result = []
    for step in steps:
        match step.state:
            case State.APPLIED:
                verdict, text = Verdict.PASS, "APPLIED (already; skipped)"
            case State.APPLICABLE if check:
                verdict, text = Verdict.FAIL, "APPLICABLE (not applied: --check)"
            case State.APPLICABLE:
                verdict, text = Verdict.PASS, "APPLICABLE→applied"
            case State.NOT_FOR_ARCH:
                verdict, text = Verdict.SKIP, f"NOT-FOR-ARCH ({step.detail})"
            case _:
                verdict, text = Verdict.FAIL, f"CONFLICT ({step.detail})"
        result.append(Row(component=component.name, arch=arch, check=Check.PATCH, verdict=verdict,
                          reason=f"{step.name}: {text}"))
    return result


def stamp_inputs(root: Path, component: Component, arch: Arch) -> list[dict[str, str]]:
    """What the build stamp records per patch: its sha256 and the state the build applies it to."""
    return [{"patch": name_of(root, spec), "sha256": spec.sha256,
             "state": (State.APPLIED if arch in spec.arches else State.NOT_FOR_ARCH).value}
            for spec in component.patches]
