"""The onnxruntime-genai smoke: the lane's own wheel (or one given with --wheel) installed for the target, then
payloads/genai_payload.py on every CPU profile.

The payload's tier 1 compares with the pin (a given wheel's own version; versions.toml's for the lane's build),
tier 2 with the arch table's ELF machine. Tier 4 is armed by the smoke's `model` (a [models.*] entry, converted
and cached on the host by models/, whose host-side greedy tokens the target must reproduce exactly) or, by
hand, by GENAI_MODEL_DIR on the host (then only the degenerate-output checks apply).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from pathlib import Path

from crosslane.archs import Arch, info
from crosslane.config import Component, Profile
from crosslane.context import Context
from crosslane.models import prepare
from crosslane.paths import cache_dir
from crosslane.recipes import cmake_wheel
from crosslane.report import Row, Stage, Verdict
from crosslane.smokes import payload
from crosslane.sources import pinned
from crosslane.target import site

DEFAULT_TIMEOUT = 120.0


def pin(component: Component) -> str:
    """The version versions.toml pins the component to: the source's version, else its tag without a leading v."""
    source = component.sources[0]
    if source.version:
        return source.version
    return (source.tag or "").removeprefix("v")


def lane_wheel(ctx: Context, arch: Arch, component: str) -> Path | None:
    """The one wheel the lane's build left in its install folder (recipes/cmake_wheel.py), else None."""
    found = cmake_wheel.wheels(ctx.component_dir(arch, component) / "install")
    return found[0] if len(found) == 1 else None


def generation_env(ctx: Context, model: str | None) -> dict[str, str]:
    """Tier 4's environment: the prepared model and its reference, else a hand-set GENAI_MODEL_DIR, else none."""
    by_hand = os.environ.get("GENAI_MODEL_DIR")
    if by_hand:
        return {"GENAI_MODEL_DIR": by_hand}
    if model is None:
        return {}
    ready = prepare.prepare(ctx.runner, ctx.config.models[model], cache_dir(), offline=pinned.offline())
    ctx.log.info(f"    tier 4: {ready.name} from {ready.folder}; host reference {list(ready.reference)} "
                 f"({ready.by}; smallest top-2 margin {ready.min_margin})")
    return {"GENAI_MODEL_DIR": str(ready.folder), "GENAI_PROMPT": ready.prompt,
            "GENAI_NEW_TOKENS": str(len(ready.reference)), "GENAI_EXPECTED_TOKENS": json.dumps(list(ready.reference))}


def run(ctx: Context, arch: Arch, component: str, profiles: Sequence[Profile]) -> list[Row]:
    spec = ctx.config.components[component].smoke
    base = spec.timeout if spec else DEFAULT_TIMEOUT
    wheel = ctx.wheels.get(component) or lane_wheel(ctx, arch, component)
    if wheel is None:
        return [Row(component, arch.value, "install", Verdict.FAIL,
                    f"no {component} wheel to smoke: invoke build --arch {arch} --component {component} makes one "
                    "(or pass --wheel PATH)", stage=Stage.INSTALL)]
    install = site.install(ctx, arch, wheel, ctx.component_dir(arch, component) / "target-site")
    problems = ([] if install.wheel_fits else [f"{wheel.name} is not built for {arch}"]) + \
        [f"{req} has no wheel for {arch}" for req in install.missing]
    rows = [Row(component, arch.value, "install", Verdict.FAIL if problems else Verdict.PASS,
                "; ".join(problems) + (" — " if problems else "") + install.describe(), stage=Stage.INSTALL)]
    # A given wheel is pinned by its own file name (tier 1 then proves the module that loads is that wheel,
    # not a shadowing copy); versions.toml's pin is for the lane's own build and is noted when it differs.
    _, wheel_version, _ = site.wheel_identity(wheel)
    pinned = pin(ctx.config.components[component])
    if pinned and pinned != wheel_version:
        rows[0] = dataclasses.replace(
            rows[0], reason=f"{rows[0].reason} (wheel {wheel_version}; versions.toml pins {pinned} for the lane's "
                            "build)")
    env = {"GENAI_PIN": wheel_version,
           "GENAI_EXPECTED_MACHINE": str(info(arch).elf_machine)}
    env.update(generation_env(ctx, spec.model if spec else None))
    program = payload.Payload.builtin("genai_payload", "GENAI", env=env, pythonpath=(install.site,))
    attempts = payload.run_profiles(ctx, arch, profiles, program, base_timeout=base)
    return rows + [payload.row(component, a, f"genai@{a.profile.name}") for a in attempts]
