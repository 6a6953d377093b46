"""crosslane runs installed (CI's jobs: `pip install .`), not only from this checkout: no module finds a repository
file through its own location. A module that climbed out of the package found components/baremetal only in an
editable install; installed, it named a folder in the venv's lib (found by invoke actions' bare-metal leg)."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "scripts" / "crosslane"
CLIMB = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?(?:\.parents\[(?P<index>\d+)\]|(?P<up>(?:\.parent(?!s))+))")


def test_no_module_reaches_outside_the_package_through_its_own_file() -> None:
    outside = []
    for module in sorted(PACKAGE.rglob("*.py")):
        inside = len(module.relative_to(PACKAGE).parts) - 1  # the folders between the module and the package root
        for found in CLIMB.finditer(module.read_text(encoding="utf-8")):
            steps = int(found["index"]) + 1 if found["index"] else found["up"].count(".parent")
            if steps > inside + 1:
                outside.append(f"{module.relative_to(PACKAGE)}: {found.group(0)}")
    assert outside == [], "find repository files from the config's root (versions.toml's folder)"


def test_the_climb_pattern_sees_both_spellings() -> None:
    found = CLIMB.search('Path(__file__).resolve().parents[3] / "components"')
    assert found is not None and found["index"] == "3"
    found = CLIMB.search("Path(__file__).parent.parent.parent")
    assert found is not None and found["up"] == ".parent" * 3
