"""The declarative smoke (`kind = "command"`): a program versions.toml names, run under the arch's qemu-user on
every CPU profile, judged as declared.

    smoke = { kind = "command", argv = ["{install}/bin/tool", "--json", "{output}"], sentinel = "OK",
              compare = "json", tolerance = { rel = 1e-6 }, expect = { novector = "SIGILL" } }

- `argv`: {install} (the component's install folder), {profile}, {vlen} (the profile's VLEN, "" without V),
  {vector} ("yes" or "no": whether the profile has a vector unit), {output} (a file the program may write), {arch}.
- PASS needs the declared evidence: `sentinel`, a line of the output, and/or `pattern`, a regular expression (with
  the same placeholders) the output must match; the exit status must be 0 too, but it is never evidence alone.
- `expect = { <profile> = "SIGILL" }`: on that profile the run must die of that signal (V code on a CPU without V):
  PASS only when it does, naming it; a run that passes there is a FAIL (the expectation no longer holds). argv runs
  the program itself under qemu, which dies of its guest's signal: a shell that reports a child's signal as exit
  128+N is no such evidence (exit 132 is a program's own choice).
- `compare = "stdout"` or `"json"` (what the program wrote to {output}): the same run of the amd64 control's build
  on its default profile, and a parity row per profile: exact, or within `tolerance = { rel, abs }` for numbers.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from crosslane.archs import CONTROL_ARCH, Arch
from crosslane.config import Profile, controls
from crosslane.context import Context
from crosslane.errors import ConfigError
from crosslane.policy import lanes
from crosslane.process.runner import OUTPUT_LINES, Result
from crosslane.recipes.cmake import substitute
from crosslane.report import Check, Row, Verdict
from crosslane.smokes import compare, contract_call, sentinel, target

OUTPUT_LIMIT = 16 << 20  # a JSON output file read back: bounded


def values(ctx: Context, arch: Arch, built: str, profile: Profile, output: Path) -> dict[str, object]:
    vlen = profile.vlen(arch)
    return {"install": str(ctx.component_dir(arch, built) / "install"), "profile": profile.name,
            "vlen": str(vlen) if vlen else "", "vector": "yes" if profile.vector_enabled(arch) else "no",
            "output": str(output), "arch": arch.value}


def fill(text: str, filled: Mapping[str, object], component: str) -> str:
    try:
        return substitute(text, filled)
    except KeyError as exc:
        raise ConfigError(f"versions.toml: components.{component}.smoke: '{text}' uses an unknown placeholder "
                          f"{exc.args[0]}; known: {', '.join('{' + k + '}' for k in sorted(filled))}") from None


def fill_pattern(pattern: str, filled: Mapping[str, object]) -> str:
    """*pattern* with the run's placeholders as literal text; every other brace stays the regex's own
    (a quantifier such as \\d{3})."""
    names = "|".join(map(re.escape, filled))
    return re.sub(r"\{(" + names + r")\}", lambda m: re.escape(str(filled[m.group(1)])), pattern)


def outputs(options: Mapping[str, object], result: Result, written: Path) -> tuple[Mapping[str, object] | None, str]:
    """The run's compared outputs (None, and why, when it has none to compare)."""
    if options.get("compare") == "stdout":
        if result.dropped:
            return None, (f"its output has {result.dropped + OUTPUT_LINES} lines and only the last {OUTPUT_LINES} are "
                          "kept: compare a JSON output ({output}) instead")
        return {"stdout": result.output}, ""
    try:
        if not written.is_file() or written.stat().st_size > OUTPUT_LIMIT:
            return None, f"no JSON output at {{output}} (or over {OUTPUT_LIMIT >> 20} MiB)"
        # NaN and Infinity stay: a program's numbers may be those, and compare.py compares them
        data = json.loads(written.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError) as exc:
        return None, f"its {{output}} is not JSON ({exc})"
    except RecursionError:
        return None, "its {output} is JSON nested too deeply to compare"
    return ({"json": data}, "")


@dataclass(frozen=True, kw_only=True)
class Ran:
    """One run of the declared command: the runner's result, and what the smoke read beside it."""

    result: Result  # exit status, output, timed out
    found: Mapping[str, object] | None  # the outputs compared; None: there are none, *why* says why
    why: str
    filled: Mapping[str, object]  # the placeholders' values the argv was filled with


def run_once(ctx: Context, arch: Arch, component: str, profile: Profile, timeout: float, built: str = "") -> Ran:
    """One run of *component*'s command on the install folder of *built* (default: its own)."""
    spec = ctx.config.components[component].smoke
    assert spec is not None
    options = spec.options
    with tempfile.TemporaryDirectory(prefix="crosslane-smoke-") as tmp:
        written = Path(tmp) / "output.json"
        filled = values(ctx, arch, built or component, profile, written)
        declared = options["argv"]
        assert isinstance(declared, tuple)  # config reads argv as a list of strings
        argv = [fill(str(a), filled, component) for a in declared]
        env = {str(k): fill(str(v), filled, component) for k, v in mapping(options.get("env")).items()}
        result = target.run(ctx, arch, profile, argv, timeout=timeout, env=env or None)
        found, why = outputs(options, result, written) if "compare" in options else (None, "")
    return Ran(result=result, found=found, why=why, filled=filled)


def judge(options: Mapping[str, object], profile: Profile, returncode: int, output: str, timed_out: bool,
          filled: Mapping[str, object]) -> tuple[Verdict, str]:
    """The run's verdict from its declared evidence (module docstring)."""
    expected = mapping(options.get("expect")).get(profile.name)
    crash = sentinel.signal_of(returncode) if not timed_out else None
    if expected:
        if crash == expected:
            return Verdict.PASS, f"expected {expected}: died of it on {profile.name}"
        what = "timed out" if timed_out else f"died of {crash}" if crash else f"exit {returncode}"
        return Verdict.FAIL, f"expected {expected} on {profile.name}, {what}"
    if timed_out:
        return Verdict.FAIL, "timed out"
    if crash:
        return Verdict.FAIL, f"died of {crash}: {tail(output)}"
    problems = []
    line = options.get("sentinel")
    if isinstance(line, str) and line not in (text.strip() for text in output.splitlines()):
        problems.append(f"no line '{line}'")
    pattern = options.get("pattern")
    if isinstance(pattern, str):
        try:
            filled_pattern = re.compile(fill_pattern(pattern, filled), re.MULTILINE)
        except re.error as exc:
            return Verdict.FAIL, f"/{pattern}/ is no regular expression on {profile.name} ({exc})"
        if filled_pattern.search(""):
            problems.append(f"/{pattern}/ matches an empty output on {profile.name}: no evidence")
        elif not filled_pattern.search(output):
            problems.append(f"no match for /{pattern}/")
    if returncode != 0:
        problems.append(f"exit {returncode}")
    if problems:
        return Verdict.FAIL, "; ".join(problems) + f": {tail(output)}"
    shown = line if isinstance(line, str) else f"/{pattern}/ matched"
    return Verdict.PASS, str(shown)


def mapping(value: object) -> Mapping[str, object]:
    return {str(k): v for k, v in value.items()} if isinstance(value, Mapping) else {}


def tail(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return " | ".join(lines[-2:])[:300] or "no output"


def smoke(ctx: Context, arch: Arch, component: str, profiles: Sequence[Profile]) -> list[Row]:
    spec = ctx.config.components[component].smoke
    assert spec is not None
    options = spec.options
    install = ctx.component_dir(arch, component) / "install"
    if not install.is_dir():
        return [Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                    reason=f"{install} missing: invoke build --arch {arch} --component {component}", subject="command")]
    chosen = ctx.config.arches[arch].allowed(profiles, spec.profiles) if spec.profiles else tuple(profiles)
    if not chosen:  # the plan refuses such a selection; a direct call still gets no silent pass
        return [Row(component=component, arch=arch, check=Check.SMOKE, verdict=Verdict.SKIP,
                    reason=f"its smoke runs on {', '.join(spec.profiles)} only, none of "
                    f"{', '.join(p.name for p in profiles) or 'no profile'}", subject="command")]

    def one(profile: Profile) -> tuple[Row, Ran]:
        ran = run_once(ctx, arch, component, profile, spec.timeout)
        verdict, reason = judge(options, profile, ran.result.returncode, ran.result.output, ran.result.timed_out,
                                ran.filled)
        row = Row(component=component, arch=arch, check=Check.SMOKE, verdict=verdict, reason=reason,
                  subject="command", profile=profile.name)
        return row, ran

    done = target.per_profile(chosen, one)
    rows = [row for row, _ in done]
    if "compare" not in options:
        return rows
    return rows + parity(ctx, arch, component, chosen, done, options, spec.timeout)


def parity(ctx: Context, arch: Arch, component: str, chosen: Sequence[Profile],
           done: Sequence[tuple[Row, Ran]], options: Mapping[str, object],
           timeout: float) -> list[Row]:
    """A parity row per profile that passed and was not expected to fail: its outputs against the control's."""
    # A target compares with its shared control (controls.py); the control arch with its own build.
    built = component if arch is CONTROL_ARCH else controls.shared_with(ctx.config, component)
    off = lanes.marked_off(ctx.component_dir(CONTROL_ARCH, built) / "install")
    if off is not None:
        return [Row(component=component, arch=arch, check=Check.PARITY, verdict=Verdict.SKIP,
                    reason=f"no control: the {CONTROL_ARCH} lane is off by {off}: policy, not drift",
                    subject="command")]
    control_config = ctx.config.arches[CONTROL_ARCH]
    control_profile = control_config.profile(control_config.default_profile)
    ran = run_once(ctx, CONTROL_ARCH, component, control_profile, timeout, built)
    control_outputs = ran.found
    if control_outputs is None or not ran.result.ok:
        return [Row(component=component, arch=arch, check=Check.PARITY, verdict=Verdict.FAIL,
                    reason=f"the {CONTROL_ARCH} control gave nothing to compare with "
                    f"({ran.why or tail(ran.result.output)})", subject="command")]
    raw = mapping(options.get("tolerance"))
    rel, absolute = raw.get("rel", 0.0), raw.get("abs", 0.0)
    tolerance = compare.Tolerance(rel=float(rel) if isinstance(rel, (int, float)) else 0.0,
                                  abs=float(absolute) if isinstance(absolute, (int, float)) else 0.0)
    control = compare.Sample(arch=CONTROL_ARCH, profile=control_profile.name, outputs=control_outputs)
    expected = mapping(options.get("expect"))
    rows = []
    for profile, (row, mine) in zip(chosen, done, strict=True):
        if profile.name in expected or row.verdict is not Verdict.PASS:
            continue
        if mine.found is None:
            rows.append(Row(component=component, arch=arch, check=Check.PARITY, verdict=Verdict.FAIL, reason=mine.why,
                            subject="command", profile=profile.name))
            continue
        sample = compare.Sample(arch=arch, profile=profile.name, outputs=mine.found)
        compared = compare.compare([sample], control, dict.fromkeys(control_outputs, tolerance))
        rows += [Row(component=r.component, arch=r.arch, check=r.check, verdict=r.verdict, reason=r.reason,
                     subject="command", profile=r.profile)
                 for r in compare.rows(component, compared)]
    return rows


run = contract_call(smoke)  # the contract's call (registry.SMOKES)
