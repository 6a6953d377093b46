"""Run a program inside a tool root: bind the given folders at their own paths, chroot, exec.

Started by host/toolroot.py as `unshare --mount --propagation private [--map-root-user] -- python3 enter_root.py
ROOT --bind DIR ... --cwd DIR -- PROGRAM ARGS...`: the mounts live in that private mount namespace and vanish
with its last process, so a killed build leaves none behind. stdlib only (the host's python runs it).
Exit status: the program's own; 125 when the root cannot be entered (the reason on stderr).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# The host's own pseudo file systems a program expects (/dev/null, /proc/self/exe, /dev/shm).
SYSTEM = ("/proc", "/dev", "/sys")
CANNOT_ENTER = 125


def bind(source: Path, root: Path) -> None:
    target = root / source.relative_to("/")
    if source.is_dir():
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch(exist_ok=True)
    subprocess.run(["mount", "--rbind", str(source), str(target)], check=True)


def main(argv: list[str]) -> int:
    if "--" not in argv or len(argv) < 3:
        print("usage: enter_root.py ROOT [--bind DIR]... [--cwd DIR] -- PROGRAM [ARGS...]", file=sys.stderr)
        return CANNOT_ENTER
    split = argv.index("--")
    options, program = argv[:split], argv[split + 1:]
    root = Path(options[0])
    binds = [Path(options[i + 1]) for i, word in enumerate(options) if word == "--bind"]
    cwd = next((options[i + 1] for i, word in enumerate(options) if word == "--cwd"), "/")
    try:
        for source in [*map(Path, SYSTEM), *binds]:
            bind(source, root)
        os.chroot(root)
        os.chdir(cwd)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"crosslane: cannot enter the tool root {root}: {exc}", file=sys.stderr)
        return CANNOT_ENTER
    try:
        os.execvp(program[0], program)
    except OSError as exc:
        print(f"crosslane: {program[0]}: {exc.strerror} inside the tool root {root}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
