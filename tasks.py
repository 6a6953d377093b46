"""Invoke tasks: parse arguments, call crosslane. `invoke --list` shows them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from invoke.context import Context
from invoke.tasks import task

from crosslane.archs import KNOWN_ARCHS
from crosslane.cli import actions, arguments, commands, gate_tasks, invoke_errors
from crosslane.context import Context as CrosslaneContext
from crosslane.localci import check as actions_check
from crosslane.report import Row
from crosslane.run import artifacts, overlap, pipeline, plan

invoke_errors.route_parse_errors()  # `--cpu --json`: crosslane's one error line and exit 2, not invoke's exit 1

ARCH_HELP = f"target arch: {', '.join(KNOWN_ARCHS)}"
COMMON_HELP = {"debug": "show tracebacks", "json": "also write the summary as JSON to this file",
               "config": "path to versions.toml (default: found upward from here)"}


def _run(action: Callable[[CrosslaneContext], list[Row]], *, debug: bool, json: str | None = None,
         config: str | None = None, **options: Any) -> None:
    """Every task's last line: run the action in a Context built from the common options; exit with its code."""
    commands.exit_with(commands.run(action, debug=debug, json_path=json, config_path=config, **options))


@task(help={"arch": ARCH_HELP + " (repeatable; default all)", "dry_run": "print what would be installed",
            **COMMON_HELP}, iterable=["arch"])
def setup(c: Context, arch: list[str], dry_run: bool = False, debug: bool = False, json: str | None = None,
          config: str | None = None) -> None:
    """Install the host packages and pinned build tools the arches need (apt, non-interactive)."""
    _run(lambda ctx: pipeline.setup(ctx, [commands.parse_arch(a) for a in arch] or list(ctx.config.arches)),
         debug=debug, dry_run=dry_run, json=json, config=config)


@task(help={"arch": ARCH_HELP, "dry_run": "print the apt commands only", **COMMON_HELP})
def sysroot(c: Context, arch: str, dry_run: bool = False, debug: bool = False, json: str | None = None,
            config: str | None = None) -> None:
    """Build (or reuse) the Debian sysroot of an arch from versions.toml's package list (and its qemu-user tool root
    where arches.<arch>.emulator names one)."""
    _run(lambda ctx: pipeline.sysroots(ctx, [commands.parse_arch(arch)]), debug=debug, dry_run=dry_run, json=json,
         config=config)


BUILD_HELP = ("wheel build identifiers to make, cibuildwheel's patterns (cp314-*, *-linux_riscv64; repeatable; "
              "default: every one versions.toml declares, or CROSSLANE_BUILD)")


@task(help={"arch": ARCH_HELP, "component": "component to build (repeatable; default: the arch's list)",
            "dry_run": "print every command without running it", "force": "rebuild even when up to date",
            "source": "NAME=PATH: build NAME from a local checkout (unverified)", "build": BUILD_HELP, **COMMON_HELP},
      iterable=["component", "source", "build"])
def build(c: Context, arch: str, component: list[str], source: list[str], build: list[str], dry_run: bool = False,
          force: bool = False, debug: bool = False, json: str | None = None, config: str | None = None) -> None:
    """Cross-build components for an arch; a second run with nothing changed skips every step."""
    _run(lambda ctx: pipeline.build_components(ctx, commands.parse_arch(arch), component, force=force),
         debug=debug, dry_run=dry_run, json=json, config=config, sources=source, builds=build)


@task(help={"arch": ARCH_HELP, "component": "component whose sources to stage (repeatable; default: the arch's list)",
            **COMMON_HELP}, iterable=["component"])
def sources(c: Context, arch: str, component: list[str], debug: bool = False,
            json: str | None = None, config: str | None = None) -> None:
    """Fetch and verify every pinned source a job needs into the cache (then CROSSLANE_OFFLINE=1 builds offline)."""
    _run(lambda ctx: pipeline.stage_sources(ctx, commands.parse_arch(arch), component), debug=debug, json=json,
         config=config)


@task(help={"arch": ARCH_HELP, "component": "component to smoke (repeatable; default: the arch's list)",
            "cpu": "one CPU profile instead of all",
            "wheel": "smoke this wheel (installed for the target with its dependencies)",
            "case": "[cases.*] models to run (repeatable; 'all' for every case; default: the matrix's default)",
            **COMMON_HELP},
      iterable=["component", "wheel", "case"])
def smoke(c: Context, arch: str, component: list[str], wheel: list[str], case: list[str], cpu: str = "",
          debug: bool = False, json: str | None = None, config: str | None = None) -> None:
    """Run the components' smokes under qemu-user on every CPU profile of an arch, in parallel."""
    _run(lambda ctx: pipeline.smoke_components(ctx, commands.parse_arch(arch), component, cpu or None),
         debug=debug, json=json, config=config, wheels=wheel, cases=case)


@task(help={"arch": ARCH_HELP, "component": "check this component (repeatable; default: the arch's list)",
            "json": "print the findings as JSON (one record per check) instead of the table",
            "debug": COMMON_HELP["debug"], "config": COMMON_HELP["config"]}, iterable=["component"])
def preflight(c: Context, arch: str, component: list[str], json: bool = False, debug: bool = False,
                config: str | None = None) -> None:
    """Check every prerequisite of an arch's build and smoke at once; each problem comes with its fix."""
    _run(lambda ctx: actions.preflight(ctx, commands.parse_arch(arch),
                                       plan.components_for(ctx.config, commands.parse_arch(arch), component),
                                       as_json=json),
         debug=debug, config=config, stream_summary=False)


@task(help={"arch": ARCH_HELP, "component": "only this component and what it needs (repeatable; default: the "
                                            "arch's job)", "dry_run": "print the plan; build, run and write nothing",
            "build": BUILD_HELP, "smokes": "when smokes run: beside (as soon as the builds they read passed, while "
                                            "later builds compile), after (once every build ended), auto (beside "
                                            f"with {overlap.BESIDE_FROM_CORES} cores or more; the default)",
            **COMMON_HELP}, iterable=["component", "build"])
def all(c: Context, arch: str, component: list[str], build: list[str], smokes: str = "auto",  # noqa: A001
        dry_run: bool = False, debug: bool = False, json: str | None = None, config: str | None = None) -> None:
    """Setup, sysroots, build (with the amd64 control where a smoke compares with it) and smoke: what nox
    build-<arch> and build-<arch>-<component> run."""
    _run(lambda ctx: pipeline.run_arch(ctx, commands.parse_arch(arch), component, smokes=smokes), debug=debug,
         dry_run=dry_run, json=json, config=config, builds=build)


@task(name="upstream-tests",
      help={"arch": ARCH_HELP, "component": "component whose upstream tests to run (repeatable; default: every one "
                                            "that declares tests)", "cpu": "one CPU profile instead of all",
            "wheel": "test this wheel instead of the lane's (pytest suites)", "build": BUILD_HELP,
            "dry_run": "print the plan; build, run and write nothing", **COMMON_HELP},
      iterable=["component", "wheel", "build"])
def upstream_tests(c: Context, arch: str, component: list[str], wheel: list[str], build: list[str], cpu: str = "",
                   dry_run: bool = False, debug: bool = False,
                   json: str | None = None, config: str | None = None) -> None:
    """Build what the components' upstream test suites need, run them on every CPU profile (and on the amd64
    control, for parity), one row per profile: what nox tests-<arch>-<component> runs."""
    _run(lambda ctx: pipeline.run_tests(ctx, plan.for_tests(ctx.config, commands.parse_arch(arch), component,
                                                            cpu or None)),
         debug=debug, dry_run=dry_run, json=json, config=config, wheels=wheel, builds=build)


@task(help={"target": "bare-metal target (versions.toml [baremetal.*]: rv64-elf, rv32-elf)",
            "case": "[cases.*] models (repeatable; 'all': every portable case; default: the matrix's default)",
            **COMMON_HELP}, iterable=["case"])
def baremetal(c: Context, target: str, case: list[str], debug: bool = False,
              json: str | None = None, config: str | None = None) -> None:
    """Bare metal: ExecuTorch built per -march in the tool root, each case's image run on every profile under
    qemu-system (a trap or a hang is a FAIL row that names it)."""
    _run(lambda ctx: pipeline.run_baremetal(ctx, target, case), debug=debug, json=json, config=config)


@task(help={"config": COMMON_HELP["config"], "event": "the GitHub event (push, pull_request, schedule, …)",
            "arch": "only this arch", "component": "only this component",
            "changed": "files a pull request changed (space-separated): builds run only when one is a build input"})
def matrix(c: Context, config: str | None = None, event: str = "push", arch: str = "", component: str = "",
           changed: str = "") -> None:
    """Print the GitHub Actions plan derived from versions.toml (run=, build=, smoke= lines for $GITHUB_OUTPUT)."""
    commands.exit_with(commands.print_matrix(config_path=config, event=event, arch=arch,
                                             component=component, changed=changed))


@task(help={"write": "update the committed scripts/crosslane/config/versions.schema.json instead of printing it",
            **COMMON_HELP})
def schema(c: Context, write: bool = False, debug: bool = False,
           json: str | None = None, config: str | None = None) -> None:
    """versions.toml's JSON Schema (editors: taplo, Even Better TOML), generated from its declaration."""
    _run(gate_tasks.schema(write), debug=debug, json=json, config=config)


@task(help={"component": "component whose patch series to check or apply", "arch": ARCH_HELP,
            "source_dir": "patch this tree in place (default: the build's working copy of the pinned source)",
            "check": "change nothing; exit 1 unless every patch for the arch is APPLIED", **COMMON_HELP},
      auto_shortflags=False)  # an automatic -h for --check would shadow --help
def patch(c: Context, component: str, arch: str, source_dir: str | None = None, check: bool = False,
          debug: bool = False, json: str | None = None, config: str | None = None) -> None:
    """Plan, then apply a component's patch series for an arch: one row per patch (exit 4 on a conflict)."""
    _run(lambda ctx: actions.patch(ctx, component, commands.parse_arch(arch), source_dir, check=check),
         debug=debug, json=json, config=config)


@task(help={"arch": ARCH_HELP, "path": "a wheel, folder or ELF file (repeatable; more after --)",
            "staging": "an install prefix DT_NEEDED may resolve against (repeatable)", **COMMON_HELP},
      iterable=["path", "staging"])
def verify(c: Context, arch: str, path: list[str], staging: list[str], debug: bool = False, json: str | None = None,
           config: str | None = None) -> None:
    """Run the artifact gates (ELF arch, wheel, EXT_SUFFIX, DT_NEEDED) on wheels, folders and ELF files."""
    _run(gate_tasks.verify(arch, path, staging, c.remainder), debug=debug, json=json, config=config)


@task(help={"arch": ARCH_HELP, "path": "site-packages or staging folder (repeatable)", **COMMON_HELP},
      iterable=["path"])
def parity(c: Context, arch: str, path: list[str], debug: bool = False,
           json: str | None = None, config: str | None = None) -> None:
    """ARCH-PARITY: every distribution versions.toml builds for the arch is installed, or exempt with a reason."""
    _run(gate_tasks.parity(arch, path), debug=debug, json=json, config=config)


@task(help={"check": "a --json report: fail when a passed-smoke count is below its floor",
            "record": "also record the report as an observation (build/reports/observations)",
            "previous": "an older versions.toml: refuse lowering floors, or raising them without two runs",
            **COMMON_HELP})
def floors(c: Context, check: str | None = None, record: bool = False, previous: str | None = None, debug: bool = False,
           json: str | None = None, config: str | None = None) -> None:
    """Per-arch floors of components whose smoke passed; floors only go up."""
    _run(gate_tasks.floors(check, record, previous), debug=debug, json=json, config=config)


@task(help=COMMON_HELP)
def consistency(c: Context, debug: bool = False, json: str | None = None, config: str | None = None) -> None:
    """Lint: pins, toggles and arch lists in workflows, noxfile and README agree with versions.toml."""
    _run(gate_tasks.consistency, debug=debug, json=json, config=config)


@task(help={"arch": ARCH_HELP, "component": "the built component to pack", "output": "the .tar.gz to write",
            **COMMON_HELP})
def pack(c: Context, arch: str, component: str, output: str, debug: bool = False, json: str | None = None,
         config: str | None = None) -> None:
    """Pack a built component (install folder and stamp) into one file, for a later job's `invoke unpack`."""
    _run(lambda ctx: artifacts.pack(ctx, commands.parse_arch(arch), component,
                                      arguments.parse_path("--output", output)), debug=debug,
         json=json, config=config)


@task(help={"arch": ARCH_HELP, "component": "a cmake-wheel component (repeatable; default: every one the arch builds)",
            "output": "the index folder (default build/<arch>/index)",
            "input": "index every wheel under this folder instead (CI's downloaded artifacts)", **COMMON_HELP},
      iterable=["component"])
def index(c: Context, component: list[str], arch: str = "", output: str | None = None,
          input: str | None = None,  # noqa: A002
          debug: bool = False, json: str | None = None, config: str | None = None) -> None:
    """A PEP 503 index of the built wheels, with their hashes and provenance: pip install --index-url file:///…"""
    _run(lambda ctx: pipeline.publish_index(ctx, commands.parse_arch(arch) if arch else None, component,
                                            arguments.optional_path("--output", output),
                                            arguments.optional_path("--input", input)),
         debug=debug, json=json, config=config)


@task(help={"arch": ARCH_HELP, "component": "a component to build twice and compare (repeatable)",
            "keep": "keep both clones and builds even when they agree", **COMMON_HELP}, iterable=["component"])
def repro(c: Context, arch: str, component: list[str], keep: bool = False, debug: bool = False, json: str | None = None,
          config: str | None = None) -> None:
    """Build each component twice, from two clones at two paths under varied conditions, and compare every output
    by sha256 (diffoscope names what differs): what nox repro-<arch>-<component> runs."""
    _run(lambda ctx: pipeline.reproducibility(ctx, commands.parse_arch(arch), component, keep=keep), debug=debug,
         json=json, config=config)


@task(help={"input": "a file `invoke pack` wrote", **COMMON_HELP})
def unpack(c: Context, input: str, debug: bool = False,  # noqa: A002
           json: str | None = None, config: str | None = None) -> None:
    """Put a packed component back into the build tree (checked like any downloaded archive)."""
    _run(lambda ctx: artifacts.unpack(ctx, arguments.parse_path("--input", input)), debug=debug, json=json,
         config=config)


@task(help={"input": "folder searched for --json reports (e.g. downloaded CI artifacts)",
            "output": "path prefix: writes PREFIX.json and PREFIX.md", "debug": COMMON_HELP["debug"]})
def report(c: Context, input: str | None = None, output: str | None = None, debug: bool = False) -> None:  # noqa: A002
    """Merge every job's JSON report into one report (JSON and Markdown), as CI's report job does."""
    commands.exit_with(commands.merge_reports(input, output,
                                              debug=debug))


@task(help={"old": "the earlier report JSON", "new": "the later report JSON", "debug": COMMON_HELP["debug"]},
      positional=["old", "new"])
def report_diff(c: Context, old: str, new: str, debug: bool = False) -> None:
    """What changed between two build reports: pins and versions, verdicts, sizes, timings (one line each).

    invoke report-diff OLD.json NEW.json  (a task of its own: invoke cannot give --diff two values)"""
    commands.exit_with(commands.diff_reports(old, new, debug=debug))


@task(name="actions",
      help={"leg": "run this leg only (repeatable; default every leg: lint, plan-push, plan-pull-request, "
                   "plan-schedule, control, upstream, baremetal, chain, tests)",
            "repo": "run the committed state of this clone instead of this repository's", **COMMON_HELP},
      iterable=["leg"])
def run_actions(c: Context, leg: list[str], repo: str | None = None, debug: bool = False, json: str | None = None,
                config: str | None = None) -> None:
    """Run .github/workflows/ci.yml under act (a real Actions engine), offline: lint, plan, tests and one real leg
    of every other job kind, each job's verdict and time: what nox -s actions runs."""
    _run(lambda ctx: actions_check.run(ctx, leg, arguments.optional_path("--repo", repo)), debug=debug, json=json,
         config=config)
