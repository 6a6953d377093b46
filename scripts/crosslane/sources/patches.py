"""The patch engine: a pinned series per component, planned as a whole, then applied.

Each patch's state is decided by GNU patch's exit codes, never by its prose:
  reverse dry run passes  -> APPLIED (skipped)
  forward dry run passes  -> APPLICABLE (applied)
  neither                 -> CONFLICT (an error naming the patch, file and hunk; the tree is not touched)
A patch whose `when.arch` excludes the arch is NOT-FOR-ARCH and never read against the tree.

The series is planned in a scratch copy of just the files it touches, each APPLICABLE patch applied
there so the next one is checked against the result; only a conflict-free plan touches the real tree.
patch runs with -F0 (fuzz refused, offsets fine, as Yocto's patch-fuzz QA), --binary (CRLF bytes are
bytes), --batch --forward (never a question, never a guessed -R), and writes no .orig or .rej files.
The output is parsed only to name the failing file and hunk in the message.
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
from crosslane.report import Row, Stage, Verdict
from crosslane.runner import Result, Runner

PATCH = ("patch", "-p1", "--batch", "--forward", "--binary", "-F0", "--no-backup-if-mismatch", "-r", "-")
PATCH_TIMEOUT = 120.0


class State(enum.StrEnum):
    APPLIED = "APPLIED"
    APPLICABLE = "APPLICABLE"
    NOT_FOR_ARCH = "NOT-FOR-ARCH"
    CONFLICT = "CONFLICT"


@dataclass(frozen=True)
class Step:
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


def touched_files(patch: bytes) -> list[str]:
    """Paths (after -p1) named by the patch's ---/+++ headers; used only to build the scratch copy."""
    found: list[str] = []
    for raw in patch.splitlines():
        if not raw.startswith((b"--- ", b"+++ ")):
            continue
        name = raw[4:].decode("utf-8", "replace").split("\t", 1)[0].strip()
        parts = PurePosixPath(name).parts
        if name == "/dev/null" or len(parts) < 2 or ".." in parts or name.startswith("/"):
            continue
        rel = PurePosixPath(*parts[1:]).as_posix()
        if rel not in found:
            found.append(rel)
    return found


def _patch(runner: Runner, tree: Path, patch: Path, *, reverse: bool = False, dry_run: bool = True) -> Result:
    argv = [*PATCH, *(["-R"] if reverse else []), *(["--dry-run"] if dry_run else []),
            "-d", str(tree), "-i", str(patch)]
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


def _scratch_copy(tree: Path, scratch: Path, specs: Sequence[PatchSpec]) -> None:
    for spec in specs:
        for rel in touched_files(spec.path.read_bytes()):
            source, dest = tree / rel, scratch / rel
            if (source.is_file() or source.is_symlink()) and not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest, follow_symlinks=False)


def plan(runner: Runner, root: Path, component: Component, arch: Arch, tree: Path) -> list[Step]:
    """Every patch's state for *arch*, in series order; stops at the first CONFLICT. Changes nothing."""
    verify_pins(root, component)
    relevant = [spec for spec in component.patches if arch in spec.arches]
    steps: list[Step] = []
    with tempfile.TemporaryDirectory(prefix="crosslane-patch-plan-") as tmp:
        scratch = Path(tmp)
        _scratch_copy(tree, scratch, relevant)
        for spec in component.patches:
            name = name_of(root, spec)
            if spec not in relevant:
                steps.append(Step(spec, name, State.NOT_FOR_ARCH,
                                  f"when.arch = {', '.join(a.value for a in spec.arches)}"))
                continue
            if _patch(runner, scratch, spec.path, reverse=True).ok:
                steps.append(Step(spec, name, State.APPLIED))
                continue
            forward = _patch(runner, scratch, spec.path)
            if not forward.ok:
                steps.append(Step(spec, name, State.CONFLICT, conflict_detail(forward.output)))
                break
            _patch(runner, scratch, spec.path, dry_run=False)
            steps.append(Step(spec, name, State.APPLICABLE))
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
    done: list[Step] = []
    for step in steps:
        if step.state is not State.APPLICABLE:
            continue
        result = _patch(runner, tree, step.spec.path, dry_run=False)
        if not result.ok:  # the plan said it applies; undo this run's patches before reporting
            for earlier in reversed(done):
                _patch(runner, tree, earlier.spec.path, reverse=True, dry_run=False)
            raise PatchConflict(f"patch {step.name} failed on {tree} although planned: "
                                f"{conflict_detail(result.output)}; the patches of this run were reverted",
                                fix="is something else writing to the tree?")
        done.append(step)
    return steps


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
        result.append(Row(component.name, arch.value, "patch", verdict, f"{step.name}: {text}", stage=Stage.PATCH))
    return result


def stamp_inputs(root: Path, component: Component, arch: Arch) -> list[dict[str, str]]:
    """What the build stamp records per patch: its sha256 and the state the build applies it to."""
    return [{"patch": name_of(root, spec), "sha256": spec.sha256,
             "state": (State.APPLIED if arch in spec.arches else State.NOT_FOR_ARCH).value}
            for spec in component.patches]
