"""The ExecuTorch smoke: a [cases.*] matrix run by the component's own executor_runner under qemu.

Each case (model × backend × quantize) is exported on the host to a bundled program with reference outputs
(models/executorch_export.py in the [hostenvs.executorch] venv, cached by every input) and run on each of the
backend's CPU profiles. A run passes only on positive evidence, all of it:
  - the runner's `Test_result: PASS` line (it compares test case 0 with the reference, rtol/atol given), and
  - its error statistics for that case within the same tolerances (read from the log, not trusted blindly), and
  - the reference output's mean |y| of at least MIN_MAGNITUDE, so an absolute tolerance cannot pass a model
    whose outputs are all near zero, and
  - for quantized cases, whose reference is the host's own int8 run, that reference's cosine agreement with
    eager PyTorch of at least MIN_AGREEMENT (a program wrong on every CPU matches itself everywhere).
A signal (SIGILL: XNNPACK's RVV kernels on a CPU without V) or a timeout is a FAIL row naming it, never a
flake. Models the exporter cannot build here are exempt in versions.toml with a reason; any other is FAIL.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from crosslane.archs import Arch
from crosslane.config import Profile
from crosslane.config.cases import Case
from crosslane.context import Context
from crosslane.errors import ConfigError, StepFailed
from crosslane.files import atomic
from crosslane.files.paths import cache_dir
from crosslane.log import Progress
from crosslane.models import executorch_export, hostenv
from crosslane.process import costs
from crosslane.report import Check, Row, Verdict
from crosslane.smokes import contract_call, payload, sentinel, target

MIN_MAGNITUDE = 0.01
# A quantized case's reference is the host's own int8 run (models/executorch_export.py); it must still point where
# eager points (cosine similarity), or the program is wrong on every CPU and matching it proves nothing.
MIN_AGREEMENT = 0.9
# A run's timeout grows with the program's size as well as with the vector length: resnet18's 47 MB take longer
# than add's 2 KB on any CPU (a hang is still bounded, and named, never a flake).
MODEL_BYTES_UNIT = 16e6
# Side by side (one per core), each run with the runner's default threadpool on every core (THREADS None: qemu-user's
# threads are host threads): single-threaded runs side by side are no faster, and they would stop running XNNPACK's
# threadpool, code the smoke proves (bench_executorch; docs/architecture.md, on what a run costs).
PARALLEL = True
THREADS: int | None = None  # the runner's --cpu_threads (the bench sets 1 to measure the matrix's own parallelism)
HOSTENV = "executorch-aot"
EXPORTER = Path(__file__).resolve().parent.parent / "models" / "executorch_export.py"
RESULT = re.compile(r"Test_result: (PASS|FAIL)")
STAT = re.compile(r"max_(absolute|relative)_error:\s*(\S+)")
EXPORTABLE = tuple(executorch_export.MODELS)


@dataclass(frozen=True)
class Program:
    case: Case
    path: Path
    rtol: float
    atol: float
    magnitude: float
    delegated: int
    agreement: float = 1.0  # cosine similarity of the reference with eager PyTorch's output


def program_key(case: Case, requirements: Sequence[str]) -> str:
    data = {"model": case.model, "backend": case.backend, "quantize": case.quantize,
            "requirements": sorted(requirements), "exporter": hashlib.sha256(EXPORTER.read_bytes()).hexdigest()}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def export(ctx: Context, case: Case) -> Program:
    """The case's .bpte, exported once per (model, backend, quantize, pins, exporter) and cached."""
    requirements = ctx.config.hostenvs.get(HOSTENV)
    if requirements is None:
        raise ConfigError(f"versions.toml: the executorch smoke needs [hostenvs.{HOSTENV}] (torch, executorch)")
    path = cache_dir() / "executorch-programs" / f"{case.name}-{program_key(case, requirements)[:16]}.bpte"
    summary = path.with_suffix(".json")
    if not (summary.is_file() and path.is_file()):
        python = hostenv.python_for(ctx.runner, requirements)
        ctx.log.info(f"    export {case.name} (host, {python.parent.parent.name})")
        argv: list[str | Path] = [python, EXPORTER, "--model", case.model, "--backend", case.backend, "--out", path]
        ctx.runner.run([*argv, *(["--quantize"] if case.quantize else [])], timeout=1800, quiet=True)
    try:
        data = json.loads(summary.read_text())
        return Program(case, path, float(data["rtol"]), float(data["atol"]), float(data["magnitude"]),
                       int(data["delegated_nodes"]), float(data["eager_agreement"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        for left in (summary, path):  # not a cache entry: the next run exports again
            left.unlink(missing_ok=True)
        raise StepFailed(f"{summary}: the exporter left no readable summary ({exc}); removed it and the program",
                         fix="run again (it re-exports); with --debug to see the exporter's output") from None


def decide(output: str, returncode: int, *, timed_out: bool, program: Program) -> tuple[Verdict, str]:
    """The run's verdict from the runner's own lines (see the module docstring for what is required)."""
    if timed_out:
        return Verdict.FAIL, "timed out"
    crash = sentinel.crash_reason(returncode)
    if crash:
        hint = " (XNNPACK's RVV kernels on a CPU without V?)" if crash == "SIGILL" else ""
        return Verdict.FAIL, f"the runner died of {crash}{hint}"
    results = RESULT.findall(output)
    stats = dict(STAT.findall(output))
    if results != ["PASS"]:
        return Verdict.FAIL, f"Test_result {results[-1] if results else 'missing'} (exit {returncode})"
    try:
        absolute, relative = float(stats["absolute"]), float(stats["relative"])
    except (KeyError, ValueError):
        return Verdict.FAIL, "Test_result: PASS but no error statistics in the log"
    if not absolute <= program.atol and not relative <= program.rtol:
        return Verdict.FAIL, f"error statistics over tolerance: max abs {absolute:g}, max rel {relative:g}"
    if program.agreement < MIN_AGREEMENT:
        return Verdict.FAIL, (f"the host's reference agrees with eager only to cosine {program.agreement:.3f} "
                              f"(< {MIN_AGREEMENT}): the quantized program is wrong on every CPU")
    if program.magnitude < MIN_MAGNITUDE:
        return Verdict.FAIL, f"reference outputs of mean |y| {program.magnitude:.2g} make the check meaningless"
    if returncode != 0:
        return Verdict.FAIL, f"Test_result: PASS but exit {returncode}"
    return Verdict.PASS, (f"Test_result: PASS; max abs {absolute:g}, max rel {relative:g} (rtol {program.rtol:g}, "
                          f"atol {program.atol:g}); |y| {program.magnitude:.2g}; {program.delegated} delegated")


MICROKERNEL = re.compile(r"[Uu]sing (?:\w+ )*microkernel '([^']+)'")
TIMING = Path(__file__).resolve().parent.parent / "models" / "executorch_etdump.py"


def microkernels(output: str) -> tuple[str, ...]:
    """The XNNPACK microkernels a run's log says were chosen, each once, in first-use order."""
    return tuple(dict.fromkeys(MICROKERNEL.findall(output)))


@dataclass(frozen=True, kw_only=True)
class Timed:
    run: str  # case@profile
    etdump: Path
    kernels: tuple[str, ...]


def op_tables(ctx: Context, arch: Arch, component: str, timed: Sequence[Timed]) -> tuple[Path, str] | None:
    """Per run: operators with calls and sum/avg/max ms (qemu time, not hardware time) and the XNNPACK
    microkernels the runner registered; logged, written as JSON, and returned as Markdown (the op-timing row's
    detail, which the command adds to $GITHUB_STEP_SUMMARY)."""
    present = [t for t in timed if t.etdump.is_file()]
    if not present:
        return None
    requirements = ctx.config.hostenvs[HOSTENV]
    python = hostenv.python_for(ctx.runner, requirements)
    result = ctx.runner.run([python, TIMING, *[t.etdump for t in present]], timeout=900, quiet=True, check=False)
    try:
        tables = json.loads(result.output.splitlines()[-1])
    except (IndexError, ValueError):
        ctx.log.warn(f"op timing: the etdump reader printed no table ({result.tail(2)})")
        return None
    data = {t.run: {**tables.get(str(t.etdump), {}), "microkernels": list(t.kernels)} for t in present}
    lines = [f"op timing for {component} on {arch} (qemu-user time, not hardware time)"]
    markdown = [f"### {component} on {arch}: op timing (qemu-user time, not hardware time)", "",
                "| run | op | calls | sum ms | avg ms | max ms | microkernels |", "|---|---|---|---|---|---|---|"]
    for run_name, entry in data.items():
        kernels = ", ".join(entry["microkernels"]) or "—"
        for op in entry.get("ops", []):
            lines.append(f"  {run_name:32} {op['op']:28} {op['calls']:4} {op['sum_ms']:9.3f} {op['avg_ms']:9.3f} "
                         f"{op['max_ms']:9.3f}  {kernels}")
            markdown.append(f"| {run_name} | {op['op']} | {op['calls']} | {op['sum_ms']} | {op['avg_ms']} | "
                            f"{op['max_ms']} | {kernels} |")
    ctx.log.info("\n".join(lines))
    path = ctx.build_root / "reports" / f"optiming-{arch.value}-{component}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path, "\n".join(markdown)


def arch_profiles(selected: Sequence[Profile], arch_names: Collection[str], named: Sequence[str]) -> list[Profile]:
    """Which selected profiles a list of names allows: the named ones where the arch defines any of them, all of
    them where it defines none (riscv64's rvv* names restrict riscv64 and say nothing about arm64 or amd64)."""
    if not any(name in arch_names for name in named):
        return list(selected)
    return [p for p in selected if p.name in named]


def smoke(ctx: Context, arch: Arch, component: str, profiles: Sequence[Profile]) -> list[Row]:
    spec = ctx.config.components[component].smoke
    assert spec is not None
    cases_name = spec.text("cases")
    assert cases_name is not None  # its declaration requires it (registry.SMOKES)
    matrix = ctx.config.cases[cases_name]
    backend = "xnnpack" if ctx.config.components[component].options.get("xnnpack") == "on" else "portable"
    wanted = None if ctx.cases == ("all",) else (ctx.cases or matrix.default)
    cases = [c for c in matrix.cases(wanted) if c.backend == backend]
    if not cases:  # a selection that selects nothing is not a smoke that passed
        return [Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                    reason=f"no {backend} case of [cases.{matrix.name}] among {', '.join(wanted or ('every model',))}",
                    subject="cases")]
    runner = ctx.component_dir(arch, component) / "install" / "bin" / "executor_runner"
    if not runner.is_file():
        return [Row(component=component, arch=arch, check=Check.INSTALL, verdict=Verdict.FAIL,
                    reason=f"{runner} missing: invoke build --arch {arch} --component {component}", subject="runner")]
    rows: list[Row] = []
    programs: dict[str, Program] = {}
    for case in cases:
        if case.model in matrix.exempt:
            rows.append(Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.SKIP,
                            reason=f"exempt: {matrix.exempt[case.model]}", subject=case.name))
        elif case.model not in EXPORTABLE:
            rows.append(Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                            reason=f"no exporter for model '{case.model}' and no exemption in "
                            f"cases.{matrix.name}.exempt", subject=case.name))
        else:
            programs[case.name] = export(ctx, case)
    defined = {p.name for p in ctx.config.arches[arch].profiles}
    allowed = arch_profiles(profiles, defined, spec.profiles)
    jobs = [(programs[c.name], p) for c in cases if c.name in programs
            for p in arch_profiles(allowed, defined, c.profiles)]
    progress = Progress(ctx.log, f"executorch {component} ({arch})", total=len(jobs), every=0.0)
    base = spec.timeout

    timed: list[Timed] = []

    def one(job: tuple[Program, Profile]) -> Row:
        program, profile = job
        timeout = payload.timeout_for(base, arch, profile) * (1 + program.path.stat().st_size / MODEL_BYTES_UNIT)
        etdump = ctx.component_dir(arch, component) / "etdump" / f"{program.case.name}@{profile.name}.etdump"
        etdump.parent.mkdir(parents=True, exist_ok=True)
        etdump.unlink(missing_ok=True)  # a table only from what this run wrote, never an earlier run's
        threads = ["--cpu_threads", str(THREADS)] if THREADS is not None else []
        result = target.run(ctx, arch, profile, [runner, "--model_path", program.path, "--etdump_path", etdump,
                                                 "--bundleio_rtol", str(program.rtol), "--bundleio_atol",
                                                 str(program.atol), *threads], timeout=timeout)
        verdict, reason = decide(result.output, result.returncode, timed_out=result.timed_out, program=program)
        if verdict is Verdict.PASS:
            kernels = microkernels(result.output)
            timed.append(Timed(run=f"{program.case.name}@{profile.name}", etdump=etdump, kernels=kernels))
        progress.advance(1, f"{program.case.name}@{profile.name} {verdict.value}")
        return Row(component=component, arch=arch, check=Check.SMOKE, verdict=verdict,
                   reason=f"{reason} [{result.seconds:.1f}s]", subject=program.case.name,
                   profile=profile.name)

    rows += target.per_item(jobs, one, parallel=PARALLEL)
    progress.close()
    return rows + op_timing(ctx, arch, component, timed)


def op_timing(ctx: Context, arch: Arch, component: str, timed: Sequence[Timed]) -> list[Row]:
    """The op-timing row of the passing runs' etdumps (none when no table was made)."""
    with costs.measured() as meter:  # the row's own time; unmeasured it would carry the exports' and runs' too
        tables = op_tables(ctx, arch, component, timed)
    if tables is None:
        return []
    written, markdown = tables
    return [Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.PASS,
                reason=f"{len(timed)} runs: {written}", subject="op-timing", detail=markdown, wall=meter.wall,
                cpu=meter.cpu)]


run = contract_call(smoke)  # the contract's call (registry.SMOKES)
