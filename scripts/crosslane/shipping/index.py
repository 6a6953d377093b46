"""A PEP 503 simple index of built wheels: `<output>/simple/index.html` naming each project, each project's page
linking its wheels with their sha256 (`#sha256=`), the wheels (and their provenance) in `<output>/files/`. pip
installs from it as from any index: `pip install --index-url file:///<output>/simple onnxruntime-genai`.
The pages are the same bytes for the same wheels (sorted, no time in them).
"""

from __future__ import annotations

import html
import shutil
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from packaging.utils import canonicalize_name, parse_wheel_filename

from crosslane import bounded, stamps, userpaths
from crosslane.errors import IntegrityError, UsageError
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


def _one_per_name(wheels: Sequence[Path]) -> list[Path]:
    """*wheels* by name, each name once: packs from several jobs may hold the same wheel (kept once), but two
    different files of one name would be one link with two hashes."""
    by_name: dict[str, Path] = {}
    for wheel in sorted(wheels, key=lambda w: (w.name, str(w))):
        first = by_name.setdefault(wheel.name, wheel)
        if first != wheel and stamps.file_sha256(first) != stamps.file_sha256(wheel):
            raise UsageError(f"{first} and {wheel}: two different wheels named {wheel.name}",
                             fix="index the packs of one build (a wheel's name must name one file)")
    return list(by_name.values())


def _check_statement(statement: Path, name: str, digest: str) -> None:
    """A statement beside a wheel is published only when its one subject is that wheel, by name and sha256."""
    fix = "index the wheels with the statements their builds wrote (a pack carries both), or without a statement"
    found = provenance.subjects(bounded.read_json(statement, error=IntegrityError, fix=fix))
    if list(found) != [(name, digest)]:
        shown = ", ".join(f"{n} sha256 {d[:16]}…" for n, d in list(found)[:3]) or "none"
        raise IntegrityError(f"{statement}: its subjects ({shown}) are not {name} sha256 {digest[:16]}…", fix=fix)


def write(wheels: Sequence[Path], output: Path, option: str | None = "--output") -> Path:
    """The index of *wheels* under *output*, made anew; the path of its simple/ folder. *option*: the option that
    named *output* (userpaths decides what there may be replaced), None for crosslane's default place."""
    projects: dict[str, list[Path]] = {}
    for wheel in _one_per_name(wheels):
        try:
            name = canonicalize_name(parse_wheel_filename(wheel.name)[0])
        except ValueError as exc:
            raise UsageError(f"{wheel}: not a wheel's file name ({exc})",
                             fix="index only the wheels a build made") from None
        projects.setdefault(name, []).append(wheel)
    if not projects:
        raise UsageError("no wheel to index", fix="build a cmake-wheel component first (invoke build)")
    with userpaths.output_folder(output, option, "invoke index") as staging:
        files, simple = staging / "files", staging / "simple"
        files.mkdir()
        for project, found in projects.items():
            links = []
            for wheel in found:
                shutil.copyfile(wheel, files / wheel.name)
                digest = stamps.file_sha256(files / wheel.name)  # the hash of the copy served
                statement = wheel.with_name(wheel.name + provenance.SUFFIX)
                if statement.is_file():
                    _check_statement(statement, wheel.name, digest)
                    shutil.copyfile(statement, files / statement.name)
                # the name quoted: '#', '?' and '%' are valid in a wheel's name
                links.append((f"../../files/{quote(wheel.name)}#sha256={digest}", wheel.name))
            (simple / project).mkdir(parents=True)
            (simple / project / "index.html").write_text(page(f"Links for {project}", links), encoding="utf-8")
        (simple / "index.html").write_text(page("Simple index", [(f"{p}/", p) for p in sorted(projects)]),
                                           encoding="utf-8")
    return output / "simple"
