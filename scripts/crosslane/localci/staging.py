"""Each pinned action as act reads it: its tree at the pinned commit, staged like every git source (a git mirror
named by CROSSLANE_GIT_MIRROR, else the network), with the JavaScript its action.yml runs.

A mirror may lack an action's bundled `dist/` (repository snapshots leave files of 4 MiB and more behind): it is
rebuilt from the pinned package-lock.json with `npm ci --ignore-scripts` and the action's own bundling script, or
staging stops naming the action and the fix. Rebuilt bundles are not the released bytes (ncc's output follows
npm's and node's versions); `bundled.json` beside them says how they were made.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import yaml

from crosslane.config import GitSource, SysrootSpec
from crosslane.errors import IntegrityError, MissingPrerequisite, StepFailed
from crosslane.files import atomic, stamps
from crosslane.files.paths import cache_dir
from crosslane.localci.pins import ActionPin
from crosslane.process.runner import Runner
from crosslane.sources import pinned

BUNDLE_SCRIPTS = ("package", "release")  # what actions name the script that bundles dist/ with ncc
NPM_TIMEOUT = 1800.0
RECORD = "bundled.json"


def stage(runner: Runner, pin: ActionPin, defaults: SysrootSpec) -> Path:
    """The folder act reads *pin* from: the staged tree when it is whole, else a copy with its bundles rebuilt."""
    spec = GitSource(url=pin.url, commit=pin.commit, tag=pin.tag, absent_ok=("dist/*",))
    try:
        tree = pinned.fetch_pinned(runner, "action+" + pin.repo.replace("/", "+"), [spec], defaults).path
    except MissingPrerequisite as exc:
        raise MissingPrerequisite(f"action {pin.repo}@{pin.commit[:12]} ({pin.tag or 'no version named'}): "
                                  f"{exc.message}",
                                  fix=f"stage a mirror of {pin.url} and point {pinned.MIRROR_ENV} at it "
                                      "(README: CI, the workflow under act)", detail=exc.detail) from None
    missing = missing_entry_points(tree)
    if not missing:
        return tree
    return bundled(runner, pin, tree, missing)


def missing_entry_points(tree: Path) -> list[str]:
    """The files the JavaScript actions in *tree* run (runs.pre/main/post of each action.yml) that it lacks. The
    tree came from a mirror: an entry point that is no relative path inside it is refused, not looked for."""
    missing = []
    inside = tree.resolve()
    for metadata in sorted([*tree.glob("action.y*ml"), *tree.glob("*/action.y*ml")]):
        runs = _runs(metadata)
        if not str(runs.get("using", "")).startswith("node"):
            continue
        for key in ("pre", "main", "post"):
            entry = runs.get(key)
            if entry is None and key != "main":
                continue
            where = metadata.parent / str(entry)
            try:
                outside = not isinstance(entry, str) or not entry or Path(entry).is_absolute() \
                    or not where.resolve().is_relative_to(inside)
            except ValueError:  # a NUL byte or a lone surrogate: no file has that name
                outside = True
            if outside:
                raise IntegrityError(f"{metadata}: runs.{key} {entry!r} is not a file of the action's own tree",
                                     fix="stage the action from an undamaged mirror of its pinned commit")
            if not where.is_file():
                missing.append(os.path.normpath(where.relative_to(tree)))
    return missing


def _runs(metadata: Path) -> Mapping[str, object]:
    try:
        data = yaml.safe_load(metadata.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        raise IntegrityError(f"{metadata}: not an action's metadata: {' '.join(str(exc).split())[:300]}",
                             fix="stage the action from an undamaged mirror of its pinned commit") from None
    runs = data.get("runs") if isinstance(data, Mapping) else None
    if not isinstance(runs, Mapping):
        raise IntegrityError(f"{metadata}: no `runs:` mapping", fix="stage the action from an undamaged mirror of "
                                                                      "its pinned commit")
    return runs


def bundled(runner: Runner, pin: ActionPin, tree: Path, missing: list[str]) -> Path:
    """A copy of *tree* with the bundles its action.yml runs rebuilt from the pinned lockfile (cached by commit)."""
    final = cache_dir() / "actions" / f"{pin.repo.replace('/', '+')}@{pin.commit}"
    if _rebuilt_from(final, pin, tree) and not missing_entry_points(final):
        return final
    package = _package(tree)
    script = next((s for s in BUNDLE_SCRIPTS if s in package.get("scripts", {})), None)
    refuse = f"action {pin.repo}@{pin.commit[:12]}: the mirror lacks {', '.join(missing)}"
    whole_fix = f"stage a mirror of {pin.url} that holds every file of {pin.commit[:12]}"
    if not (tree / "package-lock.json").is_file() or script is None:
        raise MissingPrerequisite(f"{refuse}, and it has no package-lock.json and {'/'.join(BUNDLE_SCRIPTS)} script "
                                  "to rebuild them from", fix=whole_fix)
    npm = runner.which("npm", fix=f"install npm (apt-get install npm), or {whole_fix}")
    runner.log.info(f"    {pin.repo}@{pin.commit[:12]}: rebuilding {', '.join(missing)} from package-lock.json "
                    f"(npm ci, npm run {script})")
    # A copy without its bundles (damaged since) is replaced whole, never deleted in place under a reader.
    with atomic.replace_dir(final) as work:
        shutil.copytree(tree, work, dirs_exist_ok=True, symlinks=True)
        # A bundling script may `git add` its output (download-artifact's does): it runs in a repository of its own.
        runner.run(["git", "init", "-q"], cwd=work, quiet=True)
        env = {"npm_config_cache": str(cache_dir() / "actions" / ".npm"), "npm_config_update_notifier": "false",
               # CROSSLANE_OFFLINE: npm installs from its cache only, as every other fetch is staged-only then
               "npm_config_offline": "true" if pinned.offline() else "false"}
        runner.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=work, env=env,
                   timeout=NPM_TIMEOUT)
        runner.run([npm, "run", script], cwd=work, env=env, timeout=NPM_TIMEOUT)
        still = missing_entry_points(work)
        if still:
            raise StepFailed(f"{refuse}; npm run {script} did not make {', '.join(still)}", fix=whole_fix)
        shutil.rmtree(work / "node_modules", ignore_errors=True)  # ncc bundles every dependency into dist/
        shutil.rmtree(work / ".git")
        node = runner.run(["node", "--version"], quiet=True, probe=True, check=False).output.strip()
        record = {"commit": pin.commit, "lockfile_sha256": stamps.file_sha256(tree / "package-lock.json"),
                  "script": script, "node": node, "rebuilt": missing}
        (work / RECORD).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return final


def _rebuilt_from(final: Path, pin: ActionPin, tree: Path) -> bool:
    """Whether the cached copy's record says it was rebuilt from this commit and this lockfile: only then is it
    used (a record that is damaged or names another lockfile is a cache miss, and the copy is made again)."""
    lockfile = tree / "package-lock.json"
    try:
        record = json.loads((final / RECORD).read_text(encoding="utf-8"))
        return (isinstance(record, dict) and record.get("commit") == pin.commit and lockfile.is_file()
                and record.get("lockfile_sha256") == stamps.file_sha256(lockfile))
    except (OSError, ValueError, RecursionError):
        return False


def _package(tree: Path) -> Mapping[str, dict[str, str]]:
    try:
        data = json.loads((tree / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("scripts", {}), dict) else {}
