"""The GitHub Actions matrix, derived from versions.toml (never written by hand)."""

from __future__ import annotations

import json

from crosslane.config import Config


def matrix(config: Config) -> dict[str, list[dict[str, object]]]:
    include: list[dict[str, object]] = []
    for arch, arch_cfg in config.arches.items():
        include.append({
            "arch": arch.value,
            "components": " ".join(arch_cfg.components),
            "profiles": " ".join(p.name for p in arch_cfg.profiles),
        })
    return {"include": include}


def github_output(config: Config) -> str:
    """The line a workflow appends to $GITHUB_OUTPUT."""
    return "matrix=" + json.dumps(matrix(config), separators=(",", ":"))
