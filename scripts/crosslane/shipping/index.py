"""A PEP 503 simple index of built wheels: `<output>/simple/index.html` naming each project, each project's page
linking its wheels with their sha256 (`#sha256=`), the wheels (and their provenance) in `<output>/files/`. pip
installs from it as from any index: `pip install --index-url file:///<output>/simple onnxruntime-genai`.
The pages are the same bytes for the same wheels (sorted, no time in them). Only wheels are served: regular files,
never links, each a zip holding the WHEEL file of the name and version its file name states.
"""

from __future__ import annotations

import errno
import html
import shutil
import stat
import zipfile
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from crosslane.errors import IntegrityError, UsageError
from crosslane.files import bounded, stamps, userpaths
from crosslane.shipping import provenance

PAGE = """<!DOCTYPE html>
<html>
  <head><meta name="pypi:repository-version" content="1.0"><title>{title}</title></head>
  <body>
{links}
  </body>
</html>
"""


def page(title: str, links: Sequence[tuple[str, str]]) -> str:
    lines = "\n".join(f'    <a href="{html.escape(href, quote=True)}">{html.escape(text)}</a><br>'
                      for href, text in links)
    return PAGE.format(title=html.escape(title), links=lines)


FIX = "index only the wheels a build made"


def _project(wheel: Path) -> str:
    try:
        return canonicalize_name(parse_wheel_filename(wheel.name)[0])
    except ValueError as exc:
        raise UsageError(f"{wheel}: not a wheel's file name ({exc})", fix=FIX) from None


def _copy_in(wheel: Path, dest: Path) -> str:
    """*wheel* copied to *dest* through one open that follows no link (what is checked is what is served); the sha256
    of the copy."""
    with bounded.open_regular(wheel, UsageError, FIX, links=False) as source, dest.open("xb") as sink:
        shutil.copyfileobj(source, sink)
    return stamps.file_sha256(dest)


def _names_wheel(member: str, name: str, version: Version) -> bool:
    """Whether *member* is the `<name>-<version>.dist-info/WHEEL` of that name and version (either spelled as any
    tool may: normalised or not)."""
    folder, _, rest = member.partition("/")
    if rest != "WHEEL" or not folder.endswith(".dist-info"):
        return False
    dist, _, found = folder.removesuffix(".dist-info").rpartition("-")
    try:
        return bool(dist) and canonicalize_name(dist) == name and Version(found) == version
    except InvalidVersion:
        return False


def _check_is_wheel(copy: Path, wheel: Path) -> None:
    """*copy* (of *wheel*) is a zip holding the WHEEL file of the name and version *wheel*'s file name states."""
    name, version, _, _ = parse_wheel_filename(wheel.name)
    try:
        with zipfile.ZipFile(copy) as archive:
            members = archive.namelist()
    except (zipfile.BadZipFile, ValueError, EOFError, OSError) as exc:
        raise UsageError(f"{wheel}: not a wheel (not a zip: {exc})", fix=FIX) from None
    if not any(_names_wheel(member, name, version) for member in members):
        raise UsageError(f"{wheel}: not a wheel (no {name}-{version}.dist-info/WHEEL in it)", fix=FIX)


def _statement_of(wheel: Path) -> Path | None:
    """The provenance statement beside *wheel*, when there is one: a regular file, never a link."""
    statement = wheel.with_name(wheel.name + provenance.SUFFIX)
    try:
        mode = statement.lstat().st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
        raise UsageError(f"{wheel}: a name of {len(wheel.name)} characters, too long to have its provenance "
                         f"statement ({provenance.SUFFIX}) beside it", fix="give the wheel a shorter name") from None
    if not stat.S_ISREG(mode):
        raise UsageError(f"{statement}: a link or special file, not a provenance statement", fix=FIX)
    return statement


def _checked_statement(statement: Path, name: str, digest: str) -> bytes:
    """A statement beside a wheel is published only when its one subject is that wheel, by name and sha256: its
    bytes as read (and checked) once."""
    fix = "index the wheels with the statements their builds wrote (a pack carries both), or without a statement"
    data = bounded.read_bytes(statement, limit=bounded.JSON_LIMIT, error=IntegrityError, fix=fix, links=False)
    found = provenance.subjects(bounded.parse_json(data, str(statement), error=IntegrityError, fix=fix))
    if list(found) != [(name, digest)]:
        shown = ", ".join(f"{n} sha256 {d[:16]}…" for n, d in list(found)[:3]) or "none"
        raise IntegrityError(f"{statement}: its subjects ({shown}) are not {name} sha256 {digest[:16]}…", fix=fix)
    return data


def _serve(wheel: Path, files: Path, served: dict[str, tuple[Path, str]]) -> str | None:
    """*wheel* copied into *files* and checked there, with its statement; its sha256, or None when a wheel of that name
    and those bytes is served already (packs from several jobs may hold the same wheel, but two different files of
    one name would be one link with two hashes)."""
    incoming = files / ".incoming"
    digest = _copy_in(wheel, incoming)
    if wheel.name in served:
        incoming.unlink()
        first, kept = served[wheel.name]
        if kept != digest:
            raise UsageError(f"{first} and {wheel}: two different wheels named {wheel.name}",
                             fix="index the packs of one build (a wheel's name must name one file)")
        return None
    _check_is_wheel(incoming, wheel)
    incoming.rename(files / wheel.name)
    served[wheel.name] = (wheel, digest)
    statement = _statement_of(wheel)
    if statement is not None:
        (files / statement.name).write_bytes(_checked_statement(statement, wheel.name, digest))
    return digest


def write(wheels: Sequence[Path], output: Path, option: str | None = "--output") -> Path:
    """The index of *wheels* under *output*, made anew; the path of its simple/ folder. *option*: the option that
    named *output* (userpaths decides what there may be replaced), None for crosslane's default place. Each wheel is
    read once, following no link, into the index and checked there: a link, a folder or a file that is no wheel of
    its name is refused, naming it."""
    ordered = sorted(wheels, key=lambda w: (w.name, str(w)))
    projects = {wheel: _project(wheel) for wheel in ordered}
    if not projects:
        raise UsageError("no wheel to index", fix="build a cmake-wheel component first (invoke build)")
    with userpaths.output_folder(output, option, "invoke index") as staging:
        files, simple = staging / "files", staging / "simple"
        files.mkdir()
        served: dict[str, tuple[Path, str]] = {}
        links: dict[str, list[tuple[str, str]]] = {}
        for wheel, project in projects.items():
            digest = _serve(wheel, files, served)
            if digest is not None:
                # the name quoted: '#', '?' and '%' are valid in a wheel's name
                links.setdefault(project, []).append((f"../../files/{quote(wheel.name)}#sha256={digest}", wheel.name))
        for project, found in links.items():
            (simple / project).mkdir(parents=True)
            (simple / project / "index.html").write_text(page(f"Links for {project}", found), encoding="utf-8")
        (simple / "index.html").write_text(page("Simple index", [(f"{p}/", p) for p in sorted(links)]),
                                           encoding="utf-8")
    return output / "simple"
