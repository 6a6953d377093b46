"""What a build step needs beyond the CMake toolchain file, derived from data on the component.

- `rust = true` (Rust built through Corrosion): on a cross arch, `-DRust_CARGO_TARGET=<rust triple>`
  and the cross C compiler as cargo's linker for that triple (CARGO_TARGET_<TRIPLE>_LINKER, plus the
  link arguments it needs: clang's --target and linker, the sysroot).
- `rust = true` or `host_tools = [...]` (the build compiles programs for the build machine: cargo build
  scripts, flatc, protoc): every step runs without the variables that would point those host
  compiles at target libraries and headers (the "aarch64 libgcc_s.so.1 is incompatible with
  elf64-x86-64" failure). HOST_LEAK_VARS names them.
- `rust_options`: kept or dropped by the positive-evidence rule (rules.rust_options).
- `options`: each becomes a `{option_<name>}` placeholder ("ON"/"OFF") for cmake_args (rules.xnnpack).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from crosslane.archs import Arch, host_arch, info
from crosslane.config import Component
from crosslane.errors import ConfigError, MissingPrerequisite
from crosslane.features import rules
from crosslane.features.probes import Probes
from crosslane.host.toolchains import Compiler
from crosslane.report import Verdict

HOST_LEAK_VARS = ("LIBRARY_PATH", "LD_LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
                  "PKG_CONFIG_PATH", "PKG_CONFIG_SYSROOT_DIR", "PKG_CONFIG_LIBDIR")


@dataclass(frozen=True, kw_only=True)
class Wiring:
    """What a cross build adds to CMake: arguments, environment to set and unset, placeholders."""

    cmake_args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    placeholders: Mapping[str, str] = field(default_factory=dict)




def is_cross(arch: Arch, machine: str | None = None) -> bool:
    return arch is not host_arch(machine)


def cargo_env_name(triple: str, what: str) -> str:
    """CARGO_TARGET_RISCV64GC_UNKNOWN_LINUX_GNU_LINKER for (riscv64gc-unknown-linux-gnu, LINKER)."""
    return f"CARGO_TARGET_{triple.upper().replace('-', '_').replace('.', '_')}_{what}"


def rust_cross(compiler: Compiler, sysroot: Path, component: str) -> Wiring:
    """Corrosion's target and cargo's linker for a cross arch."""
    triple = info(compiler.arch).rust_target
    if len(compiler.cc) != 1:
        raise ConfigError(f"versions.toml: components.{component}: rust = true needs a single-binary C compiler as "
                          f"cargo's linker, got {' '.join(compiler.cc)}", fix="use the gcc or clang toolchain")
    link_args = [*compiler.target_flags, *compiler.linker_flags, f"--sysroot={sysroot}"]
    env = {cargo_env_name(triple, "LINKER"): compiler.cc[0],
           cargo_env_name(triple, "RUSTFLAGS"): " ".join(f"-Clink-arg={arg}" for arg in link_args)}
    return Wiring(cmake_args=(f"-DRust_CARGO_TARGET={triple}",), env=env)


def wire(probes: Probes, component: Component, arch: Arch, compiler: Compiler, sysroot: Path, *,
         machine: str | None = None) -> Wiring:
    args: list[str] = []
    env: dict[str, str] = {}
    # A tool root's Rust is wired by recipes/cargo_root.py (its linker is inside the root, not the host's).
    if component.rust and not component.toolroot and is_cross(arch, machine):
        rust = rust_cross(compiler, sysroot, component.name)
        args += rust.cmake_args
        env = dict(rust.env)
    unset = HOST_LEAK_VARS if component.rust or component.host_tools else ()
    kept = rules.rust_options_for(probes, component.name, arch)
    if kept is not None and kept.enabled:
        args += component.rust_options
    placeholders = {}
    for name in component.options:
        decision = rules.option_rule(name)(probes, component.name, arch)
        assert decision is not None
        if decision.status is Verdict.FAIL:
            raise MissingPrerequisite(decision.message, fix=decision.fix)
        placeholders[f"option_{name}"] = "ON" if decision.enabled else "OFF"
    return Wiring(cmake_args=tuple(args), env=env, unset=unset, placeholders=placeholders)
