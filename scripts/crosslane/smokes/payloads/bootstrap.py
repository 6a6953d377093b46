"""Passed to the target's python3 with -c: fetches the payload (a file or an environment variable) and runs it.

stdlib only. A payload that never arrived or is empty ends as `<NAME>-BIND ABSENT: …` with exit 4, so the
driver's verdict is FAIL with that reason instead of a silent pass. Usage: python3 -c BOOTSTRAP NAME [ARGS…]
with CROSSLANE_PAYLOAD_FILE (a path) or CROSSLANE_PAYLOAD (the program text) set; CROSSLANE_PAYLOAD_HELPERS
names a folder appended to sys.path (the payloads' shared helpers).
"""

import os
import sys

EXIT_NO_PAYLOAD = 4


def load(name: str) -> tuple[str, str] | int:
    """(filename, text) of the payload, or the exit code after printing the ABSENT sentinel."""
    where = os.environ.get("CROSSLANE_PAYLOAD_FILE", "")
    text = os.environ.get("CROSSLANE_PAYLOAD")
    if where:
        try:
            with open(where, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            print(f"{name}-BIND ABSENT: the payload {where} never arrived ({exc.strerror})", flush=True)
            return EXIT_NO_PAYLOAD
    if text is None:
        print(f"{name}-BIND ABSENT: no payload was passed (CROSSLANE_PAYLOAD_FILE and CROSSLANE_PAYLOAD unset)",
              flush=True)
        return EXIT_NO_PAYLOAD
    if not text.strip():
        print(f"{name}-BIND ABSENT: the payload {where or '(environment)'} is empty", flush=True)
        return EXIT_NO_PAYLOAD
    return where or "<payload>", text


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python3 -c BOOTSTRAP NAME [ARGS...]", flush=True)
        return EXIT_NO_PAYLOAD
    loaded = load(argv[0])
    if isinstance(loaded, int):
        return loaded
    filename, text = loaded
    helpers = os.environ.get("CROSSLANE_PAYLOAD_HELPERS")
    if helpers:
        sys.path.append(helpers)
    sys.argv = [filename, *argv[1:]]
    namespace = {"__name__": "__main__", "__file__": filename, "__builtins__": __builtins__}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - running the payload is this program's job
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
