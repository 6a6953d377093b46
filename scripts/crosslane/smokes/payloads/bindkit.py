"""What every payload needs to tell absent from broken. stdlib only; runs inside the target.

A distribution that importlib.metadata cannot find is absent: SKIP (exit 3), and whether it should be
there is the parity check's judgement, not the smoke's. A distribution that is installed but whose import
raises is broken: FAIL (exit 1), never SKIP.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from dataclasses import dataclass
from types import ModuleType

EXIT_OK, EXIT_DEFECT, EXIT_ABSENT, EXIT_NO_PAYLOAD = 0, 1, 3, 4


@dataclass(frozen=True)
class Imported:
    """The outcome of importing one distribution: a module, or the state and reason it is missing."""

    distribution: str
    module: ModuleType | None
    version: str | None
    state: str  # "OK", "SKIP" (not installed) or "FAIL" (installed, import raised)
    reason: str

    @property
    def exit_code(self) -> int:
        return {"OK": EXIT_OK, "SKIP": EXIT_ABSENT}.get(self.state, EXIT_DEFECT)


def import_distribution(distribution: str, module: str) -> Imported:
    try:
        version = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return Imported(distribution, None, None, "SKIP", f"distribution {distribution} is not installed")
    try:
        loaded = importlib.import_module(module)
    # Any exception out of an installed distribution's import is the verdict itself (FAIL), not a
    # defect hidden: ImportError for a wrong-arch .so, OSError from ctypes, RuntimeError from init code.
    except Exception as exc:
        return Imported(distribution, None, version, "FAIL",
                        f"{distribution} {version} is installed but import {module} raised "
                        f"{type(exc).__name__}: {exc}")
    return Imported(distribution, loaded, version, "OK", f"{distribution} {version} imported from "
                    f"{getattr(loaded, '__file__', '?')}")


def finish(name: str, state: str, detail: str) -> int:
    """Print the one sentinel line and return the exit code that goes with it."""
    print(f"{name}-BIND {state}: {' '.join(detail.split())}", flush=True)
    return {"OK": EXIT_OK, "SKIP": EXIT_ABSENT, "ABSENT": EXIT_NO_PAYLOAD}.get(state, EXIT_DEFECT)


def require(name: str, distribution: str, module: str) -> ModuleType | int:
    """The imported module, or (after printing the sentinel) the exit code the payload must return."""
    imported = import_distribution(distribution, module)
    if imported.module is not None:
        print(f"PROVEN {imported.reason}")
        return imported.module
    print(f"{'DEFECT' if imported.state == 'FAIL' else 'UNPROVEN'} {imported.reason}")
    return finish(name, imported.state, imported.reason)
