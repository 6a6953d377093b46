"""Vector code only where the component says it is: `components.<c>.vector_sources`.

A library built for the base ISA with a few files compiled for V (ONNX Runtime's MLAS kernels) runs on a CPU
without V only if no other file holds a vector instruction: the compiler may vectorise any file it is allowed to,
and a kernel selected without a check would be reached by scalar callers. The build tree says which source each
object came from (build.ninja's compile edges), so the gate reads every RISC-V object file the build compiled:

- every object holding vector instructions comes from a declared source (fnmatch on its path in the source tree);
- every declared pattern matches at least one object that holds some (the kernels really are vector code);
- the installed libraries hold vector instructions (the kernels reached the artifact).

Anything else is a FAIL naming the file; a build tree without build.ninja is no evidence (FAIL, not SKIP).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from crosslane.archs import Arch
from crosslane.gates import elf, vector_code
from crosslane.report import Check, Row, Verdict

# `build <output>.o: <RULE>_COMPILER__<target>_<config> <source> | …`: CMake's Ninja generator, C and C++.
COMPILE_EDGE = re.compile(r"^build ((?:[^:$\s]|\$.)+\.o): (?:C|CXX|ASM)_COMPILER__\S* ((?:[^|$\s]|\$.)+)")
NINJA_ESCAPE = re.compile(r"\$(.)")


@dataclass(frozen=True, kw_only=True)
class ObjectCode:
    """One compiled object: its source (relative to the source tree when inside it) and its vector instructions."""

    source: str
    instructions: int


def unescape(text: str) -> str:
    """A ninja path as written in build.ninja (`$ ` a space, `$:` a colon, `$$` a dollar)."""
    return NINJA_ESCAPE.sub(lambda m: m.group(1), text)


def compile_edges(build_ninja: str) -> Iterator[tuple[str, str]]:
    """(object, source) of every compile edge of a CMake-generated build.ninja."""
    for line in build_ninja.splitlines():
        found = COMPILE_EDGE.match(line)
        if found:
            yield unescape(found.group(1)), unescape(found.group(2))


def objects(build_dir: Path, source_root: Path) -> list[ObjectCode]:
    """The vector instructions of every RISC-V object the build compiled, by source."""
    text = (build_dir / "build.ninja").read_text(encoding="utf-8", errors="replace")
    found = []
    for output, source in compile_edges(text):
        path = build_dir / output
        if not path.is_file():
            continue  # an object of a target this build did not make
        scanned = vector_code.scan(path)
        if not scanned.scanned:
            continue
        where = Path(source)
        relative = where.relative_to(source_root).as_posix() if where.is_relative_to(source_root) else source
        found.append(ObjectCode(source=relative, instructions=scanned.instructions))
    return found


def _declared(source: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(source, pattern) for pattern in patterns)


def rows(component: str, arch: Arch, build_dir: Path, source_root: Path, installed: Sequence[Path],
         patterns: Sequence[str], reader: elf.Reader | None = None) -> list[Row]:
    """One row: where the vector code is (PASS), or the first file that breaks the declaration (FAIL)."""
    def row(verdict: Verdict, reason: str) -> Row:
        return Row(component=component, arch=arch, check=Check.GATE, verdict=verdict, reason=reason,
                   subject="vector-sources")

    if not (build_dir / "build.ninja").is_file():
        return [row(Verdict.FAIL, f"{build_dir}: no build.ninja to attribute objects to sources; the vector "
                                  "placement cannot be shown")]
    found = objects(build_dir, source_root)
    holding = [o for o in found if o.instructions]
    stray = sorted((o for o in holding if not _declared(o.source, patterns)), key=lambda o: -o.instructions)
    if stray:
        names = ", ".join(f"{o.source} ({o.instructions})" for o in stray[:3])
        return [row(Verdict.FAIL, f"vector instructions outside the declared vector sources "
                                  f"({', '.join(patterns)}): {names}{' …' if len(stray) > 3 else ''}; such code "
                                  "runs unchecked on a CPU without V")]
    empty = [p for p in patterns if not any(fnmatch.fnmatchcase(o.source, p) for o in holding)]
    if empty:
        return [row(Verdict.FAIL, f"declared vector sources {', '.join(empty)} hold no vector instruction in "
                                  f"{len(found)} RISC-V objects: the kernels were not built for V")]
    reader = reader or elf.Reader()
    shipped = [vector_code.scan(p, reader) for p in installed]
    in_libraries = sum(s.instructions for s in shipped if s.scanned)
    if not in_libraries:
        return [row(Verdict.FAIL, f"the {len(holding)} vector objects reached none of the {len(shipped)} installed "
                                  "ELF files: no vector instruction shipped")]
    return [row(Verdict.PASS, f"{sum(o.instructions for o in holding)} vector instructions in {len(holding)} of "
                              f"{len(found)} objects, all from {', '.join(patterns)}; {in_libraries} in the "
                              "installed libraries")]
