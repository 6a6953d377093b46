"""Argument glue for the gate tasks (verify, parity, floors, consistency): each returns a commands.Action."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.cli.arguments import optional_path, parse_path
from crosslane.cli.commands import Action, parse_arch
from crosslane.config import jsonschema
from crosslane.config.load import MAX_CONFIG_BYTES
from crosslane.context import Context
from crosslane.errors import UsageError
from crosslane.files import bounded
from crosslane.gates import verify as verify_mod
from crosslane.policy import consistency as consistency_mod
from crosslane.policy import floors as floors_mod
from crosslane.policy import parity as parity_mod
from crosslane.policy import workflow as workflow_mod
from crosslane.report import Check, Row, Scope, Verdict


def verify(arch: str, paths: Sequence[str], staging: Sequence[str] = (), remainder: str = "") -> Action:
    """*remainder*: what followed a standalone `--` on the command line (more paths; invoke joins them with spaces,
    so a path with a space in it needs --path)."""
    everything = [*paths, *shlex.split(remainder)]

    def action(ctx: Context) -> list[Row]:
        return verify_mod.run(ctx, parse_arch(arch), [parse_path("--path", p) for p in everything],
                              [parse_path("--staging", s) for s in staging])
    return action


def parity(arch: str, paths: Sequence[str]) -> Action:
    def action(ctx: Context) -> list[Row]:
        if not paths:
            raise UsageError("parity: pass --path <site-packages or staging folder>")
        folders = [parse_path("--path", p) for p in paths]
        missing = [str(p) for p in folders if not p.is_dir()]
        if missing:
            raise UsageError(f"parity --path {missing[0]}: not a folder")
        present = parity_mod.installed(folders)
        return parity_mod.check(ctx.config, parse_arch(arch), present, ", ".join(paths))
    return action


def floors(check: str | None, record: bool, previous: str | None) -> Action:
    def action(ctx: Context) -> list[Row]:
        report = optional_path("--check", check)
        older = optional_path("--previous", previous)
        if report is None and older is None:
            raise UsageError("floors: pass --check REPORT and/or --previous OLD_VERSIONS_TOML")
        if record and report is None:
            raise UsageError("floors --record needs --check REPORT")
        old = previous_floors(older, ctx.config.root) if older is not None else None
        return floors_mod.run(ctx.config.floors, ctx.build_root, report=report, record_it=record, previous=old)
    return action


def previous_floors(path: Path, root: Path) -> Mapping[Arch, int]:
    """[floors] of an older versions.toml (e.g. `git show HEAD~:versions.toml`), its paths read against *root*."""
    fix = "pass an older versions.toml, e.g. git show HEAD~:versions.toml > old.toml"
    data = bounded.read_bytes(path, limit=MAX_CONFIG_BYTES, error=UsageError, fix=fix)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"--previous {path}: not UTF-8", fix=fix) from None
    return config_mod.parse(text, path, root).floors


def consistency(ctx: Context) -> list[Row]:
    root = ctx.config.root
    return (consistency_mod.lint(ctx.config, root) + consistency_mod.lint_sessions(ctx.config, root)
            + consistency_mod.lint_schema(root, ctx.config.registries.smokes) + workflow_mod.lint(root))


def schema(write: bool) -> Action:
    """`invoke schema`: versions.toml's JSON Schema, generated from its declaration; --write updates the committed
    file."""
    def action(ctx: Context) -> list[Row]:
        if write:
            path = jsonschema.write(ctx.config.root, ctx.config.registries.smokes)
            return [Row(component="schema", arch=Scope.ALL, check=Check.POLICY, verdict=Verdict.PASS,
                        reason=f"wrote {path}", subject="schema")]
        print(jsonschema.render(ctx.config.registries.smokes), end="")
        return []
    return action
