"""cpuinfo's smoke: `isa-info` under qemu on every CPU profile.

On an arch whose profiles can switch a vector unit on and off (archs.py vector_cpu_property), the line
`\tVector: yes` must appear exactly when the profile enables it (`\tVector: no` otherwise): a library
that silently reports no vector unit sends every consumer to its scalar fallback. Elsewhere the check
is that isa-info runs and prints its feature table: a heading ("Instruction sets:" on arm64 and
riscv64, "Scalar instructions:" first on x86-64) followed by tab-indented "Feature: yes|no" lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from crosslane.archs import Arch, info
from crosslane.config import Profile
from crosslane.context import Context
from crosslane.report import Check, Row, Verdict
from crosslane.smokes import contract_call, sentinel, target

ISA_INFO = "bin/isa-info"
FEATURE = re.compile(r"^\t[^\t:]+: (yes|no)$")


def check(output: str, arch: Arch, profile: Profile) -> list[str]:
    """Every expectation the isa-info output misses (empty: PASS)."""
    lines = output.splitlines()
    problems = []
    if not headings(lines) or not any(FEATURE.match(line) for line in lines):
        problems.append("no feature table (a heading line followed by tab-indented 'Feature: yes|no' lines)")
    if info(arch).vector_cpu_property is not None:
        wanted = "yes" if profile.vector_enabled(arch) else "no"
        if f"\tVector: {wanted}" not in lines:
            found = [line.strip() for line in lines if line.strip().startswith("Vector:")]
            problems.append(f"expected 'Vector: {wanted}' (profile {profile.cpu}), got {found or 'no Vector line'}")
    return problems


def headings(lines: Sequence[str]) -> list[str]:
    return [line for line in lines if line.endswith(":") and line[:1].isalpha()]


def smoke(ctx: Context, arch: Arch, component: str, profiles: Sequence[Profile]) -> list[Row]:
    spec = ctx.config.components[component].smoke
    timeout = spec.timeout if spec else 60.0
    binary = ctx.component_dir(arch, component) / "install" / ISA_INFO
    if not binary.is_file():
        return [Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                    reason=f"{binary} missing: invoke build --arch {arch} --component {component}")]

    def one(profile: Profile) -> Row:
        result = target.run(ctx, arch, profile, [binary], timeout=timeout)
        if result.timed_out or not result.ok:
            why = sentinel.crash_reason(result.returncode) or f"exit {result.returncode}"
            if result.timed_out:
                why = f"timed out after {timeout:.0f}s"
            return Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                       reason=f"isa-info failed ({why}): {result.tail(2)}", subject="isa-info", profile=profile.name)
        problems = check(result.output, arch, profile)
        if problems:
            return Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                       reason="; ".join(problems), subject="isa-info", profile=profile.name)
        lines = result.output.splitlines()
        vector = [line.strip() for line in lines if line.strip().startswith("Vector:")]
        count = sum(1 for line in lines if FEATURE.match(line))
        summary = f"'{headings(lines)[0]}' and {count} features listed"
        return Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.PASS,
                   reason=f"{summary}; {vector[0]}" if vector else summary, subject="isa-info", profile=profile.name)

    return target.per_profile(profiles, one)


run = contract_call(smoke)  # the contract's call (registry.SMOKES)
