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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from crosslane.archs import CONTROL_ARCH, Arch, info
from crosslane.config import ArchConfig, Component, Constrained, Profile, controls, keys, version_of
from crosslane.context import Context
from crosslane.files.paths import cache_dir
from crosslane.gates import compiled, provenance, vector_code
from crosslane.guest import cpython
from crosslane.models import prepare
from crosslane.process import costs
from crosslane.recipes import cmake_wheel
from crosslane.report import Check, Row, Verdict
from crosslane.shipping import folder as shipping_folder
from crosslane.smokes import contract_call, payload, site, wheel_install
from crosslane.smokes.compare import EXACT
from crosslane.sources import pinned

DEFAULT_TIMEOUT = keys.SMOKE_TIMEOUT  # without a smoke table, what one without a timeout gets
# Greedy token ids: equal, or the build computes something else.
TOLERANCES = {"new_tokens": EXACT, "constrained_tokens": EXACT}


def pin(component: Component) -> str:
    """The version versions.toml pins the component to: the source's version, else its tag without a leading v."""
    return (version_of(component.sources[0]) or "").removeprefix("v")


def lane_wheel(ctx: Context, arch: Arch, component: str) -> Path | None:
    """The wheel the lane's build made for the target's system CPython (the payload's python3), else None."""
    version = cpython.locate(ctx.sysroot(arch).path, arch).version
    return cmake_wheel.lane_wheel(ctx.component_dir(arch, component) / "install", version)


def generation_env(ctx: Context, model: str | None, constrained: Constrained | None = None) -> dict[str, str]:
    """Tiers 4 and 5's environment: the prepared model and its reference (and the constraint of tier 5), else a
    hand-set GENAI_MODEL_DIR, else none."""
    by_hand = os.environ.get("GENAI_MODEL_DIR")
    if by_hand:
        return {"GENAI_MODEL_DIR": by_hand}
    if model is None:
        return {}
    ready = prepare.prepare(ctx.runner, ctx.config.models[model], cache_dir(), offline=pinned.offline())
    ctx.log.info(f"    tier 4: {ready.name} from {ready.folder}; host reference {list(ready.reference)} "
                 f"({ready.by}; smallest top-2 margin {ready.min_margin})")
    env = {"GENAI_MODEL_DIR": str(ready.folder), "GENAI_PROMPT": ready.prompt,
           "GENAI_NEW_TOKENS": str(len(ready.reference)), "GENAI_EXPECTED_TOKENS": json.dumps(list(ready.reference))}
    if constrained is not None:  # tier 5: the same model, the guidance of the smoke's `constrained`
        env["GENAI_CONSTRAINED"] = json.dumps(dataclasses.asdict(constrained))
    return env


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """The target site a wheel was installed into, or why there is none (the install row says)."""

    row: Row
    site: Path | None
    version: str


def install_site(ctx: Context, arch: Arch, component: str, wheel: Path | None) -> Prepared:
    if wheel is None:
        missing = Row(component=component, arch=arch, check=Check.INSTALL, verdict=Verdict.FAIL,
                      reason=f"no {component} wheel to smoke: invoke build --arch {arch} --component {component} "
                      "makes one (or pass --wheel PATH)")
        return Prepared(row=missing, site=None, version="")
    with costs.measured() as meter:
        install = site.install(ctx, arch, wheel, ctx.component_dir(arch, component) / site.TARGET_SITE)
    problems = ([] if install.wheel_fits else [f"{wheel.name} is not built for {arch}"]) + \
        [f"{req} has no wheel for {arch}" for req in install.missing]
    reason = "; ".join(problems) + (" — " if problems else "") + install.describe()
    # A given wheel is pinned by its own file name (tier 1 then proves the module that loads is that wheel,
    # not a shadowing copy); versions.toml's pin is for the lane's own build and is noted when it differs.
    wheel_version = site.wheel_identity(wheel).version
    pinned = pin(ctx.config.components[component])
    if pinned and pinned != wheel_version:
        reason += f" (wheel {wheel_version}; versions.toml pins {pinned} for the lane's build)"
    # Its own time: left unmeasured, the row would carry the whole smoke's (report.timed).
    row = Row(component=component, arch=arch, check=Check.INSTALL, verdict=Verdict.FAIL if problems else Verdict.PASS,
              reason=reason, wall=meter.wall, cpu=meter.cpu)
    # Installed even when it does not fit: the payload then shows how it fails to load (evidence, not a skip).
    return Prepared(row=row, site=install.site, version=wheel_version)


def program_for(arch: Arch, prepared: Prepared, generation: dict[str, str]) -> payload.Payload:
    assert prepared.site is not None
    env = {"GENAI_PIN": prepared.version, "GENAI_EXPECTED_MACHINE": str(info(arch).elf_machine), **generation}
    return payload.Payload.builtin("genai_payload", "GENAI", env=env, pythonpath=(prepared.site,))


def loaded_ort(ctx: Context, arch: Arch, component: str, attempts: Sequence[payload.Attempt],
               given_site: Path | None = None) -> list[Row]:
    """Which ONNX Runtime the first passing run really mapped: for the lane's build, the chain's bytes; for a
    wheel given with --wheel (not the chain's build), the ORT its own requirements resolved to, a wheel unpacked
    into its site or the sysroot's distribution package."""
    passed = [a for a in attempts if a.outcome.verdict is Verdict.PASS]
    if not passed:
        return []
    detail = passed[0].outcome.detail
    try:
        loaded = str(json.loads(detail[detail.index("{"):]).get("ort_library", ""))
    except ValueError:
        loaded = ""
    sysroot = ctx.sysroot(arch).path
    if given_site is not None:
        tried = [provenance.check_loaded(loaded, sysroot, root, arch, component, what="its requirements' ORT")
                 for root in (given_site, sysroot / "usr/lib")]
        chosen = next((r for r in tried if r.verdict is Verdict.PASS), tried[0])
        return [dataclasses.replace(chosen, check=Check.PROVENANCE)]
    chain = [ctx.component_dir(arch, dep) / "install" for dep in ctx.config.components[component].dependencies(arch)]
    rows = [provenance.check_loaded(loaded, sysroot, root, arch, component) for root in chain]
    return [dataclasses.replace(r, check=Check.PROVENANCE) for r in rows]


@dataclass(frozen=True)
class Sweep:
    """Which profiles run the payload in full and which its short form (`short_generation`), and the scan that
    allowed the short form (empty when every profile runs in full)."""

    full: tuple[Profile, ...]
    short: tuple[Profile, ...] = ()
    evidence: str = ""


def plan_sweep(arch: Arch, arch_cfg: ArchConfig, profiles: Sequence[Profile], generation: Mapping[str, str],
               scanned: Sequence[vector_code.VectorCode]) -> Sweep:
    """Every profile in full, except the vector profiles other than the default one when the scan of the site's ELF
    files proves there is nothing for their VLEN to change: every file scanned (RISC-V, readable) and not one RVV
    instruction. Those profiles then run the same scalar code the default profile runs in full, so the short form
    (fewer decode steps of that code) still shows what the sweep can show there: that it runs on that CPU. The
    short form's tier 5 meets the default profile's first guided tokens, so the default profile must run here, with
    tier 4's reference armed."""
    default = arch_cfg.default_profile
    wider = tuple(p for p in profiles if p.vector_enabled(arch) and p.name != default)
    default_is_vector = any(p.name == default and p.vector_enabled(arch) for p in profiles)
    scalar = bool(scanned) and all(v.scanned and v.instructions == 0 for v in scanned)
    if not (wider and default_is_vector and scalar and "GENAI_EXPECTED_TOKENS" in generation):
        return Sweep(tuple(profiles))
    return Sweep(tuple(p for p in profiles if p not in wider), wider,
                 f"no RVV instruction in the {len(scanned)} ELF files of its site")


def sweep_runs(ctx: Context, arch: Arch, sweep: Sweep, program: payload.Payload, generation: Mapping[str, str],
               base: float) -> tuple[list[payload.Attempt], list[payload.Attempt]]:
    """The full runs, then the short ones against the default profile's full run; a short run whose reference the
    default's run did not give (it failed, or tier 5 made no token ids) runs in full."""
    full = payload.run_profiles(ctx, arch, sweep.full, program, base_timeout=base)
    if not sweep.short:
        return full, []
    default = next(a for a in full if a.profile.name == ctx.config.arches[arch].default_profile)
    tokens = wheel_install.guided_tokens(default.outcome.detail, generation)
    if default.outcome.verdict is not Verdict.PASS or ("GENAI_CONSTRAINED" in generation and not tokens):
        return full + payload.run_profiles(ctx, arch, sweep.short, program, base_timeout=base), []
    ctx.log.info(f"    {', '.join(p.name for p in sweep.short)}: the short form ({sweep.evidence}; "
                 f"{default.profile.name} ran in full)")
    short = dataclasses.replace(program, env={**{k: v for k, v in program.env.items() if k != "GENAI_CONSTRAINED"},
                                              **wheel_install.short_generation(generation, tokens)})
    return full, payload.run_profiles(ctx, arch, sweep.short, short, base_timeout=base)


def proven_bytes(ctx: Context, arch: Arch, site_dir: Path, attempts: Sequence[payload.Attempt],
                 generation: Mapping[str, str]) -> wheel_install.Proof:
    """sha256 of every ELF file in the site the smoke's runs ran from, and the tokens tier 5 made on the arch's
    default profile (where the install test runs), when those runs passed every armed tier on every profile of the
    arch; else nothing proven."""
    arch_cfg = ctx.config.arches[arch]
    names = {a.profile.name for a in attempts}
    every_profile = names == {p.name for p in arch_cfg.profiles} and arch_cfg.default_profile in names
    passed = all(a.outcome.verdict is Verdict.PASS for a in attempts)
    if "GENAI_EXPECTED_TOKENS" not in generation or not every_profile or not passed:
        return wheel_install.Proof()
    default = next(a for a in attempts if a.profile.name == arch_cfg.default_profile)
    return wheel_install.Proof(hashes=frozenset(wheel_install.elf_hashes(site_dir).values()),
                               constrained=wheel_install.guided_tokens(default.outcome.detail, generation))


def short_form_note(default: str) -> str:
    """What a short-form row's reason adds; the scan's own clause follows on every vector row
    (pipeline.with_vector_evidence)."""
    return (f"; the short form ({wheel_install.SHORT_TOKENS} tokens against the reference's first, "
            f"{wheel_install.SHORT_TOKENS} guided against {default}'s full run's), the same code having run in full "
            f"on {default}")


def smoke(ctx: Context, arch: Arch, component: str, profiles: Sequence[Profile]) -> list[Row]:
    """Tiers 1–5 on every profile (the wider VLENs in the short form where the site holds no RVV instruction:
    plan_sweep); with tier 4 armed, the new tokens are also compared with the amd64 control's (the lane's amd64
    wheel under qemu-x86_64), exactly."""
    spec = ctx.config.components[component].smoke
    base = spec.timeout if spec else DEFAULT_TIMEOUT
    given = ctx.wheels.get(component, ())
    wheel = site.given_wheel(given, arch) if given else lane_wheel(ctx, arch, component)
    mine = install_site(ctx, arch, component, wheel)
    rows = [mine.row]
    if mine.site is None:
        return rows
    constrained = spec.options.get("constrained") if spec else None
    generation = generation_env(ctx, spec.text("model") if spec else None,
                                constrained if isinstance(constrained, Constrained) else None)
    sweep = plan_sweep(arch, ctx.config.arches[arch], profiles, generation,
                       [vector_code.scan(f) for f in shipping_folder.elf_files(mine.site)]
                       if info(arch).vector_cpu_property else [])
    full, short = sweep_runs(ctx, arch, sweep, program_for(arch, mine, generation), generation, base)
    attempts = sorted(full + short, key=lambda a: [p.name for p in profiles].index(a.profile.name))
    note = short_form_note(ctx.config.arches[arch].default_profile)
    shorts = {a.profile.name for a in short}
    rows += [dataclasses.replace(r, reason=r.reason + note) if r.profile in shorts else r
             for r in (payload.row(component, a, "genai") for a in attempts)]
    rows += loaded_ort(ctx, arch, component, attempts, mine.site if given else None)
    shared = component if arch is CONTROL_ARCH else controls.shared_with(ctx.config, component)  # its control build
    if not given:  # the lane's wheels, every CPython's, as a user installs them (and the control's)
        tested = [(arch, component)] if arch is CONTROL_ARCH else [(arch, component), (CONTROL_ARCH, shared)]
        proven = proven_bytes(ctx, arch, mine.site, attempts, generation)
        for each, built_by in tested:
            built = cmake_wheel.wheels(ctx.component_dir(each, built_by) / "install")
            rows += wheel_install.run(ctx, each, built_by, built, generation, base,
                                      proven if each is arch else wheel_install.Proof())
    if arch is CONTROL_ARCH or "GENAI_MODEL_DIR" not in generation:
        return rows
    control_cfg = ctx.config.arches[CONTROL_ARCH]
    control_profile = control_cfg.profile(control_cfg.default_profile)
    # A given wheel is compared with a given amd64 wheel of the same component; the lane's control is another
    # build (another version, other flags) and says nothing about it.
    control_wheel = (site.given_wheel(given, CONTROL_ARCH) if len(given) > 1 else None) if given else \
        lane_wheel(ctx, CONTROL_ARCH, shared)
    if given and control_wheel is None:
        return rows + [Row(component=component, arch=arch, check=Check.PARITY, verdict=Verdict.SKIP,
                           reason=f"a given wheel is compared only with a given {CONTROL_ARCH} wheel: pass --wheel "
                           f"<{component} {CONTROL_ARCH} wheel> too", profile=a.profile.name) for a in attempts]
    theirs = install_site(ctx, CONTROL_ARCH, shared, control_wheel)
    if theirs.site is None:
        return rows + [Row(component=component, arch=arch, check=Check.PARITY, verdict=Verdict.FAIL,
                           reason=f"no {CONTROL_ARCH} control to compare with: {theirs.row.reason}",
                           profile=a.profile.name)
                       for a in attempts]
    control = payload.run(ctx, CONTROL_ARCH, control_profile, program_for(CONTROL_ARCH, theirs, generation),
                          base_timeout=base)
    rows.insert(1, payload.row(component, control, "genai", control=True))
    features = compiled.parity(component, arch, mine.site, theirs.site, CONTROL_ARCH,
                               ctx.config.components[component].compiled)
    return rows + payload.parity(ctx, component, full, control, TOLERANCES) + \
        payload.parity(ctx, component, short, control, TOLERANCES, first=wheel_install.SHORT_TOKENS) + features


run = contract_call(smoke)  # the contract's call (registry.SMOKES)
