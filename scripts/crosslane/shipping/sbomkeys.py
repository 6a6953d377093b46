"""The names an SBOM of crosslane's uses, shared by the document's writer (cyclonedx_doc.py) and its readers
(sbom.py, the papers gate) without importing CycloneDX's library."""

from __future__ import annotations

import uuid

NAMESPACE = uuid.UUID("6b3b4f5e-4a55-4b6e-9d2a-63726f73736c")  # crosslane's: serial numbers from content
SBOM_NAME = "crosslane.cdx.json"
LICENCE_FILE = "crosslane:licence-file"  # a licence text of the part, relative to the artifact's licences folder
BUILT_FILE = "crosslane:built-file"  # "<member> sha256=<hex>": an ELF file the build made (not a Debian library)
