"""Build provenance: an in-toto statement (v1) with a SLSA provenance v1 predicate, written beside each published
artifact as `<artifact>.intoto.json`.

subject: the artifact's name and sha256. buildDefinition: crosslane's build type, the request (component, arch,
build identifier) and versions.toml's digest as external parameters, and as resolved dependencies every source
pin, the sysroot's manifest, the tool roots' manifests and the toolchain's identity. runDetails: the builder is
crosslane at its commit. No time and no path of the build machine is in it, so a rebuild states the same; the
workflow signs it on GitHub (actions/attest-build-provenance).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from crosslane import __version__
from crosslane.files import atomic, stamps
from crosslane.shipping.inventory import Inventory, Source, purl_path

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "https://github.com/crosslane/crosslane/blob/main/docs/build-type-v1.md"  # described there
SUFFIX = ".intoto.json"


@dataclass(frozen=True)
class Builder:
    """What ran the build: crosslane's version and commit (its checkout's HEAD, "+dirty" when it has changes)."""

    commit: str
    version: str = __version__

    @property
    def id(self) -> str:
        return f"https://github.com/crosslane/crosslane@{self.commit}"


def source_descriptor(source: Source) -> dict[str, object]:
    github = purl_path(source.url)
    uri = f"git+{source.url}@{source.commit}" if github or source.url.startswith(("https://", "http://")) \
        else f"{source.url}@{source.commit}"
    # a digest only where the pin is one: a Debian source pins its version, which goes in the annotations
    digest = {"gitCommit": source.commit} if re.fullmatch(r"[0-9a-f]{40}", source.commit) else \
        {"sha256": source.commit} if re.fullmatch(r"[0-9a-f]{64}", source.commit) else {}
    annotations: dict[str, object] = {"role": source.role}
    if source.commit and not digest:
        annotations["version"] = source.commit
    if source.tag:
        annotations["tag"] = source.tag
    if source.patches:
        annotations["patches"] = [{"path": path, "sha256": value} for path, value in source.patches]
    return {"name": source.name, "uri": uri, **({"digest": digest} if digest else {}), "annotations": annotations}


def statement(subjects: Sequence[tuple[str, str]], inventory: Inventory, *, builder: Builder, config_digest: str,
              request: Mapping[str, str], manifests: Mapping[str, Path], toolchain: str) -> dict[str, object]:
    """The in-toto statement for *subjects* ((name, sha256) of each artifact it covers)."""
    resolved: list[dict[str, object]] = [source_descriptor(s) for s in inventory.sources]
    for name, path in sorted(manifests.items()):
        resolved.append({"name": name, "uri": f"crosslane:{name}", "digest": {"sha256": stamps.file_sha256(path)}})
    resolved += [{"name": f"crate:{c.name}", "uri": f"pkg:cargo/{c.name}@{c.version}",
                  "digest": {"sha256": c.package_sha256 or c.tree_digest}} for c in inventory.crates]
    resolved.append({"name": "toolchain", "uri": "crosslane:toolchain", "annotations": {"identity": toolchain}})
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": name, "digest": {"sha256": digest}} for name, digest in subjects],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {**dict(sorted(request.items())), "versions.toml": {"sha256": config_digest}},
                "resolvedDependencies": resolved,
            },
            "runDetails": {"builder": {"id": builder.id, "version": {"crosslane": builder.version}}},
        },
    }


def write(artifact: Path, document: Mapping[str, object]) -> Path:
    """The statement beside *artifact*, all or nothing."""
    path = artifact.with_name(artifact.name + SUFFIX)
    atomic.write_text(path, json.dumps(document, indent=1, sort_keys=True) + "\n")
    return path


def subjects(document: object) -> Sequence[tuple[str, str]]:
    """(name, sha256) of a statement's subjects; () for anything that is not one."""
    if not isinstance(document, dict) or document.get("_type") != STATEMENT_TYPE:
        return ()
    found = []
    for subject in document.get("subject", []) if isinstance(document.get("subject"), list) else []:
        digest = subject.get("digest") if isinstance(subject, dict) else None
        if isinstance(digest, dict) and isinstance(subject.get("name"), str) and isinstance(digest.get("sha256"), str):
            found.append((subject["name"], digest["sha256"]))
    return found
