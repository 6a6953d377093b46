"""The bare-metal lane of one target: tool root → ExecuTorch source → the cases' bundled programs → one ExecuTorch
build per -march → one runner image per (build, case) → a run on every profile of the build → rows.

Everything that runs a compiler or qemu runs inside the target's tool root (host/toolroot.py); CMake and ninja
are the host's pinned ones, calling the root's compilers through wrapper scripts, so a build is stamped and
cached like the Linux lanes' (inputs: the source pin, the tool root's key, the toolchain file, the arguments).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from crosslane.baremetal import papers
from crosslane.baremetal import run as bm_run
from crosslane.baremetal.toolchain import TOOLS, render_toolchain
from crosslane.config import BareMetalBuild, BareMetalTarget
from crosslane.config.cases import Case
from crosslane.context import Context
from crosslane.errors import CrosslaneError, StepFailed, UsageError
from crosslane.files import atomic, stamps
from crosslane.files.paths import cache_dir
from crosslane.host import toolroot
from crosslane.log import Progress
from crosslane.models import hostenv
from crosslane.recipes.cmake import HOST_FLAG_VARS, host_launchers
from crosslane.registry import suggestion
from crosslane.report import Check, Row, Scope, Verdict
from crosslane.smokes import executorch
from crosslane.sources import pinned

# The bare-metal runner's sources, in the repository beside versions.toml (crosslane may be installed elsewhere:
# CI's jobs install it with `pip install .`).
RUNNER = Path("components") / "baremetal"
OPS = Path(__file__).resolve().parents[1] / "models" / "executorch_ops.py"
SENTINEL = "Test_result: PASS"
COMPONENT = "executorch"


@dataclass(frozen=True)
class Setting:
    """What every step of one target's run shares."""

    ctx: Context
    target: BareMetalTarget
    root: toolroot.ToolRoot
    mode: toolroot.EntryMode
    folder: Path

    @property
    def binds(self) -> list[Path]:
        # The build folder, the cache (sources, programs, ccache), this checkout (the runner's sources), and the
        # temporary folder (compilers' files, the watchdog's monitor socket).
        return [self.ctx.build_root.resolve(), cache_dir().resolve(), self.ctx.config.root.resolve(),
                Path(tempfile.gettempdir())]

    def row(self, build: BareMetalBuild, check: Check, verdict: Verdict, reason: str, *, subject: str = "",
            profile: str = "") -> Row:
        return Row(component=f"{COMPONENT}-{build.name}", arch=Scope(self.target.name), check=check, verdict=verdict,
                   reason=reason, subject=subject, profile=profile)


def cases_for(ctx: Context, target: BareMetalTarget, requested: Sequence[str] = ()) -> list[Case]:
    """The matrix's portable, unquantized cases (no delegate runs without an OS here): its default ones, every
    one with "all", else those named."""
    matrix = ctx.config.cases[target.cases]
    portable = [c for c in matrix.cases() if c.backend == "portable" and not c.quantize
                and c.model not in matrix.exempt]
    if tuple(requested) == ("all",):
        return portable
    known = [c.model for c in portable] + [c.name for c in portable]
    for name in requested:
        if name not in known:
            raise UsageError(f"--case {name}: no portable case of [cases.{matrix.name}] runs on bare metal"
                             f"{suggestion(name, [c.model for c in portable])}")
    wanted = tuple(requested) or matrix.default
    chosen = [c for c in portable if c.model in wanted or c.name in wanted]
    if not chosen:
        raise UsageError(f"[cases.{matrix.name}] default names no portable case to run on bare metal",
                         fix="pass --case MODEL or --case all")
    return chosen


def run_target(ctx: Context, name: str, requested: Sequence[str] = ()) -> list[Row]:
    """`invoke baremetal --target NAME`: every build of the target, every chosen case on every profile."""
    target = ctx.config.baremetal[name]
    root = toolroot.ensure(ctx.runner, ctx.config.toolroots[target.toolroot])
    setting = Setting(ctx, target, root, toolroot.require_mode(ctx.runner), ctx.build_root / target.name)
    source = writable_source(setting)
    cases = cases_for(ctx, target, requested)
    programs = [executorch.export(ctx, case) for case in cases]
    ops = selected_ops(ctx, [p.path for p in programs])
    rows: list[Row] = []
    papers.withdraw(papers.dist_folder(ctx, target.name))  # what this run publishes, nothing an earlier one did
    for build in target.builds:
        with ctx.log.group(f"bare metal: ExecuTorch for {target.name} ({build.name}: {build.march})"):
            runtime_row = build_runtime(setting, build, source, ops)
        runtime = runtime_dir(setting, build)
        rows.append(runtime_row)
        if runtime_row.verdict is Verdict.FAIL:
            continue
        for program in programs:
            if program.case.model in build.exempt:
                rows.append(setting.row(build, Check.SMOKE, Verdict.SKIP, f"exempt: {build.exempt[program.case.model]}",
                                        subject=program.case.name))
                continue
            elf = build_image(setting, build, source, runtime, program)
            if isinstance(elf, Row):
                rows.append(elf)
                continue
            ran = [published(setting, build, program, elf, runtime, source)]
            ran += [run_image(setting, build, profile_name, elf, program.case.name)
                    for profile_name in build.profiles]
            ran += [run_image(setting, build, profile_name, elf, program.case.name, expect_trap=True)
                    for profile_name in build.traps]
            if any(r.verdict is Verdict.FAIL for r in ran):  # only an image that passed every run stays published
                papers.withdraw(papers.dist_folder(ctx, target.name) / build.name / program.case.name)
            rows += ran
    return rows


def expected_trap(row: Row, run: bm_run.Run) -> Row:
    """A V build on a CPU without V must end in a named illegal-instruction trap: PASS on exactly that (read from
    the trap reporter's line, not from the row's text)."""
    if bm_run.trap_cause(run) == bm_run.ILLEGAL_INSTRUCTION:
        return dataclasses.replace(row, verdict=Verdict.PASS, reason=f"expected {row.reason}")
    return dataclasses.replace(row, verdict=Verdict.FAIL, reason=f"expected an illegal-instruction trap (V code on "
                               f"a CPU without V), got: {row.reason}")


def writable_source(setting: Setting) -> Path:
    """A copy of the pinned ExecuTorch source (its CMake writes into the tree), named executorch as its CMake
    insists; made again when the pin changes."""
    ctx, target = setting.ctx, setting.target
    component = ctx.config.components[target.source]
    fetched = pinned.fetch(ctx.runner, component, ctx.config.sysroot, arch=target.name)
    dest = setting.folder / "src" / "executorch"
    marker = setting.folder / "src" / ".crosslane-source"
    if marker.is_file() and marker.read_text() == fetched.identity and dest.is_dir():
        return dest
    ctx.log.info(f"    copy {fetched.served_by} → {dest}")
    with atomic.replace_dir(dest.parent) as staging:
        shutil.copytree(fetched.path, staging / "executorch", symlinks=True)
        (staging / marker.name).write_text(fetched.identity)
    return dest


def selected_ops(ctx: Context, programs: Sequence[Path]) -> list[str]:
    """The operators the programs call: the selective build registers exactly these portable kernels."""
    python = hostenv.python_for(ctx.runner, ctx.config.hostenvs[executorch.HOSTENV])
    result = ctx.runner.run([python, OPS, *programs], timeout=600, quiet=True)
    try:
        ops = json.loads(result.output.strip().splitlines()[-1])
    except (IndexError, ValueError) as exc:
        raise StepFailed(f"{OPS.name} printed no operator list ({exc})", detail=result.output[-2000:]) from None
    assert isinstance(ops, list) and all(isinstance(op, str) for op in ops)
    return ops


def _tools(setting: Setting, folder: Path) -> dict[str, Path]:
    """The wrapper scripts that run the root's cross tools from CMake (written when their text changes)."""
    tools = {}
    for tool in TOOLS:
        path = folder / "bin" / f"riscv64-unknown-elf-{tool}"
        text = toolroot.wrapper_script(setting.root, f"riscv64-unknown-elf-{tool}", binds=setting.binds,
                                       mode=setting.mode)
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic.write_text(path, text)
            path.chmod(0o755)
        tools[tool] = path
    return tools


def _cmake(setting: Setting, label: str, configure: list[str], build_dir: Path) -> None:
    tools = setting.ctx.tools()
    progress = Progress(setting.ctx.log, label)

    def on_line(line: str) -> None:
        if line.startswith("[") and "/" in line.split("]")[0]:
            progress.advance(0, line.split("]")[0] + "]")

    # ccache for the cross compiles (through the wrapper scripts) and for the host tools ExecuTorch builds in its
    # ExternalProjects (flatc, flatcc): once per job, not once per -march.
    env = {"CCACHE_BASEDIR": str(setting.ctx.build_root.resolve()), "CCACHE_NOHASHDIR": "1",
           **host_launchers(setting.ctx.runner.find("ccache"))}
    try:
        setting.ctx.runner.run([str(tools.cmake), *configure, "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={tools.ninja}"],
                               timeout=1800, env=env, unset=HOST_FLAG_VARS)
        setting.ctx.runner.run([str(tools.cmake), "--build", str(build_dir), "--parallel"], timeout=7200,
                               on_line=on_line, env=env, unset=HOST_FLAG_VARS)
    finally:
        progress.close()


def runtime_dir(setting: Setting, build: BareMetalBuild) -> Path:
    """The build tree build_runtime makes for *build*: the libraries an image links lie across it."""
    return setting.folder / build.name / "executorch"


def build_runtime(setting: Setting, build: BareMetalBuild, source: Path, ops: Sequence[str]) -> Row:
    """ExecuTorch's portable runtime, bundled-program support and the selected kernels for one -march."""
    ctx, target = setting.ctx, setting.target
    folder = setting.folder / build.name
    build_dir = runtime_dir(setting, build)
    tools = _tools(setting, folder)
    toolchain_text = render_toolchain(target, build, tools)
    toolchain_file = folder / "toolchain.cmake"
    python = hostenv.python_for(ctx.runner, ctx.config.hostenvs[executorch.HOSTENV])
    configure = ["-S", str(source), "-B", str(build_dir), f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file}",
                 "-DCMAKE_BUILD_TYPE=Release", f"-DPYTHON_EXECUTABLE={python}",
                 *(arg.replace("{source}", str(source)) for arg in target.cmake_args),
                 f"-DEXECUTORCH_SELECT_OPS_LIST={','.join(ops)}"]
    inputs = {"source": (source.parent / ".crosslane-source").read_text(), "toolroot": setting.root.key,
              "toolchain": toolchain_text, "configure": configure, "cmake": ctx.config.tools.cmake}
    key = stamps.key(inputs)
    # The whole build tree is the output: the libraries lie across it, and a deleted one must rebuild.
    if stamps.is_current(folder, key, outputs=build_dir):
        return setting.row(build, Check.BUILD, Verdict.PASS, "up to date (skipped)")
    stamps.clear(folder)
    atomic.write_text(toolchain_file, toolchain_text)
    started = time.monotonic()
    try:
        _cmake(setting, f"build ExecuTorch ({target.name} {build.name})", configure, build_dir)
    except StepFailed as exc:
        ctx.log.error(exc.message)
        if exc.detail:
            ctx.log.info(exc.detail)
        return setting.row(build, Check.BUILD, Verdict.FAIL, "ExecuTorch build failed; see the output tail above")
    stamps.write(folder, key, inputs, outputs=build_dir,
                 facts={"seconds": round(time.monotonic() - started, 1)})
    return setting.row(build, Check.BUILD, Verdict.PASS, f"built ({len(ops)} operators: {', '.join(ops)})")


def build_image(setting: Setting, build: BareMetalBuild, source: Path, runtime: Path,
                program: executorch.Program) -> Path | Row:
    """The runner with the case's bundled program linked in, or a FAIL row when it does not link."""
    folder = setting.folder / build.name / "images" / program.case.name
    toolchain_file = setting.folder / build.name / "toolchain.cmake"
    configure = ["-S", str(setting.ctx.config.root / RUNNER), "-B", str(folder),
                 f"-DCMAKE_TOOLCHAIN_FILE={toolchain_file}", "-DCMAKE_BUILD_TYPE=Release",
                 f"-DEXECUTORCH_SOURCE={source}", f"-DEXECUTORCH_BUILD={runtime}", f"-DPROGRAM_FILE={program.path}",
                 f"-DRUNNER_RTOL={program.rtol}", f"-DRUNNER_ATOL={program.atol}"]
    try:
        _cmake(setting, f"link {program.case.name} ({setting.target.name} {build.name})", configure, folder)
    except StepFailed as exc:
        setting.ctx.log.error(exc.message)
        return setting.row(build, Check.BUILD, Verdict.FAIL, f"the {program.case.name} image does not link: "
                           f"{exc.message}", subject=program.case.name)
    return folder / "executorch_runner"


def published(setting: Setting, build: BareMetalBuild, program: executorch.Program, elf: Path, runtime: Path,
              source: Path) -> Row:
    """The image with its papers in the target's dist/ folder (baremetal/papers.py): a PASS row naming it, or a FAIL
    naming what the papers cannot account for."""
    case = program.case.name
    try:
        where = papers.publish(setting.ctx, setting.target.name, build, setting.root, program, elf, runtime, source,
                               {"march": build.march})
    except CrosslaneError as exc:
        return setting.row(build, Check.ARTIFACT, Verdict.FAIL, exc.one_line(), subject=case)
    texts = sum(1 for p in (where / "LICENSES").rglob("*") if p.is_file())
    return setting.row(build, Check.ARTIFACT, Verdict.PASS, f"published with {texts} licence texts, its SBOM and "
                       f"provenance: {where}", subject=case)


def run_image(setting: Setting, build: BareMetalBuild, profile_name: str, elf: Path, case: str, *,
              expect_trap: bool = False) -> Row:
    """One image on one profile under qemu-system in the tool root, bounded by the watchdog."""
    target = setting.target
    profile = target.profile(profile_name)
    with tempfile.TemporaryDirectory(prefix="cl-bm-") as tmp:
        monitor = Path(tmp) / "monitor.sock"
        nonce = bm_run.new_nonce()
        # Semihosting (target=native) lets the image open files and run commands where qemu runs: the root holds
        # only the image's folder (read-only) and the monitor's, no network, and the root itself is read-only (the
        # cached qemu later runs use).
        argv = toolroot.command(setting.root, bm_run.qemu_command(target.qemu, profile.cpu, elf, monitor, nonce=nonce),
                                binds=[Path(tmp)], read_only=[elf.parent], cwd=elf.parent, mode=setting.mode,
                                network=False, sealed=True)
        started = time.monotonic()
        with bm_run.Watchdog(monitor, target.timeout) as watchdog:
            result = setting.ctx.runner.run(argv, check=False, quiet=True, timeout=target.timeout + 60)
        seconds = time.monotonic() - started
    outcome = bm_run.Run(output=result.output, returncode=None if result.timed_out else result.returncode,
                         seconds=seconds,
                         hang_pc=watchdog.pc, hung=watchdog.fired, nonce=nonce)
    verdict, reason = bm_run.verdict(outcome, elf, SENTINEL, timeout=target.timeout)
    row = setting.row(build, Check.SMOKE, verdict, f"{reason} [{seconds:.1f}s]", subject=case, profile=profile_name)
    if expect_trap:
        row = expected_trap(row, outcome)
    setting.ctx.log.info(f"    {case}@{profile_name} ({build.name}): {row.verdict.value} [{seconds:.1f}s]")
    return row
