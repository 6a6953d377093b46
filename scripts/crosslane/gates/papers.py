"""The papers gate: what a wheel's SBOM and licences claim, checked against the wheel's own bytes.

- `.dist-info/sboms/crosslane.cdx.json` is CycloneDX 1.6 (the schema, through CycloneDX's library);
- every ELF file in the wheel is in it, with the sha256 the file has: a Debian package's library (`crosslane:file`
  and `crosslane:file-sha256` of its component) or a file the build made (`crosslane:built-file`): a swapped
  library is a FAIL naming it;
- every licence text the SBOM names (`crosslane:licence-file`) and every `License-File` of METADATA is in
  `.dist-info/licenses/`: a removed licence is a FAIL naming it.
A wheel without crosslane's SBOM (another project's) makes no such claim: SKIP, unless the caller requires the
papers (a crosslane build's own gates), then FAIL.
"""

from __future__ import annotations

import email.parser
import email.policy
from dataclasses import dataclass
from pathlib import Path

from crosslane.archs import Arch
from crosslane.files import stamps
from crosslane.gates import row
from crosslane.report import Row, Verdict
from crosslane.shipping import folder, sbom

GATE = "papers"
MAX_SBOM_BYTES = 16 << 20


def dist_info(root: Path) -> Path | None:
    found = sorted(p.parent for p in root.glob("*.dist-info/METADATA") if p.is_file())
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True, kw_only=True)
class Claims:
    """What an SBOM states of a wheel: member -> sha256 for every ELF file, and the licence files it names."""

    files: dict[str, str]
    licences: list[str]


def claimed_files(document: str) -> Claims:
    """What the SBOM *document* claims."""
    files: dict[str, str] = {}
    named: list[str] = []
    data_components = list(sbom.components(document))
    for component in [*data_components, *sbom.metadata_components(document)]:
        properties = {}
        listed = component.get("properties")
        for item in listed if isinstance(listed, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) \
                    or not isinstance(item.get("value"), str):
                continue
            name, value = item["name"], item["value"]
            if name == sbom.BUILT_FILE and " sha256=" in value:
                member, _, digest = value.rpartition(" sha256=")
                files[member] = digest
            elif name == sbom.LICENCE_FILE:
                named.append(value)
            else:
                properties[name] = value
        if "crosslane:file" in properties and "crosslane:file-sha256" in properties:
            files[properties["crosslane:file"]] = properties["crosslane:file-sha256"]
    return Claims(files=files, licences=named)


def check(root: Path, wheel: str, arch: Arch, elf_members: list[str], *, required: bool) -> list[Row]:
    """Rows of the papers gate for a wheel unpacked at *root* whose ELF files are *elf_members*."""
    info = dist_info(root)
    if info is None:
        # Another project's malformed wheel is the RECORD gate's to name; a crosslane build's must carry papers.
        return [row(wheel, arch, GATE, Verdict.FAIL, f"{wheel}: not one .dist-info with METADATA")] if required else []
    rows = licence_fields(root, info, wheel, arch)
    return [*rows, *claims(root, info / "sboms" / sbom.SBOM_NAME, info / "licenses", wheel, arch, elf_members,
                           required=required)]


def check_folder(root: Path, arch: Arch, elf_files: list[str], *, required: bool) -> list[Row]:
    """The same for an install folder (its SBOM and LICENSES/ at the top, shipping/folder.py)."""
    return claims(root, root / folder.SBOM, root / folder.LICENSES, root.name, arch, elf_files, required=required)


def claims(root: Path, document_path: Path, licences_dir: Path, subject: str, arch: Arch, elf_members: list[str], *,
           required: bool) -> list[Row]:
    if not document_path.is_file():
        verdict = Verdict.FAIL if required else Verdict.SKIP
        return [row(subject, arch, GATE, verdict, f"{subject}: no {document_path.relative_to(root)}: its parts and "
                                                "licences are not stated" + ("" if required else
                                                                            " (not built by crosslane)"))]
    if document_path.stat().st_size > MAX_SBOM_BYTES:
        return [row(subject, arch, GATE, Verdict.FAIL, f"{subject}: its SBOM is over {MAX_SBOM_BYTES >> 20} MiB")]
    document = document_path.read_text(encoding="utf-8", errors="replace")
    problem = sbom.validate(document)
    if problem is not None:
        return [row(subject, arch, GATE, Verdict.FAIL, f"{subject}: the SBOM is not CycloneDX 1.6: {problem}")]
    claims = claimed_files(document)
    failures = []
    for member in elf_members:
        claimed = claims.files.get(member)
        digest = stamps.file_sha256(root / member)
        if claimed is None:
            failures.append(f"{member}: an ELF file the SBOM does not list")
        elif claimed != digest:
            failures.append(f"{member}: sha256 {digest[:16]}…, the SBOM states {claimed[:16]}… (not the file built)")
    failures += [f"{name}: a licence text the SBOM names, missing from {licences_dir.relative_to(root)}"
                 for name in sorted(set(claims.licences)) if not _inside(licences_dir, name)]
    if failures:
        shown = "; ".join(failures[:3]) + (f" (+{len(failures) - 3} more)" if len(failures) > 3 else "")
        return [row(subject, arch, GATE, Verdict.FAIL, f"{subject}: {shown}")]
    return [row(subject, arch, GATE, Verdict.PASS,
                       f"CycloneDX 1.6 SBOM; {len(elf_members)} ELF files as it states; {len(set(claims.licences))} "
                "licence texts present")]


def _inside(folder: Path, name: str) -> bool:
    """Whether *name* (as the wheel states it: hostile) is a file inside *folder*."""
    try:
        path = (folder / name).resolve()
    except (ValueError, OSError):  # a NUL byte, a loop of links: no licence text there
        return False
    return path.is_relative_to(folder.resolve()) and path.is_file()


def licence_fields(root: Path, info: Path, wheel: str, arch: Arch) -> list[Row]:
    """Every License-File of METADATA present in .dist-info/licenses (PEP 639); no row when none is declared."""
    text = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
    declared = email.parser.Parser(policy=email.policy.compat32).parsestr(text).get_all("License-File") or []
    missing = [name for name in declared if not _inside(info / "licenses", name)]
    if missing:
        return [row(wheel, arch, "licence-files", Verdict.FAIL,
                    f"{wheel}: License-File {missing[0]} is not in {info.name}/licenses"
                    + (f" (+{len(missing) - 1} more)" if len(missing) > 1 else ""))]
    return [row(wheel, arch, "licence-files", Verdict.PASS, f"{len(declared)} License-File texts present")] \
        if declared else []
