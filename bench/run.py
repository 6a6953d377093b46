"""`nox -s bench`: every benchmark in this folder (a module with main(argv) -> int), in name order."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    worst = 0
    for path in sorted(HERE.glob("*.py")):
        if path.name == Path(__file__).name:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if hasattr(module, "main"):
            print(f"== {path.name}", flush=True)
            worst = max(worst, module.main(argv))
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
