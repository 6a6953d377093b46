"""Decisions about optional features, as pure functions of what the probes found.

Preflight reports them; the build wires them (crosswire.py). Both call these functions, so the
report and the build can never disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from crosslane.archs import Arch, info
from crosslane.errors import MissingPrerequisite
from crosslane.features.probes import Probes, RootStd, RustupListing
from crosslane.host.toolchains import Compiler
from crosslane.registry import OPTIONS
from crosslane.report import Verdict

# ExecuTorch refuses XNNPACK on riscv64 with GCC older than 14 (its RVV kernels need GCC 14's intrinsics);
# the rule applies on arches whose vector unit needs probed compiler support (vector_compile_flags).
XNNPACK_MIN_GCC = 14


@dataclass(frozen=True, kw_only=True)
class Decision:
    """A feature rule's verdict for a component on an arch, with the fix when it is off."""

    status: Verdict
    enabled: bool
    message: str
    fix: str = ""


def xnnpack(requested: str, arch: Arch, compiler: Compiler, rvv_ok: bool) -> Decision:
    """ExecuTorch's semantics: "on" with an unfit compiler fails; "auto" turns XNNPACK off with a notice.

    A compiler is fit when the arch needs no vector probe, or it is GCC >= 14, or it is not GCC and
    compiles the RVV probe (clang-19 does).
    """
    if requested == "off":
        return Decision(status=Verdict.PASS, enabled=False, message="xnnpack = \"off\" in versions.toml")
    needs_rule = bool(info(arch).vector_compile_flags)
    if not needs_rule:
        return Decision(status=Verdict.PASS, enabled=True,
                        message=f"xnnpack = \"{requested}\": no compiler rule on {arch}")
    who = f"{compiler.family} {compiler.version}"
    if compiler.family == "gcc":
        fit = compiler.major >= XNNPACK_MIN_GCC
        why = f"{who} is {'>=' if fit else '<'} {XNNPACK_MIN_GCC}"
    else:
        fit = rvv_ok
        why = f"{who} {'compiles' if fit else 'cannot compile'} the RVV probe"
    if fit:
        return Decision(status=Verdict.PASS, enabled=True, message=f"xnnpack = \"{requested}\": {why}")
    fix = f"use clang or GCC {XNNPACK_MIN_GCC} (components.<name>.toolchain.{arch} in versions.toml)"
    if requested == "on":
        return Decision(status=Verdict.FAIL, enabled=False,
                        message=f"XNNPACK requires GCC {XNNPACK_MIN_GCC}+ on {arch}; use clang or GCC "
                                f"{XNNPACK_MIN_GCC} ({why})", fix=fix)
    return Decision(status=Verdict.NOTICE, enabled=False,
                    message=f"XNNPACK turned off on {arch}: {why} (xnnpack = \"auto\")", fix=fix)


def rust_options(listing: RustupListing, triple: str, options: tuple[str, ...]) -> Decision:
    """The positive-evidence rule: drop the Rust-dependent options only when rustup ran, exited 0,
    listed installed targets, and the triple is not among them. Anything less proves nothing."""
    named = " ".join(options)
    match listing.state:
        case "listed" if triple not in listing.targets:
            return Decision(status=Verdict.WARN, enabled=False,
                            message=f"rustup has no {triple} target ({listing.detail}): dropping {named}",
                            fix=f"rustup target add {triple}")
        case "listed":
            return Decision(status=Verdict.PASS, enabled=True, message=f"rustup has {triple}: keeping {named}")
        case "absent" | "failed" | "empty":
            return Decision(status=Verdict.PASS, enabled=True,
                            message=f"{listing.detail}: no evidence the target is missing; keeping {named}")
        case _:
            raise AssertionError(listing.state)


def root_std(evidence: RootStd, triple: str, root_name: str, debian_arch: str) -> Decision:
    """The same rule for a tool root's Rust: only the root's own files can show the std is missing, and then the
    build stops with the fix (the Rust-built feature is never dropped silently); no root yet proves nothing."""
    match evidence.state:
        case "missing":
            return Decision(status=Verdict.FAIL, enabled=False,
                            message=f"{evidence.detail}: the Rust part cannot be built for {triple}",
                            fix=f"add \"libstd-rust-dev:{debian_arch}\" to [toolroots.{root_name}].packages")
        case "present":
            return Decision(status=Verdict.PASS, enabled=True, message=f"{triple} std: {evidence.detail}")
        case "no-root":
            return Decision(status=Verdict.PASS, enabled=True,
                            message=f"{evidence.detail}; no evidence the {triple} std is missing")
        case _:
            raise AssertionError(evidence.state)


# -- the same decisions, fed by the probes (what preflight reports and the build wires) -----------------


def xnnpack_for(probes: Probes, component: str, arch: Arch) -> Decision | None:
    """The XNNPACK decision for a component with an xnnpack option (None: it has none)."""
    requested = probes.config.components[component].options.get("xnnpack")
    if requested is None:
        return None
    found = probes.compiler(component, arch)
    if isinstance(found, MissingPrerequisite):
        raise found
    rvv_ok = bool(info(arch).vector_compile_flags) and found.family != "gcc" and probes.rvv(found)
    return xnnpack(requested, arch, found, rvv_ok)


def rust_options_for(probes: Probes, component: str, arch: Arch) -> Decision | None:
    """The positive-evidence decision for a component's Rust-dependent options (None: it has none)."""
    options = probes.config.components[component].rust_options
    if not options:
        return None
    return rust_options(probes.rustup(), info(arch).rust_target, options)


def root_std_for(probes: Probes, component: str, arch: Arch) -> Decision | None:
    """The target std decision for a component whose Rust comes from a tool root (None: it takes none)."""
    name = probes.config.components[component].toolroot
    if not name:
        return None
    return root_std(probes.root_std(name, info(arch).rust_target), info(arch).rust_target, name,
                    info(arch).debian_arch)


Rule = Callable[[Probes, str, Arch], "Decision | None"]


def option_rule(name: str) -> Rule:
    """The rule registry.OPTIONS registers for a components.<name>.options key."""
    rule = OPTIONS.load(name)
    assert callable(rule), f"{OPTIONS.entries[name]} is not a rule"
    return rule
