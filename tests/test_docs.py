"""The README and docs/ name no path that is not there: every relative link, and every `path` in backticks that
starts at a folder of this repository (scripts/, tests/, docs/, bench/, components/, patches/, .github/, .ci/) or
is a file name of the repository's own (`noxfile.py`, `repro.py`), exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crosslane_helpers import REPO

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "bench" / "README.md"]
TOP = ("scripts/", "tests/", "docs/", "bench/", "components/", "patches/", ".github/", ".ci/")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
CODE = re.compile(r"`([^`\s]+)`")
OWN_FILE = re.compile(r"[A-Za-z0-9_]+\.(py|md|cmake|c|cpp|S|patch|yml)")
PLACEHOLDER = re.compile(r"[<>{}*$]|\.\.\.|…")
# Parts below the repository only: a checkout under a folder named build/ (act's runner copies it there) is whole.
FILES = {p.name for p in REPO.rglob("*") if not {".git", ".nox", "build"} & set(p.relative_to(REPO).parts)}


def named_paths(document: Path) -> list[tuple[str, Path]]:
    text = document.read_text(encoding="utf-8")
    found = [(link, (document.parent / link).resolve()) for link in LINK.findall(text)
             if not link.startswith(("http://", "https://", "mailto:"))]
    for token in CODE.findall(text):
        token = token.rstrip(".,:;")
        if PLACEHOLDER.search(token) or "=" in token:
            continue
        if token.startswith(TOP):
            found.append((token, REPO / token))
    return found


@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(d.relative_to(REPO)) for d in DOCUMENTS])
def test_every_path_named_exists(document: Path) -> None:
    missing = [name for name, path in named_paths(document) if not path.exists()]
    assert missing == [], f"{document.relative_to(REPO)} names what is not there: {missing}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(d.relative_to(REPO)) for d in DOCUMENTS])
def test_every_file_name_of_ours_exists(document: Path) -> None:
    names = {t.rstrip(".,:;") for t in CODE.findall(document.read_text(encoding="utf-8"))}
    ours = [n for n in names if OWN_FILE.fullmatch(n) and "/" not in n]
    missing = sorted(n for n in ours if n not in FILES)
    assert missing == [], f"{document.relative_to(REPO)} names files the repository does not have: {missing}"


def test_the_readme_is_a_guide_of_at_most_300_lines() -> None:
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 300
