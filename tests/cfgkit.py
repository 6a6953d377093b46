"""A small versions.toml for gate tests, parsed with config.parse (components/<name> folders in tmp_path)."""

from __future__ import annotations

from pathlib import Path

from crosslane import config
from crosslane_helpers import versions_header

BASE = versions_header() + """
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
