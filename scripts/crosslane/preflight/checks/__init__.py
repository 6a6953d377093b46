"""The one registry of preflight checks, in report order. Add a check by adding a row."""

from __future__ import annotations

from crosslane.preflight.checks import cpu, features, host, target
from crosslane.preflight.checks.base import Check, Outcome, Subject, always

REGISTRY: tuple[Check, ...] = (
    Check("cmake", "arch", always, host.cmake),
    Check("ninja", "arch", always, host.ninja),
    Check("qemu", "arch", always, host.qemu),
    Check("sysroot", "arch", always, target.sysroot_present),
    Check("target-python", "arch", target.python_applies, target.python_dev),
    Check("qemu-cpu-profiles", "arch", cpu.cpu_profiles_apply, cpu.cpu_profiles, gates_build=False),
    Check("lane", "component", always, features.lane, respects_lane=False),
    Check("compiler", "component", always, host.compiler),
    Check("sysroot-link", "component", host.sysroot_link_applies, host.sysroot_link),
    Check("cpu-extensions", "component", cpu.cpu_extensions_apply, cpu.cpu_extensions),
    Check("rvv", "component", features.rvv_applies, features.rvv),
    Check("xnnpack", "component", features.xnnpack_applies, features.xnnpack),
    Check("rust-target", "component", features.rust_applies, features.rust_target),
    Check("toolroot-entry", "component", features.toolroot_applies, features.toolroot_entry),
)

__all__ = ["REGISTRY", "Check", "Outcome", "Subject"]
