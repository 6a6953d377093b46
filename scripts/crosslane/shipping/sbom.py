"""An artifact's SBOM: CycloneDX 1.6 JSON, built and validated with CycloneDX's own library (PEP 770 places it in
a wheel's `.dist-info/sboms/`).

The artifact is the metadata component; each pinned source, Debian package and Rust crate inside it is a component
of its own (purl, version, hashes, licences where an SPDX expression is known, the patches applied). The document
is the same bytes for the same inventory: its serial number is derived from its content and its timestamp is the
source's SOURCE_DATE_EPOCH.
"""

from __future__ import annotations

import json
from typing import Any

from crosslane.shipping.inventory import Inventory
from crosslane.shipping.sbomkeys import BUILT_FILE, LICENCE_FILE, NAMESPACE, SBOM_NAME

__all__ = ["BUILT_FILE", "LICENCE_FILE", "NAMESPACE", "SBOM_NAME", "build", "components", "metadata_components",
           "validate"]


def build(inventory: Inventory, epoch: int, copyright_expressions: dict[str, str | None] | None = None) -> str:
    """The SBOM of *inventory* as CycloneDX 1.6 JSON text, validated against the 1.6 schema."""
    from crosslane.shipping import cyclonedx_doc  # the library's import is heavy: see cyclonedx_doc

    return cyclonedx_doc.document(inventory, epoch, copyright_expressions)


def validate(text: str) -> str | None:
    """None when *text* is a CycloneDX 1.6 JSON document, else what is wrong (invoke verify)."""
    try:
        json.loads(text)
    except ValueError as exc:
        return f"not JSON ({exc})"
    except RecursionError:
        return "not JSON that can be read (arrays or objects nested too deeply)"
    from crosslane.shipping import cyclonedx_doc  # the library's import is heavy: see cyclonedx_doc

    problem = cyclonedx_doc.schema_problem(text)
    return None if problem is None else problem[:300]


def components(text: str) -> list[dict[str, Any]]:
    """The document's components (JSON as parsed: read with the care of hostile input)."""
    data = json.loads(text)
    found = data.get("components", []) if isinstance(data, dict) else []
    return [c for c in found if isinstance(c, dict)]


def metadata_components(text: str) -> list[dict[str, Any]]:
    """The document's own component (metadata.component), as a list of at most one."""
    data = json.loads(text)
    metadata = data.get("metadata") if isinstance(data, dict) else None
    found = metadata.get("component") if isinstance(metadata, dict) else None
    return [found] if isinstance(found, dict) else []
