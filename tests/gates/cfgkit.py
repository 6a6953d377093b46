"""A small versions.toml for gate tests, parsed with config.parse (components/<name> folders in tmp_path)."""

from __future__ import annotations

from pathlib import Path

from crosslane import config

BASE = """
schema = 1
[tools]
cmake = "3.31.6"
ninja = "1.13.0"
[sysroot]
packages = []
[toolchains.gcc]
family = "gcc"
[toolchains.clang]
family = "clang"
version = 19
[arches.amd64]
toolchain = "gcc"
[arches.amd64.profiles]
max = "max"
[arches.arm64]
toolchain = "gcc"
[arches.arm64.profiles]
max = "max"
[arches.riscv64]
toolchain = "clang"
[arches.riscv64.profiles]
rvv128 = "rv64,v=true,vlen=128"
[components.canary]
source = { kind = "tree", path = "components/canary" }
arches = ["amd64", "arm64", "riscv64"]
[components.genai]
source = { kind = "git", url = "https://example.invalid/genai.git", tag = "v0.9.0", commit = "%s" }
arches = ["amd64", "arm64", "riscv64"]
distribution = "onnxruntime-genai"
""" % ("a" * 40)


def make(tmp_path: Path, extra: str = "") -> config.Config:
    (tmp_path / "components" / "canary").mkdir(parents=True, exist_ok=True)
    path = tmp_path / "versions.toml"
    path.write_text(BASE + extra)
    return config.parse(path.read_text(), path)
