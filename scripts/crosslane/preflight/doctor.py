"""The preflight doctor: run every registered check for an arch, report all of them at once.

`invoke preflight --arch A [--component C] [--json]` prints each check's PASS / NOTICE / WARN / SKIP /
FAIL with its fix and exits 1 on any FAIL. `invoke build` runs the checks that gate a build first
(gate()) and stops on FAIL. Checks live in checks/ as data; this module only runs and reports them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.features.probes import Probes
from crosslane.policy import lanes
from crosslane.policy.lanes import LaneState
from crosslane.preflight.checks import REGISTRY, Check, Outcome, Subject
from crosslane.report import ROW_VERDICTS, Row, Verdict
from crosslane.report import Check as RowCheck


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One preflight check's outcome for an arch and component, as reported."""

    check: str
    arch: Arch
    component: str
    status: Verdict
    message: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "arch": self.arch.value, "component": self.component, "status": self.status.value,
                "message": self.message, "fix": self.fix}


def subjects(arch: Arch, lane_states: Sequence[LaneState]) -> list[Subject]:
    """The arch subject, then one per component with its lane. When every lane is off, the arch subject
    carries that (a lane switched off must never turn the build red through an arch-wide check)."""
    arch_subject = Subject(arch)
    if lane_states and not any(state.enabled for state in lane_states):
        arch_subject = Subject(arch, None, lane_states[0])
    return [arch_subject] + [Subject(arch, state.component, state) for state in lane_states]


def evaluate(check: Check, probes: Probes, subject: Subject) -> Outcome:
    lane = subject.lane
    if subject.component is None and lane is not None:
        return Outcome(status=Verdict.SKIP,
                       message=f"every {subject.arch} lane checked is off (e.g. {lane.component} by "
                               f"{lane.setting})")
    if check.respects_lane and lane is not None and not lane.enabled:
        return Outcome(status=Verdict.SKIP, message=f"lane off by {lane.setting}")
    reason = check.applies(probes, subject)
    if reason is not None:
        return Outcome(status=Verdict.SKIP, message=reason)
    return check.probe(probes, subject)


def run(probes: Probes, arch: Arch, components: Sequence[str], *, orchestrated: bool = False,
        states: Mapping[str, LaneState] | None = None, for_build: bool = False,
        registry: Sequence[Check] = REGISTRY) -> list[Finding]:
    """One finding per (check, subject): arch checks once, component checks once per component."""
    findings = []
    known = states or {}
    all_subjects = subjects(arch, [known[name] if name in known else
                                   lanes.resolve(probes.config, name, arch, orchestrated=orchestrated)
                                   for name in components])
    for check in registry:
        if for_build and not check.gates_build:
            continue
        for subject in all_subjects:
            if (subject.component is None) != (check.scope == "arch"):
                continue
            outcome = evaluate(check, probes, subject)
            findings.append(Finding(check=check.name, arch=arch, component=subject.component or "-",
                                    status=outcome.status,
                                    message=outcome.message, fix=outcome.fix))
    return findings


def failed(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.status is Verdict.FAIL]


def render(findings: Sequence[Finding]) -> str:
    width_check = max((len(f.check) for f in findings), default=5)
    width_comp = max((len(f.component) for f in findings), default=1)
    lines = []
    for f in findings:
        lines.append(f"{f.status.value:<6}  {f.check:<{width_check}}  {f.component:<{width_comp}}  {f.message}")
        if f.fix and f.status in (Verdict.FAIL, Verdict.WARN, Verdict.NOTICE):
            lines.append(f"{'':<6}  {'':<{width_check}}  {'':<{width_comp}}  fix: {f.fix}")
    counts = {s: sum(1 for f in findings if f.status is s) for s in Verdict}
    lines.append(", ".join(f"{n} {s.value}" for s, n in counts.items() if n))
    return "\n".join(lines)


def to_json(findings: Sequence[Finding]) -> str:
    return json.dumps([f.as_dict() for f in findings], indent=1)


def rows(findings: Sequence[Finding]) -> list[Row]:
    """As report rows (a check that is not FAIL does not fail the command)."""
    return [Row(component=f.component if f.component != "-" else "host", arch=f.arch, check=RowCheck.PREFLIGHT,
                verdict=f.status if f.status in ROW_VERDICTS else Verdict.PASS,
                reason=f"{f.message}; {f.fix}" if f.fix else f.message, subject=f.check)
            for f in findings]


def gate(ctx: Context, arch: Arch, components: Sequence[str], probes: Probes,
         states: Mapping[str, LaneState]) -> list[Row]:
    """The build's preflight (lanes as the plan resolved them): quiet when all is well; the FAIL rows (build
    stops) otherwise."""
    findings = run(probes, arch, components, states=states, for_build=True)
    for finding in findings:
        if finding.status in (Verdict.NOTICE, Verdict.WARN):
            say = ctx.log.notice if finding.status is Verdict.NOTICE else ctx.log.warn
            say(f"preflight {finding.check} ({finding.component}, {arch}): {finding.message}"
                + (f"; fix: {finding.fix}" if finding.fix else ""))
    bad = failed(findings)
    if bad:
        # The command's one error line comes at its end, with the exit code; this says why nothing was built.
        ctx.log.info(f"preflight: {len(bad)} of {len(findings)} checks failed for {arch}; nothing was built "
                      f"(invoke preflight --arch {arch} shows every check)")
        for finding in bad:
            ctx.log.info(f"    FAIL {finding.check} ({finding.component}): {finding.message}; fix: {finding.fix}")
    return [row for row, finding in zip(rows(findings), findings, strict=True) if finding.status is Verdict.FAIL]
