"""Programs that run inside a target under qemu. Each is stdlib-only and self-contained."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def path(name: str) -> Path:
    return Path(str(resources.files(__name__).joinpath(f"{name}.py")))
