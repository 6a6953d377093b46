"""The canary's smoke: the CLI and the CPython extension, per CPU profile, against the amd64 control.

Asserts: vector detected exactly when the profile enables it; vlenb*8 equals the profile's VLEN;
the RVV kernel runs whenever the vector unit is there (no silent scalar fallback); the checksum is
bit-identical to the amd64 control.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from crosslane.archs import CONTROL_ARCH, Arch, info
from crosslane.config import Profile, controls
from crosslane.context import Context
from crosslane.guest import cpython
from crosslane.policy import lanes
from crosslane.report import Check, Row, Verdict
from crosslane.smokes import contract_call, sentinel, target
from crosslane.smokes.payloads import path as payload_path

CLI = "bin/canary-cli"


def parse_json_line(output: str) -> dict[str, object] | None:
    for line in reversed(output.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def check(result: dict[str, object], arch: Arch, profile: Profile, control_bits: str | None, *,
          compare: bool = True) -> list[str]:
    """Every expectation the result misses (empty: PASS)."""
    problems = []
    if result.get("arch") != arch.value:
        problems.append(f"arch {result.get('arch')!r}, expected {arch.value!r}")
    vector = profile.vector_enabled(arch)
    if result.get("vector") is not vector:
        problems.append(f"vector detected={result.get('vector')}, profile enables it={vector}")
    if info(arch).vector_cpu_property is not None and vector:
        if result.get("kernel") != "rvv":
            problems.append(f"kernel {result.get('kernel')!r} although the CPU has V (silent scalar fallback)")
        vlenb = result.get("vlenb")
        if not isinstance(vlenb, int) or vlenb * 8 != profile.vlen(arch):
            problems.append(f"vlenb {vlenb} x 8 != profile vlen {profile.vlen(arch)}")
    elif result.get("kernel") != "scalar":
        problems.append(f"kernel {result.get('kernel')!r} without a vector unit")
    if not compare:
        pass  # the control's lane is off (its .lane-off marker says so): nothing to compare with, by policy
    elif control_bits is None:
        problems.append("no amd64 control checksum to compare with")
    elif result.get("checksum_bits") != control_bits:
        problems.append(f"checksum {result.get('checksum_bits')} != amd64 control {control_bits}")
    return problems


def control_checksum(ctx: Context, component: str, timeout: float) -> tuple[str | None, str]:
    install = ctx.component_dir(CONTROL_ARCH, component) / "install"
    if not (install / CLI).is_file():
        return None, f"{CONTROL_ARCH} control not built: invoke build --arch {CONTROL_ARCH} --component {component}"
    arch_cfg = ctx.config.arches[CONTROL_ARCH]
    result = target.run(ctx, CONTROL_ARCH, arch_cfg.profile(arch_cfg.default_profile), [install / CLI],
                        timeout=timeout)
    parsed = parse_json_line(result.output) if result.ok else None
    bits = parsed.get("checksum_bits") if parsed else None
    if not isinstance(bits, str):
        return None, f"{CONTROL_ARCH} control run failed (exit {result.returncode}): {result.tail(3)}"
    return bits, f"control {bits}"


def smoke(ctx: Context, arch: Arch, component: str, profiles: Sequence[Profile]) -> list[Row]:
    spec = ctx.config.components[component].smoke
    timeout = spec.timeout if spec else 60.0
    install = ctx.component_dir(arch, component) / "install"
    if not (install / CLI).is_file():
        return [Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                    reason=f"{install / CLI} missing: invoke build --arch {arch} --component {component}")]
    # A target compares with its shared control (controls.py); the control arch with its own build.
    control = component if arch is CONTROL_ARCH else controls.shared_with(ctx.config, component)
    control_off = lanes.marked_off(ctx.component_dir(CONTROL_ARCH, control) / "install")
    compare = control_off is None
    control_bits = control_checksum(ctx, control, timeout)[0] if compare else None
    versus = "= control" if compare else f"(no control: {CONTROL_ARCH} lane off by {control_off})"
    python = cpython.locate(ctx.sysroot(arch).path, arch)

    def one(profile: Profile) -> list[Row]:
        rows = []
        cli = target.run(ctx, arch, profile, [install / CLI], timeout=timeout)
        parsed = parse_json_line(cli.output)
        if cli.timed_out or sentinel.crash_reason(cli.returncode) or parsed is None:
            why = sentinel.decide("CANARY", cli.output, cli.returncode, timed_out=cli.timed_out).reason
            rows.append(Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                            reason=f"no JSON line: {why}", subject="cli", profile=profile.name))
        else:
            problems = check(parsed, arch, profile, control_bits, compare=compare)
            rows.append(Row(component=component, arch=arch, check=Check.SMOKE,
                            verdict=Verdict.FAIL if problems else Verdict.PASS,
                            reason="; ".join(problems) or _describe(parsed, versus), subject="cli",
                            profile=profile.name))
        py = target.run(ctx, arch, profile, [python.interpreter, "-s", payload_path("canary_payload")],
                        timeout=timeout * 3,
                        env={"PYTHONPATH": str(install / "python")})
        outcome = sentinel.decide("CANARY", py.output, py.returncode, timed_out=py.timed_out)
        if outcome.verdict is not Verdict.PASS:
            rows.append(Row(component=component, arch=arch, check=Check.SMOKE, verdict=outcome.verdict,
                            reason=outcome.reason, subject="python-import", profile=profile.name))
        else:
            reported = parse_json_line(outcome.detail)
            problems = check(reported, arch, profile, control_bits, compare=compare) if reported \
                else ["sentinel carried no JSON"]
            described = f"python{python.version} {_describe(reported, versus)}"
            rows.append(Row(component=component, arch=arch, check=Check.SMOKE,
                            verdict=Verdict.FAIL if problems else Verdict.PASS, reason="; ".join(problems) or described,
                            subject="python-import", profile=profile.name))
        return rows

    return [row for group in target.per_profile(profiles, one) for row in group]


def _describe(result: dict[str, object] | None, versus: str = "= control") -> str:
    if not result:
        return ""
    vector = f"vlenb={result.get('vlenb')}" if result.get("kernel") == "rvv" else "scalar"
    return f"kernel={result.get('kernel')} {vector} checksum={result.get('checksum_bits')} {versus}".rstrip()


run = contract_call(smoke)  # the contract's call (registry.SMOKES)
