"""Feature rules per component: RVV capability, ExecuTorch's XNNPACK rule, Rust targets, the lane."""

from __future__ import annotations

from crosslane.archs import info
from crosslane.errors import MissingPrerequisite
from crosslane.features.probes import Probes
from crosslane.features.rules import root_std_for, rust_options_for, xnnpack_for
from crosslane.host import toolroot
from crosslane.host.toolchains import Compiler
from crosslane.preflight.checks.base import Outcome, Subject
from crosslane.report import Verdict


def _compiler(probes: Probes, subject: Subject) -> Compiler | None:
    assert subject.component is not None
    found = probes.compiler(subject.component, subject.arch)
    return None if isinstance(found, MissingPrerequisite) else found


def rvv_applies(probes: Probes, subject: Subject) -> str | None:
    if not info(subject.arch).vector_compile_flags:
        return f"no vector intrinsics probe on {subject.arch}"
    if _compiler(probes, subject) is None:
        return "no compiler (see the compiler check)"
    return None


def rvv(probes: Probes, subject: Subject) -> Outcome:
    found = _compiler(probes, subject)
    assert found is not None
    flags = " ".join(info(subject.arch).vector_compile_flags)
    if probes.rvv(found):
        return Outcome(status=Verdict.PASS, message=f"{found.family} {found.version} compiles the RVV probe ({flags})")
    return Outcome(status=Verdict.FAIL,
                   message=f"{found.family} {found.version} ({found.cc[0]}) cannot compile RVV intrinsics "
                           f"({flags}): vector kernels would silently fall back to scalar",
                   fix=f"use clang or GCC 14 for {subject.arch} (toolchain in versions.toml)")


def xnnpack_applies(probes: Probes, subject: Subject) -> str | None:
    assert subject.component is not None
    if "xnnpack" not in probes.config.components[subject.component].options:
        return f"{subject.component} has no xnnpack option"
    if _compiler(probes, subject) is None:
        return "no compiler (see the compiler check)"
    return None


def xnnpack(probes: Probes, subject: Subject) -> Outcome:
    assert subject.component is not None
    decision = xnnpack_for(probes, subject.component, subject.arch)
    assert decision is not None
    return Outcome(status=decision.status, message=decision.message, fix=decision.fix)


def rust_applies(probes: Probes, subject: Subject) -> str | None:
    assert subject.component is not None
    component = probes.config.components[subject.component]
    if not component.rust_options and not component.toolroot:
        return (f"{subject.component} has no Rust-dependent option (rust_options) and no Rust tool root: nothing "
                "to decide")
    return None


def rust_target(probes: Probes, subject: Subject) -> Outcome:
    """The target's std: in the component's tool root (read from its files), else by rustup's listing."""
    assert subject.component is not None
    decision = root_std_for(probes, subject.component, subject.arch) or \
        rust_options_for(probes, subject.component, subject.arch)
    assert decision is not None
    return Outcome(status=decision.status, message=decision.message, fix=decision.fix)


def toolroot_applies(probes: Probes, subject: Subject) -> str | None:
    assert subject.component is not None
    config = probes.config
    rooted = any(config.toolchain_for(subject.component, arch).toolroot for arch in config.arches
                 if config.builds(subject.component, arch))
    if not config.components[subject.component].toolroot and not rooted:
        return f"{subject.component} takes no tools from a tool root"
    return None


def toolroot_entry(probes: Probes, subject: Subject) -> Outcome:
    """How this host lets the build enter the component's tool root (unshare + chroot), or why it cannot."""

    match toolroot.entry_mode(probes.runner):
        case "root":
            return Outcome(status=Verdict.PASS, message="the tool root is entered as root (a private mount namespace)")
        case "userns":
            return Outcome(status=Verdict.PASS,
                           message="the tool root is entered through an unprivileged user namespace")
        case None:
            return Outcome(status=Verdict.FAIL,
                           message="this host lets no process enter a tool root (unshare --mount failed as "
                                   "root and as an unprivileged user namespace)", fix=toolroot.ENTRY_FIX)


def lane(probes: Probes, subject: Subject) -> Outcome:
    state = subject.lane
    assert state is not None
    if state.enabled:
        return Outcome(status=Verdict.PASS, message=f"lane on ({state.setting})")
    reason = f" ({state.reason})" if state.reason else ""
    return Outcome(status=Verdict.NOTICE,
                   message=f"lane off by {state.setting}{reason}: the build writes a placeholder")
