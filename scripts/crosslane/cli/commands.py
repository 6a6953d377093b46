"""What the invoke tasks and nox sessions call. Errors are caught here, once."""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import assert_never

from crosslane import config as config_mod
from crosslane import report
from crosslane.archs import KNOWN_ARCHS, Arch
from crosslane.cli import actions
from crosslane.cli.arguments import optional_path, parse_path
from crosslane.cli.matrix import plan
from crosslane.context import Context
from crosslane.errors import (
    CrosslaneError,
    MissingPrerequisite,
    StepFailed,
    Terminated,
    UsageError,
    VerdictFailed,
)
from crosslane.files import paths, userpaths
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.registry import suggestion
from crosslane.report import Check, Row
from crosslane.reports import build as buildreport
from crosslane.reports import diff as reportdiff
from crosslane.reports import summary

Action = Callable[[Context], list[report.Row]]


def parse_arch(value: str) -> Arch:
    if value not in KNOWN_ARCHS:
        raise UsageError(f"--arch: unknown arch '{value}' (known: {', '.join(KNOWN_ARCHS)})")
    return Arch(value)


def parse_sources(values: Sequence[str], known: Sequence[str]) -> dict[str, Path]:
    sources = {}
    for value in values:
        name, sep, where = value.partition("=")
        if not sep or not name or not where:
            raise UsageError(f"--source {value!r}: expected NAME=PATH")
        if name not in known:
            raise UsageError(f"--source {name}={where}: unknown component '{name}'{suggestion(name, list(known))}")
        path = Path(where).expanduser().resolve()
        if not path.is_dir():
            raise UsageError(f"--source {name}={where}: not a folder")
        sources[name] = path
    return sources


def parse_cases(cases: Sequence[str], cfg: config_mod.Config) -> tuple[str, ...]:
    """--case values: "all", or models of a [cases.*] matrix (a name that selects nothing is an error, not a run of
    nothing that passes)."""
    known = sorted({model for matrix in cfg.cases.values() for model in matrix.models})
    for case in cases:
        if case != "all" and case not in known:
            raise UsageError(f"--case {case}: not a model of any [cases.*] matrix{suggestion(case, known)}",
                             fix="name a model of versions.toml's [cases.*], or --case all")
    if "all" in cases and len(cases) > 1:
        raise UsageError("--case all with other cases: all already runs every case", fix="pass --case all alone")
    return tuple(cases)


def parse_builds(values: Sequence[str]) -> tuple[str, ...]:
    """--build values: each holds identifier patterns, space-separated as CROSSLANE_BUILD's; one that holds none
    would select every build, the opposite of a selection."""
    for value in values:
        if not value.split():
            raise UsageError(f"--build {value!r}: no build identifier pattern", fix="e.g. --build 'cp314-*'")
    return tuple(pattern for value in values for pattern in value.split())


def run(action: Action, *, debug: bool = False, dry_run: bool = False, json_path: str | None = None,
        config_path: str | None = None, sources: Sequence[str] = (), wheels: Sequence[str] = (),
        cases: Sequence[str] = (), builds: Sequence[str] = (), stream_summary: bool = True) -> int:
    """Build the command's one Context from its options, run *action*, show and write the rows, and map the
    outcome to the exit code (errors caught once, one line each; a traceback only with --debug)."""
    debug = debug or os.environ.get("CROSSLANE_DEBUG") == "1"
    log = Log(verbose=debug)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        paths.check_places()
        json_file = optional_path("--json", json_path)
        if json_file is not None:
            userpaths.claim_file("--json", json_file)  # refused before the work, not after it
        cfg = config_mod.load(optional_path("--config", config_path))
        given: dict[str, tuple[Path, ...]] = {}
        if wheels:
            given = actions.wheels(cfg, wheels)
        ctx = Context(cfg, Runner(log, dry_run=dry_run), sources=parse_sources(sources, list(cfg.components)),
                      wheels=given, cases=parse_cases(cases, cfg), builds=parse_builds(builds))
        rows = action(ctx)
        show(ctx, rows, json_file, stream_summary=stream_summary)
    except CrosslaneError as exc:
        if debug:
            traceback.print_exc()
        log.error(exc.one_line())
        if exc.detail:
            log.info(exc.detail)
        return exc.exit_code
    except OSError as exc:
        # A folder crosslane must write (cache, build tree, --json file) is not writable, or the disk is full.
        if debug:
            traceback.print_exc()
        where = exc.filename or "a file"
        log.error(MissingPrerequisite(f"{where}: {exc.strerror or exc}",
                                      fix="check the path, its permissions and free space").one_line())
        return MissingPrerequisite.exit_code
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    except Terminated:
        log.error("terminated (SIGTERM); partial work removed")
        return Terminated.exit_code
    return exit_code(log, rows)


def show(ctx: Context, rows: Sequence[Row], json_file: Path | None, *, stream_summary: bool) -> None:
    """The summary table and the run's stages on stdout, the Markdown in the step summary, the --json file."""
    if stream_summary and rows:
        stages = ctx.ledger.summary()
        print(summary.table(rows))
        if stages:
            print("\n" + summary.stage_table(stages))
        append_step_summary(summary.markdown(rows, stages))
    if json_file is not None:
        summary.write_json(rows, json_file)


def exit_code(log: Log, rows: Sequence[Row]) -> int:
    """0 when no row failed; else the code of the gravest kind of failure among them, said in one line."""
    failures = summary.failed(rows)
    if not failures:
        return 0
    kinds = {failure_kind(r) for r in failures}
    if StepFailed in kinds:
        log.error(StepFailed(f"{len(failures)} of {len(rows)} checks failed, a build among them").one_line())
        return StepFailed.exit_code
    if MissingPrerequisite in kinds:
        log.error(MissingPrerequisite(f"{len(failures)} of {len(rows)} checks failed, a missing prerequisite "
                                      "among them", fix="see the fix in its row above").one_line())
        return MissingPrerequisite.exit_code
    log.error(VerdictFailed(f"{len(failures)} of {len(rows)} checks failed").one_line())
    return VerdictFailed.exit_code


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def append_step_summary(text: str) -> None:
    """Add Markdown to the job's summary page under GitHub Actions ($GITHUB_STEP_SUMMARY); nothing elsewhere."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(text)


def failure_kind(row: report.Row) -> type[StepFailed | MissingPrerequisite | VerdictFailed]:
    """A build that failed is an external command that failed (exit 5); a failed preflight, setup or sysroot
    row is a missing prerequisite (3: the machine lacks something, with its fix); every other failure is a
    verdict (1)."""
    match row.check:
        case Check.BUILD:
            return StepFailed
        case Check.SETUP | Check.SYSROOT | Check.PREFLIGHT:
            return MissingPrerequisite
        case (Check.SOURCE | Check.PATCH | Check.ARTIFACT | Check.GATE | Check.INSTALL | Check.SMOKE
              | Check.PROVENANCE | Check.PARITY | Check.TESTS | Check.POLICY | Check.FLOOR | Check.INDEX
              | Check.REPRO | Check.WORKFLOW):
            return VerdictFailed
        case _:
            assert_never(row.check)


def diff_reports(old: Path | str, new: Path | str, *, debug: bool = False) -> int:
    """`invoke report-diff OLD NEW`: one line per change between two reports."""
    try:
        old_path, new_path = parse_path("OLD", str(old)), parse_path("NEW", str(new))
        changes = reportdiff.diff(reportdiff.load(old_path), reportdiff.load(new_path))
    except CrosslaneError as exc:
        if debug or os.environ.get("CROSSLANE_DEBUG") == "1":
            traceback.print_exc()
        Log().error(exc.one_line())
        return exc.exit_code
    print("\n".join(changes) if changes else f"no changes between {old} and {new}")
    return 0


def merge_reports(given_folder: Path | str | None, given_output: Path | str | None, *, debug: bool = False) -> int:
    """`invoke report`: every job's rows in one JSON and one Markdown report (verdicts per stage first)."""

    def action(ctx: Context) -> list[report.Row]:
        folder = optional_path("--input", None if given_folder is None else str(given_folder))
        output = optional_path("--output", None if given_output is None else str(given_output))
        if folder is None or output is None:
            raise UsageError("invoke report needs --input FOLDER and --output PREFIX",
                             fix="invoke report --input downloaded --output build/reports/report")
        if not folder.is_dir():
            raise UsageError(f"{folder}: no such folder", fix="pass the folder the job reports were downloaded to")
        if not output.name or output.name in (".", "..") or output.is_dir():
            raise UsageError(f"--output {output}: a path prefix names files (PREFIX.json, PREFIX.md), not a folder",
                             fix="e.g. --output build/reports/report")
        written = (output.with_suffix(".json"), output.with_suffix(".md"))
        for each in written:
            userpaths.claim_file("--output", each)
        merged = summary.merge(folder)
        rows, used = merged.rows, merged.reports
        if not used:
            raise UsageError(f"{folder}: no --json report in it", fix="run the jobs with --json FILE")
        facts = buildreport.merge_facts(folder)
        data = {**facts, "rows": json.loads(summary.to_json(rows)), "jobs": len(used)}
        userpaths.write_file("--output", written[0], json.dumps(data, indent=1, sort_keys=True) + "\n")
        userpaths.write_file("--output", written[1], f"{len(used)} job reports, {len(rows)} rows.\n\n" +
                             buildreport.markdown(data))
        ctx.log.info(f"    {len(used)} reports → {written[0]}, {written[1]}")
        return rows

    return run(action, debug=debug)


def exit_with(code: int) -> None:
    if code:
        sys.exit(code)


def print_matrix(*, config_path: str | None = None, event: str = "push", arch: str = "", component: str = "",
                 changed: str = "") -> int:
    def action(ctx: Context) -> list[report.Row]:
        print(plan(ctx.config, event=event, arch=arch, component=component, changed=changed.split()).github_output())
        return []

    return run(action, config_path=config_path)
