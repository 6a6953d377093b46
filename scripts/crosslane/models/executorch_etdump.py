"""Op timing from ExecuTorch etdumps: one table per etdump (operator, calls, sum/avg/max ms).

A program, run by the python of the [hostenvs.executorch-aot] venv (executorch.devtools' Inspector reads the
flatcc etdump), never imported by crosslane.

    python executorch_etdump.py A.etdump [B.etdump …]      → one JSON line: {path: {"ops": […], "framework": […]}}
    python executorch_etdump.py --events A.etdump […]       → one JSON line: {path: [{"name", "raw"}, …]}

Reading (events) needs executorch; the table (table) is plain Python, importable and tested without it.

Events of the "Execute" block are the operators (and delegate calls); the runtime's own framework events
(Method::execute, OPERATOR_CALL, DELEGATE_CALL, Program::load_method, Method::init) are listed apart.
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from typing import Any

FRAMEWORK = ("Method::execute", "OPERATOR_CALL", "DELEGATE_CALL", "Program::load_method", "Method::init")


def events(path: str) -> list[dict[str, Any]]:
    """Every timed event of an etdump: {"name", "raw": [ms, …]}, as executorch.devtools' Inspector reads it."""
    from executorch.devtools import Inspector  # type: ignore[import-not-found]

    return [{"name": str(event.name), "raw": [float(t) for t in event.perf_data.raw]}
            for block in Inspector(etdump_path=path).event_blocks for event in block.events
            if event.perf_data is not None]


def table(timed: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Operators and framework events, each with calls and sum/avg/max ms, the costliest first."""
    times: dict[str, list[float]] = defaultdict(list)
    for event in timed:
        # XNNPACK numbers each operator instance ("Add (ND) #3"): the table counts calls per operator.
        times[re.sub(r" #\d+$", "", event["name"])] += event["raw"]

    def rows(names: list[str]) -> list[dict[str, Any]]:
        return [{"op": name, "calls": len(times[name]), "sum_ms": round(sum(times[name]), 4),
                 "avg_ms": round(sum(times[name]) / len(times[name]), 4), "max_ms": round(max(times[name]), 4)}
                for name in sorted(names, key=lambda n: -sum(times[n])) if times[name]]
    return {"ops": rows([n for n in times if n not in FRAMEWORK]),
            "framework": rows([n for n in times if n in FRAMEWORK])}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--events"]:  # the raw events (how the tests' fixtures were made)
        print(json.dumps({path: events(path) for path in argv[1:]}))
    else:
        print(json.dumps({path: table(events(path)) for path in argv}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
