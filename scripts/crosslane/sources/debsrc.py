"""Debian source packages: a pinned .dsc and its upstream tarball, verified, from Debian's archive.

The chain of trust is Debian's: apt, in an isolated configuration of its own (the host's apt state is
never touched), checks the suite's InRelease against the archive keyring and lists the source
package's files with their sha256 from the signed Sources index. crosslane downloads the .dsc and
checks it against that index, checks that every file the .dsc lists agrees with the index, and
checks the upstream tarball against the .dsc before extracting it. Debian's packaging and patches
(the .debian.tar.*) are verified by listing only: neither downloaded nor applied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from crosslane.errors import ConfigError, IntegrityError, MissingPrerequisite
from crosslane.files import stamps
from crosslane.process.runner import Runner
from crosslane.sources import net

APT_TIMEOUT = 600.0


@dataclass(frozen=True)
class DscFile:
    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Origin:
    """Where a source package comes from: a package=version in a suite of a mirror."""

    package: str
    version: str
    suite: str
    mirror: str
    keyring: str

    @property
    def dsc_name(self) -> str:
        return f"{self.package}_{self.version.split(':', 1)[-1]}.dsc"


def parse_dsc(text: str, where: str) -> tuple[DscFile, ...]:
    """The files listed in Checksums-Sha256 of a .dsc, read with python-debian's deb822 (which also strips a
    clearsigning wrapper; the signature itself is apt's concern, through the signed Sources index)."""
    from debian import deb822  # only where a Debian source is fetched: a no-op build parses no .dsc

    files: list[DscFile] = []
    # deb822 splits the multivalued field into {sha256, size, name} entries.
    for entry in deb822.Dsc(text).get("Checksums-Sha256") or []:
        digest, size, name = (str(entry.get(k, "")) for k in ("sha256", "size", "name"))
        if not re.fullmatch(r"[0-9a-f]{64}", digest) or not re.fullmatch(r"[0-9]{1,19}", size) or not name:
            raise ConfigError(f"{where}: malformed Checksums-Sha256 line '{digest} {size} {name}'",
                              fix="the .dsc is corrupt; check the pinned package version")
        files.append(DscFile(name=name, size=int(size), sha256=digest))
    if not files:
        raise ConfigError(f"{where}: no Checksums-Sha256 field", fix="the .dsc is corrupt or not a source package")
    for item in files:
        if "/" in item.name or item.name in (".", ".."):
            raise ConfigError(f"{where}: listed file '{item.name}' is not a plain file name",
                              fix="the .dsc is hostile or corrupt")
    return tuple(files)


def verify(dsc: Path) -> tuple[Path, ...]:
    """Check every downloaded file the .dsc lists (size, sha256), the upstream tarball being required."""
    listed = parse_dsc(dsc.read_text(encoding="utf-8", errors="replace"), dsc.name)
    upstream = upstream_name(dsc, listed)
    paths = []
    for item in listed:
        path = dsc.parent / item.name
        if not path.is_file():
            if item.name != upstream:
                continue
            raise ConfigError(f"{dsc.name}: lists {item.name}, which was not downloaded",
                              fix="the mirror is incomplete; try another mirror or --source")
        size, actual = path.stat().st_size, stamps.file_sha256(path)
        if size != item.size or actual != item.sha256:
            raise IntegrityError(f"{dsc.name}: {item.name} has sha256 {actual} ({size} bytes), the .dsc lists "
                              f"{item.sha256} ({item.size} bytes)",
                              fix="the download is corrupt or tampered with; delete the cache entry and retry")
        paths.append(path)
    return tuple(paths)


def upstream_name(dsc: Path, files: tuple[DscFile, ...]) -> str:
    """The upstream tarball's name: the main .orig.tar.* (3.0 quilt) or the only tarball (native)."""
    names = [f.name for f in files]
    orig = [n for n in names if re.search(r"\.orig\.tar\.[a-z0-9]+$", n)]
    if not orig:
        orig = [n for n in names if re.search(r"\.tar\.[a-z0-9]+$", n) and ".debian.tar." not in n]
    if len(orig) != 1:
        raise ConfigError(f"{dsc.name}: expected one upstream tarball, found {len(orig)}",
                          fix="pin a source package with a single .orig.tar.* or use an archive source")
    return orig[0]


def upstream_tarball(dsc: Path, files: tuple[Path, ...]) -> Path:
    """The verified upstream tarball among *files* (what verify() returned)."""
    name = upstream_name(dsc, parse_dsc(dsc.read_text(encoding="utf-8", errors="replace"), dsc.name))
    return next(f for f in files if f.name == name)


def apt_config(origin: Origin, state: Path) -> Path:
    for sub in ("etc/apt/apt.conf.d", "etc/apt/preferences.d", "etc/apt/sources.list.d", "lists/partial",
                "archives/partial"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    (state / "status").touch()
    (state / "etc/apt/sources.list").write_text(
        f"deb-src [signed-by={origin.keyring}] {origin.mirror} {origin.suite} main\n")
    options = {
        "Dir": f"{state}/", "Dir::State": str(state), "Dir::State::Lists": f"{state}/lists",
        "Dir::State::status": f"{state}/status", "Dir::Cache": str(state),
        "Dir::Cache::archives": f"{state}/archives", "Dir::Etc": f"{state}/etc/apt",
        "Acquire::Languages": "none", "Acquire::http::Timeout": "20", "Acquire::Retries": "1",
        "Debug::NoLocking": "true",
    }
    conf = state / "apt.conf"
    conf.write_text("\n".join(f'{key} "{value}";' for key, value in options.items()) + "\n")
    return conf


def parse_print_uris(output: str) -> dict[str, tuple[str, int, str]]:
    """`apt-get source --print-uris` lines ('URI' name size SHA256:hex) as {name: (uri, size, sha256)}."""
    found = {}
    for line in output.splitlines():
        match = re.fullmatch(r"'(\S+)' (\S+) (\d+) (?:SHA256:([0-9a-f]{64})|\S+)", line.strip())
        if match:
            found[match.group(2)] = (match.group(1), int(match.group(3)), match.group(4) or "")
    return found


def _fetch_checked(name: str, uri: str, expected: str, dest: Path, what: str) -> Path:
    path = dest / name
    actual = net.download(uri, path)
    if actual != expected:
        path.unlink()
        raise IntegrityError(f"{name}: sha256 is {actual}, {what} lists {expected}",
                          fix="the mirror served different bytes; try another mirror")
    return path


def download(runner: Runner, origin: Origin, state: Path, dest: Path) -> Path:
    """Download the pinned .dsc and its upstream tarball into *dest*, each checked before use.

    The .dsc is checked against the signed Sources index; every file it lists must agree with the
    index; the upstream tarball is checked against the .dsc. Debian's own packaging (.debian.tar.*),
    which crosslane does not apply, is verified by listing only and not downloaded.
    """
    net.probe(origin.mirror)
    if not Path(origin.keyring).is_file():
        raise MissingPrerequisite(f"archive keyring {origin.keyring} not found",
                                  fix="apt-get install debian-archive-keyring, or set sysroot.keyring")
    conf = apt_config(origin, state)
    env = {"APT_CONFIG": str(conf), "DEBIAN_FRONTEND": "noninteractive"}
    runner.run(["apt-get", "-q", "update"], env=env, timeout=APT_TIMEOUT, check=False)
    if not any((state / "lists").glob("*_Sources*")):
        raise net.Unavailable(net.host_of(origin.mirror), f"did not serve the source index of {origin.suite}")
    wanted = f"{origin.package}={origin.version}"
    empty = dest / ".print-uris"  # apt omits files already present in its working folder
    empty.mkdir(parents=True, exist_ok=True)
    listed = runner.run(["apt-get", "-q", "source", "--download-only", "--print-uris", wanted], env=env, cwd=empty,
                        timeout=120, check=False, probe=True)
    empty.rmdir()
    index = parse_print_uris(listed.output) if listed.ok else {}
    if origin.dsc_name not in index:
        raise ConfigError(f"debian source {wanted} is not in {origin.mirror} {origin.suite}",
                          fix="check the version against the suite's Sources index, or pin another suite")
    uri, _, digest = index[origin.dsc_name]
    dsc = _fetch_checked(origin.dsc_name, uri, digest, dest, f"the {origin.suite} Sources index")
    listed_files = parse_dsc(dsc.read_text(encoding="utf-8", errors="replace"), dsc.name)
    for item in listed_files:
        in_index = index.get(item.name)
        if in_index is None or (in_index[2] and in_index[2] != item.sha256):
            raise IntegrityError(f"{dsc.name}: {item.name} sha256 {item.sha256} does not match the {origin.suite} "
                              "Sources index", fix="the .dsc or the index is inconsistent; try another mirror")
    for item in listed_files:
        if item.name == upstream_name(dsc, listed_files):
            _fetch_checked(item.name, index[item.name][0], item.sha256, dest, dsc.name)
    return dsc
