"""The upstream-tests stage: each component's suite on the chosen profiles, judged, compared with the amd64 control,
every case recorded beside its results for the build report (reports/build.py reads them back)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from crosslane import contract
from crosslane.archs import CONTROL_ARCH, Arch
from crosslane.config import Config, Profile, SuiteSpec, controls
from crosslane.context import Context
from crosslane.files import atomic
from crosslane.report import Check, Row, Verdict
from crosslane.suites import SuiteCases, verdict
from crosslane.suites.ctest import FOLDER
from crosslane.suites.verdict import Judged

CASES_FILE = "cases.json"


def cases_path(ctx: Context, arch: Arch, name: str, profile: str) -> Path:
    return ctx.component_dir(arch, name) / FOLDER / "results" / profile / CASES_FILE


def record(ctx: Context, arch: Arch, name: str, profile: str, judged: Judged, *, control: bool) -> None:
    path = cases_path(ctx, arch, name, profile)
    path.parent.mkdir(parents=True, exist_ok=True)
    absent = {c.id: f for c, f in judged.absent}
    exempt = {c.id: k for c, k in judged.exempt}
    cases = [{**c.to_dict(), **({"absent": absent[c.id]} if c.id in absent else {}),
              **({"exempt": exempt[c.id]} if c.id in exempt else {})} for c in judged.cases]
    atomic.write_text(path, json.dumps({"component": name, "arch": arch.value, "profile": profile,
                                        "control": control, "cases": cases}, indent=0) + "\n")


def suite(ctx: Context, arch: Arch, name: str, profiles: Sequence[Profile]) -> contract.Outcome[SuiteCases]:
    """*name*'s suite of its kind on *profiles*, through the contract (contract.run)."""
    spec = ctx.config.components[name].tests
    assert spec is not None
    request = contract.Request(ctx=ctx, arch=arch, component=name, profiles=tuple(profiles))
    return contract.run(ctx.config.registries.suites, spec.kind, request, SuiteCases)


def judge_all(ctx: Context, arch: Arch, name: str, found: SuiteCases, *, control: bool = False
              ) -> list[tuple[str, Judged]]:
    spec = ctx.config.components[name].tests
    assert spec is not None
    judged = [(profile, verdict.judge(cases, spec.exempt.get(arch, {}), found.missing_data))
              for profile, cases in found.cases.items()]
    for profile, result in judged:
        record(ctx, arch, name, profile, result, control=control)
    return judged


def exempt_table(name: str, arch: Arch) -> str:
    return f"versions.toml components.{name}.tests.exempt.{arch}"


def chosen_profiles(spec: SuiteSpec, profiles: Sequence[Profile]) -> list[Profile]:
    """The profiles a suite runs on: the run's, narrowed to the suite's own `profiles` when it lists some."""
    return [p for p in profiles if not spec.profiles or p.name in spec.profiles]


def describe(config: Config, arch: Arch, names: Sequence[str], profiles: Sequence[Profile]) -> list[str]:
    lines = []
    for name in names:
        spec = config.components[name].tests
        if spec is not None:
            shown = ", ".join(p.name for p in chosen_profiles(spec, profiles)) or "no profile of this run"
            shared = controls.shared_with(config, name)
            whose = f" ({shared}'s)" if shared != name else ""
            control = f" and the amd64 control{whose}" if spec.control and arch is not CONTROL_ARCH and \
                config.builds(name, CONTROL_ARCH) else ""
            lines.append(f"upstream tests {name} ({spec.kind}) on {arch} {shown}{control}")
    return lines


# a control suite's run and its verdict per profile
ControlRun = tuple[contract.Outcome[SuiteCases], list[tuple[str, Judged]]]
ControlRuns = dict[str, ControlRun]  # per control test build


def control_suite(ctx: Context, name: str, profile: Profile, ran: ControlRuns) -> ControlRun:
    """The amd64 control's suite that *name* compares with (controls.py), run once per command: variants sharing
    one control test build share its run too."""
    shared = controls.shared_with(ctx.config, name)
    if shared not in ran:
        with ctx.log.group(f"upstream tests: {shared} on the amd64 control ({profile.name})"):
            theirs = suite(ctx, CONTROL_ARCH, shared, [profile])
        ran[shared] = theirs, judge_all(ctx, CONTROL_ARCH, shared, theirs.payload, control=True)
    return ran[shared]


def run_component(ctx: Context, arch: Arch, name: str, profiles: Sequence[Profile], *,
                  ran: ControlRuns | None = None) -> list[Row]:
    spec = ctx.config.components[name].tests
    assert spec is not None
    chosen = ctx.profiles_of(name, arch, chosen_profiles(spec, profiles))
    found = suite(ctx, arch, name, chosen)
    judged = judge_all(ctx, arch, name, found.payload)
    rows = [*found.rows, *(verdict.row(name, arch, p, j, where=exempt_table(name, arch)) for p, j in judged)]
    control: Judged | None = None
    if spec.control and arch is not CONTROL_ARCH and ctx.config.builds(name, CONTROL_ARCH) and judged:
        arch_cfg = ctx.config.arches[CONTROL_ARCH]
        profile = arch_cfg.profile(arch_cfg.default_profile)
        theirs, control_judged = control_suite(ctx, name, profile, {} if ran is None else ran)
        rows += [dataclasses.replace(r, control=True) for r in theirs.rows]
        if control_judged:
            control = control_judged[0][1]
            rows.append(verdict.row(name, CONTROL_ARCH, profile.name, control, control=True,
                                    where=exempt_table(controls.shared_with(ctx.config, name), CONTROL_ARCH)))
            rows += [verdict.parity(name, arch, p, j, control) for p, j in judged]
        else:
            failed = "; ".join(r.reason for r in theirs.rows if r.verdict is Verdict.FAIL)[:300]
            rows += [Row(component=name, arch=arch, check=Check.PARITY, verdict=Verdict.FAIL,
                         reason="nothing to compare with: the amd64 control's suite ran no case "
                         f"({failed or 'it reported none'})", subject=verdict.PARITY_SUBJECT, profile=p)
                     for p, _ in judged]
    if judged and rows:
        rows[-1] = dataclasses.replace(rows[-1], detail=f"**{name} upstream tests on {arch}**\n\n"
                                       + verdict.table(judged, control))
    return rows


def run(ctx: Context, arch: Arch, names: Sequence[str], profiles: Sequence[Profile]) -> list[Row]:
    rows: list[Row] = []
    ran: ControlRuns = {}
    for name in names:
        if ctx.config.components[name].tests is not None:
            rows += run_component(ctx, arch, name, profiles, ran=ran)
    return rows
