"""What a build really compiled in, read from its libraries, not from its configure flags.

`components.<c>.compiled = { guidance = "llg_new_tokenizer" }` names each feature the lane is specified with and
a dynamic symbol only a build with it exports (genai links llguidance's static library into
libonnxruntime-genai.so, which exports its C API). A build whose libraries export none of them has not compiled
the feature in, whatever CMake was told: a FAIL naming it. Two builds of one component for different arches are
compared feature by feature (the ARCH-PARITY question a distribution name cannot answer: same wheel name,
different wheel).
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from crosslane.archs import Arch
from crosslane.gates import elf
from crosslane.report import Check, Row, Verdict

MAX_LIBRARY = 1 << 30


def _libraries(root: Path, reader: elf.Reader) -> Iterator[tuple[str, elf.ElfInfo | elf.ElfDefect]]:
    """(name, ELF facts) of every shared library under *root*, inside wheels too."""
    paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    for path in paths:
        if path.name.endswith(".whl"):
            try:
                with zipfile.ZipFile(path) as wheel:
                    for member in wheel.infolist():
                        if ".so" in member.filename.rsplit("/", 1)[-1] and member.file_size <= MAX_LIBRARY:
                            yield f"{path.name}:{member.filename}", elf.read_data(path / member.filename,
                                                                                  wheel.read(member))
            except (zipfile.BadZipFile, OSError):
                continue
        elif ".so" in path.name and path.stat().st_size <= MAX_LIBRARY:
            yield str(path.relative_to(root)) if path != root else path.name, reader.read(path)


def found(root: Path, symbols: Mapping[str, str], reader: elf.Reader | None = None) -> dict[str, str | None]:
    """feature → the library exporting its symbol (None: none does)."""
    result: dict[str, str | None] = dict.fromkeys(symbols)
    wanted = set(symbols.values())
    if not wanted or not root.exists():
        return result
    for name, facts in _libraries(root, reader or elf.Reader()):
        if isinstance(facts, elf.ElfDefect):
            continue
        for feature, symbol in symbols.items():
            if result[feature] is None and symbol in facts.exported:
                result[feature] = name
    return result


def rows(component: str, arch: Arch, root: Path, symbols: Mapping[str, str], reader: elf.Reader | None = None
         ) -> list[Row]:
    """One gate row per declared feature: compiled in (the library that proves it) or not."""
    result = []
    for feature, where in found(root, symbols, reader).items():
        if where is None:
            result.append(Row(component=component, arch=arch, check=Check.GATE, verdict=Verdict.FAIL,
                              reason=f"{feature} is not compiled in: no library of the build exports "
                              f"{symbols[feature]} (versions.toml specifies the lane with it)",
                              subject=f"compiled:{feature}"))
        else:
            result.append(Row(component=component, arch=arch, check=Check.GATE, verdict=Verdict.PASS,
                              reason=f"{feature} compiled in: {where} exports {symbols[feature]}",
                              subject=f"compiled:{feature}"))
    return result


def parity(component: str, arch: Arch, mine: Path, control: Path, control_arch: Arch,
           symbols: Mapping[str, str], profile: str = "") -> list[Row]:
    """The same features compiled into this arch's build as into the control's: a difference is a FAIL."""
    if not symbols:
        return []
    ours, theirs = found(mine, symbols), found(control, symbols)
    differ = [f for f in symbols if (ours[f] is None) != (theirs[f] is None)]
    shown = ", ".join(f"{f} {'yes' if ours[f] else 'no'}" for f in symbols)
    if differ:
        detail = "; ".join(f"{f}: {arch} {'has' if ours[f] else 'lacks'} it, {control_arch} "
                           f"{'has' if theirs[f] else 'lacks'} it" for f in differ)
        return [Row(component=component, arch=arch, check=Check.PARITY, verdict=Verdict.FAIL,
                    reason=f"compiled features differ: {detail}", subject="compiled", profile=profile)]
    return [Row(component=component, arch=arch, check=Check.PARITY, verdict=Verdict.PASS,
                reason=f"compiled features as {control_arch}'s: {shown}", subject="compiled", profile=profile)]
