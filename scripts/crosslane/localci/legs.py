"""The legs of the local Actions check: each one act run of one job (with the jobs it needs), under one event.

Together they run the workflow's jobs for real, one matrix leg each, chained through act's artifact store: the
amd64 control's pack made by one leg is downloaded by the smoke of the next, and the report job merges the reports
of every leg before it. Two job kinds are not run: `publish` (its attestation needs GitHub's OIDC token, which
exists only on GitHub) and the nightly `repro` (two whole builds of every component; `invoke repro` has its own
tests). Legs run in this order; `invoke actions --leg NAME` picks some.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

CANARY = MappingProxyType({"arch": "riscv64", "component": "canary"})
CPUINFO = MappingProxyType({"arch": "riscv64", "component": "cpuinfo"})
PLAN_OUTPUTS = ("run", "build", "smoke", "baremetal", "upstream")


@dataclass(frozen=True, kw_only=True)
class LegPlan:
    name: str
    event: str
    job: str  # act -j: the job, and before it every job it needs
    expect: tuple[str, ...]  # the jobs that must run, every leg passing
    purpose: str
    inputs: Mapping[str, str] = field(default_factory=dict)  # workflow_dispatch inputs
    # act --matrix: the one leg of each matrix job (act runs every leg of a matrix at once, and in host mode the
    # legs share one Python: one leg per job keeps the run what a runner per job would be).
    matrix: tuple[tuple[str, str], ...] = ()
    outputs: tuple[str, ...] = ()  # the plan job's outputs that must be set
    timeout: float = 1800.0
    after: tuple[str, ...] = ()  # legs whose artifacts this one downloads: chosen with it, run before it


LEGS = (
    LegPlan(name="lint", event="push", job="lint", expect=("lint",),
            purpose="ruff, mypy, consistency, zizmor, the workflow's schema",
            timeout=1200.0),
    LegPlan(name="plan-push", event="push", job="plan", expect=("plan",), purpose="the matrices of a push",
            outputs=PLAN_OUTPUTS, timeout=600.0),
    LegPlan(name="plan-pull-request", event="pull_request", job="plan", expect=("plan",),
            purpose="the matrices of a pull request (git diff)",
            outputs=PLAN_OUTPUTS, timeout=600.0),
    LegPlan(name="plan-schedule", event="schedule", job="plan", expect=("plan",), purpose="the nightly's matrices",
            outputs=PLAN_OUTPUTS,
            timeout=600.0),
    LegPlan(name="control", event="workflow_dispatch", job="build", expect=("plan", "build"),
            purpose="the amd64 control's canary pack",
            inputs=CANARY, matrix=(("arch", "amd64"),)),
    LegPlan(name="upstream", event="workflow_dispatch", job="upstream", expect=("plan", "build", "upstream"),
            purpose="cpuinfo riscv64 built, then its upstream suite on rvv128", inputs=CPUINFO,
            matrix=(("profile", "rvv128"),)),
    LegPlan(name="baremetal", event="push", job="baremetal", expect=("plan", "baremetal"),
            purpose="one bare-metal target in its tool root",
            matrix=(("target", "rv64-elf"),), timeout=3600.0),
    LegPlan(name="chain", event="workflow_dispatch", job="report", expect=("plan", "build", "smoke", "report"),
            purpose="canary riscv64 built, smoked on rvv128 from its pack and the control's, every leg's report merged",
            inputs=CANARY, matrix=(("arch", "riscv64"), ("profile", "rvv128")), timeout=2400.0,
            after=("control",)),
    LegPlan(name="tests", event="push", job="tests", expect=("tests",), purpose="the README's test command",
            timeout=5400.0),
)


def chosen(names: tuple[str, ...]) -> tuple[LegPlan, ...]:
    """The legs named (all when none) with the legs they download from, in the check's order."""
    wanted = set(names)
    for leg in LEGS:
        if leg.name in wanted:
            wanted.update(leg.after)
    return tuple(leg for leg in LEGS if not names or leg.name in wanted)
