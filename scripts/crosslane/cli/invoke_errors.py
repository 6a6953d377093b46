"""invoke's own argument errors (an unknown flag, a flag without its value) as crosslane reports every bad input:
one `crosslane: error:` line with the fix, exit 2 (errors.UsageError), instead of invoke's bare message and exit 1.

invoke parses a task's arguments after it has imported tasks.py, in `Program.parse_tasks`, and turns a `ParseError`
into exit 1 there; tasks.py calls `route_parse_errors()` so that step raises invoke's `Exit` with crosslane's line
and code instead, which `Program.run` prints and exits with. invoke offers no hook for this from a tasks file.
"""

from __future__ import annotations

import re

from invoke.exceptions import Exit, ParseError
from invoke.program import Program

from crosslane.errors import UsageError
from crosslane.log import Log

# invoke names a flag by its repr in some messages: "Flag <Argument: cpu (p)> needed value …"
ARGUMENT_REPR = re.compile(r"<Argument: ([\w-]+)[^>]*>")


def one_line(exc: ParseError) -> str:
    task = exc.context.name if exc.context is not None and exc.context.name else ""
    where = f"invoke {task}" if task else "invoke"
    fix = f"see invoke --help {task}" if task else "see invoke --list"
    message = ARGUMENT_REPR.sub(lambda m: "'--" + m.group(1).replace("_", "-") + "'", " ".join(str(exc).split()))
    prefix = "::error::" if Log().github else "crosslane: error: "
    return f"{prefix}{where}: {UsageError(message, fix=fix).one_line()}"


def route_parse_errors() -> None:
    """Make invoke's task-argument errors crosslane's one line and exit 2 (module docstring); idempotent."""
    original = Program.parse_tasks
    if getattr(original, "routed_by_crosslane", False):
        return

    def parse_tasks(self: Program) -> None:
        try:
            original(self)
        except ParseError as exc:
            raise Exit(one_line(exc), code=UsageError.exit_code) from None

    parse_tasks.routed_by_crosslane = True  # type: ignore[attr-defined]
    Program.parse_tasks = parse_tasks  # type: ignore[method-assign]
