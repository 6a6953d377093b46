"""The generic payload driver: one stdlib-only program, run by the target's python3 under qemu per CPU profile.

The payload reaches the target as a file (CROSSLANE_PAYLOAD_FILE) or as text (CROSSLANE_PAYLOAD) through
payloads/bootstrap.py, which turns a missing or empty payload into `<NAME>-BIND ABSENT` (exit 4). The
verdict comes from the sentinel (sentinel.decide), never from the exit status alone.

Timeouts are per profile and emulation-aware: versions.toml's smoke.timeout is the budget for the payload
on a guest of the host's own ISA; everything runs under qemu TCG, so
    timeout = base × FOREIGN_ISA (guest ISA ≠ host ISA) × (1 + VLEN/256 when the profile enables vectors)
qemu translates every vector instruction element by element, so a wider VLEN costs time roughly in
proportion. The environment is handed to qemu's own process (qemu-user passes it to the guest); qemu's
-E splits values at commas, which would cut a payload text apart.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from crosslane import archs
from crosslane.archs import Arch
from crosslane.config import Profile
from crosslane.context import Context
from crosslane.process.runner import Result
from crosslane.report import Check, Row, Verdict
from crosslane.smokes import compare, sentinel, target
from crosslane.smokes.payloads import path as payload_path

FOREIGN_ISA = 2.0
VLEN_UNIT = 256
PROTOCOL_PREFIXES = ("PROVEN ", "UNPROVEN ", "DEFECT ", "SKIP ")
TAIL_ON_FAILURE = 12
# Host variables that must not leak into the target's interpreter or dynamic loader.
HOST_ONLY_ENV = ("PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONSAFEPATH",
                 "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "LD_LIBRARY_PATH", "LD_PRELOAD")


@dataclass(frozen=True)
class Payload:
    """What to run: exactly one of *file* and *text*; *name* is the sentinel's (`<NAME>-BIND`)."""

    name: str
    file: Path | None = None
    text: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    pythonpath: tuple[Path, ...] = ()

    @classmethod
    def builtin(cls, module: str, name: str, *, args: tuple[str, ...] = (), env: Mapping[str, str] | None = None,
                pythonpath: tuple[Path, ...] = ()) -> Payload:
        """One of crosslane's own payloads (payloads/<module>.py)."""
        return cls(name, file=payload_path(module), args=args, env=dict(env or {}), pythonpath=pythonpath)


@dataclass(frozen=True, kw_only=True)
class Attempt:
    arch: Arch
    profile: Profile
    outcome: sentinel.Outcome
    result: Result
    timeout: float

    @property
    def reason(self) -> str:
        """The outcome's reason, with the profile and emulator named when qemu died or hung."""
        where = f"on profile {self.profile.name} ({self.profile.cpu})"
        if self.result.timed_out:
            return f"timed out after {self.timeout:.0f}s {where}"
        if sentinel.crash_reason(self.result.returncode):
            # The qemu that ran it (the arch's: the host's, or a tool root's), as the command line names it.
            return f"{Path(self.result.argv[0]).name} {self.outcome.reason} {where}"
        if self.outcome.verdict is Verdict.PASS:
            return summary(self.outcome.detail)
        return self.outcome.reason


def summary(detail: str, limit: int = 160) -> str:
    """A passing sentinel's detail for the report: a JSON detail's scalars and output names, not its values."""
    start = detail.find("{")
    try:
        data = json.loads(detail[start:]) if start >= 0 else None
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        return detail if len(detail) <= limit else detail[: limit - 1] + "…"
    parts = [f"{key}={value}" for key, value in sorted(data.items()) if isinstance(value, (str, int, float, bool))]
    if isinstance(data.get("outputs"), dict):
        parts.append(f"outputs: {', '.join(sorted(data['outputs']))}")
    return (detail[:start].strip() + " " + "; ".join(parts)).strip()


def timeout_for(base: float, arch: Arch, profile: Profile, *, host: str | None = None) -> float:
    factor = 1.0 if arch is archs.host_arch(host) else FOREIGN_ISA
    vlen = profile.vlen(arch)
    if vlen:
        factor *= 1 + vlen / VLEN_UNIT
    return base * factor


def environment(payload: Payload) -> dict[str, str]:
    env = {"CROSSLANE_PAYLOAD_HELPERS": str(payload_path("bindkit").parent), **payload.env}
    if payload.file is not None:
        env["CROSSLANE_PAYLOAD_FILE"] = str(payload.file)
    elif payload.text is not None:
        env["CROSSLANE_PAYLOAD"] = payload.text
    if payload.pythonpath:
        env["PYTHONPATH"] = ":".join(str(p) for p in payload.pythonpath)
    return env


def command(ctx: Context, arch: Arch, profile: Profile, payload: Payload) -> list[str]:
    argv = target.qemu_prefix(ctx, arch, profile)
    bootstrap = payload_path("bootstrap").read_text(encoding="utf-8")
    return [*argv, str(target.python(ctx, arch)), "-s", "-u", "-c", bootstrap, payload.name, *payload.args]


def bytecode_folder(ctx: Context, arch: Arch) -> Path:
    """Where the target's interpreter keeps the bytecode it compiles (PYTHONPYCACHEPREFIX), for every run of the
    arch in this build folder. The sysroot's Python files come without bytecode (Debian's postinst compiles it, and
    a sysroot runs no postinst), so under qemu every run compiled numpy and the stdlib modules it imports again
    (docs/architecture.md, on what a run costs). Nothing is written beside the sysroot's files."""
    return ctx.build_root / arch.value / "pycache"


def run(ctx: Context, arch: Arch, profile: Profile, payload: Payload, *, base_timeout: float) -> Attempt:
    timeout = timeout_for(base_timeout, arch, profile)
    env = {**environment(payload), "PYTHONPYCACHEPREFIX": str(bytecode_folder(ctx, arch))}
    unset = [key for key in HOST_ONLY_ENV if key not in env]
    ctx.log.debug(f"payload {payload.name} on {arch}@{profile.name}: timeout {timeout:.0f}s")
    result = ctx.runner.run(command(ctx, arch, profile, payload), env=env, unset=unset, timeout=timeout,
                            check=False, quiet=True)
    outcome = sentinel.decide(payload.name, result.output, result.returncode, timed_out=result.timed_out)
    attempt = Attempt(arch=arch, profile=profile, outcome=outcome, result=result, timeout=timeout)
    evidence = protocol_lines(result.output)
    for line in evidence:
        ctx.log.debug(f"{arch}@{profile.name}: {line}")
    if outcome.verdict is Verdict.FAIL and not ctx.log.verbose:
        # A failure carries its evidence: the payload's own protocol lines, else the output's tail.
        shown = evidence or result.tail(TAIL_ON_FAILURE).splitlines()
        ctx.log.info("\n".join(f"    {arch}@{profile.name}: {line}" for line in shown[-TAIL_ON_FAILURE:]))
    return attempt


def protocol_lines(output: str) -> list[str]:
    """The PROVEN / UNPROVEN / DEFECT / SKIP lines and sentinels a payload printed, in order."""
    return [line for line in output.splitlines() if line.startswith(PROTOCOL_PREFIXES) or sentinel.SENTINEL.match(line)]


def run_profiles(ctx: Context, arch: Arch, profiles: Sequence[Profile], payload: Payload, *, base_timeout: float,
                 parallel: bool = True) -> list[Attempt]:
    return target.per_profile(profiles, lambda p: run(ctx, arch, p, payload, base_timeout=base_timeout),
                              parallel=parallel)


def row(component: str, attempt: Attempt, subject: str = "run", *, control: bool = False) -> Row:
    """The smoke row of one run: *subject* names what ran, the attempt where, and the run's own wall and CPU seconds
    (the runs of a smoke go side by side: the smoke's time would be every row's otherwise)."""
    return Row(component=component, arch=attempt.arch, check=Check.SMOKE, verdict=attempt.outcome.verdict,
               reason=attempt.reason + f" [{attempt.result.seconds:.1f}s]", subject=subject,
               profile=attempt.profile.name, control=control, wall=round(attempt.result.seconds, 3),
               cpu=round(attempt.result.cpu, 3))


def run_jobs(ctx: Context, jobs: Sequence[tuple[Arch, Profile]], payload: Payload, *, base_timeout: float,
             parallel: bool = True) -> list[Attempt]:
    """Runs on several (arch, profile) pairs, e.g. the amd64 control beside an arch's profiles, one per core."""
    return target.per_item(jobs, lambda job: run(ctx, job[0], job[1], payload, base_timeout=base_timeout),
                           parallel=parallel)


def sample(attempt: Attempt) -> compare.Sample | None:
    """The outputs a passing attempt reported, None when it failed or reported none."""
    if attempt.outcome.verdict is not Verdict.PASS:
        return None
    outputs = compare.outputs_from_detail(attempt.outcome.detail)
    return compare.Sample(arch=attempt.arch, profile=attempt.profile.name,
                          outputs=outputs) if outputs is not None else None


def parity(ctx: Context, component: str, attempts: Sequence[Attempt], control: Attempt,
           tolerances: Mapping[str, compare.Tolerance], *, first: int | None = None) -> list[Row]:
    """Compare every passing attempt's outputs with the control's (with *first*, the control's lists cut to their
    first items: the attempts ran a short form); log the table; one row per run."""
    reference = sample(control)
    rows = []
    if reference is None:
        why = control.reason if control.outcome.verdict is not Verdict.PASS else "its sentinel carried no outputs"
        return [Row(component=component, arch=a.arch, check=Check.PARITY, verdict=Verdict.FAIL,
                    reason=f"no {control.arch}@{control.profile.name} control to compare with: {why}",
                    profile=a.profile.name) for a in attempts]
    samples = []
    for attempt in attempts:
        found = sample(attempt)
        if found is not None:
            samples.append(found)
        elif attempt.outcome.verdict is Verdict.PASS:
            rows.append(Row(component=component, arch=attempt.arch, check=Check.PARITY, verdict=Verdict.FAIL,
                            reason="the sentinel carried no outputs", profile=attempt.profile.name))
    if first is not None:
        reference = reference.first(first)
    comparisons = compare.compare(samples, reference, tolerances)
    if comparisons:
        ctx.log.info(compare.table(comparisons, reference))
    compared = compare.rows(component, comparisons)
    if first is not None:
        compared = [dataclasses.replace(r, reason=f"{r.reason}; against the control's first {first} (a short run)")
                    for r in compared]
    return rows + compared
