"""The operators bundled ExecuTorch programs call, for a selective build: `python executorch_ops.py A.bpte ...`.

Runs in the executorch host venv (it imports executorch); prints one JSON list of "name" or "name.overload"
strings, sorted, the union over the files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def operators(path: Path) -> set[str]:
    from executorch.devtools.bundled_program.serialize import (  # type: ignore[import-not-found]
        deserialize_from_flatbuffer_to_bundled_program,
    )
    from executorch.exir._serialize._program import deserialize_pte_binary  # type: ignore[import-not-found]

    bundled = deserialize_from_flatbuffer_to_bundled_program(path.read_bytes())
    pte = deserialize_pte_binary(bundled.program)
    program = getattr(pte, "program", pte)
    return {op.name + (f".{op.overload}" if op.overload else "") for plan in program.execution_plan
            for op in plan.operators}


def main(argv: list[str]) -> int:
    found: set[str] = set()
    for name in argv:
        found |= operators(Path(name))
    print(json.dumps(sorted(found)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
