"""The CycloneDX side of sbom.py: the document built with CycloneDX's own library and checked against its 1.6
schema. Imported only when a document is made or validated: the library's JSON validation imports jsonschema and
its format checkers (rfc3987_syntax builds a grammar on import), which every command would pay."""

from __future__ import annotations

import datetime
import hashlib
import uuid

from cyclonedx.model import (
    HashAlgorithm,
    HashType,
    Property,
)
from cyclonedx.model.bom import Bom, BomMetaData
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.model.contact import OrganizationalEntity
from cyclonedx.model.license import LicenseExpression
from cyclonedx.model.tool import ToolRepository
from cyclonedx.output.json import JsonV1Dot6
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from packageurl import PackageURL

from crosslane import __version__
from crosslane.errors import StepFailed
from crosslane.guest.sysroot import Owner
from crosslane.shipping.inventory import (
    Crate,
    Inventory,
    Library,
    Linked,
    Source,
    crate_licences,
    debian_licence,
    library_licence,
    purl_path,
    source_licences,
)
from crosslane.shipping.licences import copyright_expression
from crosslane.shipping.sbomkeys import BUILT_FILE, LICENCE_FILE, NAMESPACE


def _sha256(value: str) -> list[HashType]:
    return [HashType(alg=HashAlgorithm.SHA_256, content=value)]


def _licences(expression: str | None) -> list[LicenseExpression]:
    return [LicenseExpression(expression)] if expression else []


def where_from(source: Source) -> dict[str, str] | None:
    """The purl qualifiers that say where a source not on GitHub came from: its repository (vcs_url) or its download
    (download_url, checksum). In the purl rather than as an external reference: the schema checks a reference's URL
    with rfc3987_syntax's Earley parser, slowly, and the purl states it once."""
    if not source.url.startswith(("https://", "http://", "git://")):
        return None
    if source.archive:
        return {"download_url": source.url, "checksum": f"sha256:{source.commit}"}
    return {"vcs_url": f"git+{source.url}@{source.commit}"}


def source_component(source: Source) -> Component:
    github = purl_path(source.url)
    if github is not None:
        purl = PackageURL("github", github[0], github[1], source.commit)
    elif source.url.startswith("debian:"):
        purl = PackageURL("deb", "debian", source.url.removeprefix("debian:"), source.commit, {"arch": "source"})
    else:
        purl = PackageURL("generic", None, source.name.replace(":", "-"), source.commit[:40], where_from(source))
    properties = [Property(name="crosslane:role", value=source.role)]
    properties += [Property(name="crosslane:patch", value=f"{path} sha256={digest}") for path, digest in source.patches]
    properties += [Property(name=LICENCE_FILE, value=name) for name in source_licences(source)]
    return Component(type=ComponentType.LIBRARY, name=source.name, version=source.tag or source.commit,
                     purl=purl, bom_ref=f"source:{source.name}", properties=properties,
                     description="modified: patches applied (crosslane:patch)" if source.patches else None)


def deb_purl(owner: Owner, suite: str) -> PackageURL:
    return PackageURL("deb", "debian", owner.package, owner.version,
                      {"arch": owner.architecture, "distro": f"debian-{suite}"})


def library_component(library: Library, suite: str) -> Component:
    owner = library.owner
    purl = deb_purl(owner, suite)
    properties = [Property(name="crosslane:file", value=library.member),
                  Property(name="crosslane:file-sha256", value=library.sha256),
                  Property(name="crosslane:origin", value=library.origin),
                  Property(name="crosslane:deb-sha256", value=owner.deb_sha256),
                  Property(name="crosslane:source-package", value=owner.source),
                  Property(name=LICENCE_FILE, value=library_licence(library))]
    return Component(type=ComponentType.LIBRARY, name=owner.package, version=owner.version, purl=purl,
                     bom_ref=f"file:{library.member}", hashes=_sha256(library.sha256), properties=properties)


def linked_component(linked: Linked, suite: str, expression: str | None) -> Component:
    owner = linked.owner
    properties = [Property(name="crosslane:linked-into", value=linked.into),
                  Property(name="crosslane:origin", value=linked.origin),
                  Property(name="crosslane:source-package", value=owner.source),
                  Property(name=LICENCE_FILE, value=debian_licence(owner))]
    return Component(type=ComponentType.LIBRARY, name=owner.package, version=owner.version, purl=deb_purl(owner, suite),
                     bom_ref=f"linked:{linked.into}:{linked.origin}", hashes=_sha256(linked.sha256),
                     licenses=_licences(expression), properties=properties)


def crate_component(crate: Crate) -> Component:
    properties = [Property(name="crosslane:tree-sha256", value=crate.tree_digest),
                  *(Property(name=LICENCE_FILE, value=name) for name in crate_licences(crate))]
    return Component(type=ComponentType.LIBRARY, name=crate.name, version=crate.version,
                     purl=PackageURL("cargo", None, crate.name, crate.version), bom_ref=f"crate:{crate.name}@"
                     f"{crate.version}", hashes=_sha256(crate.package_sha256) if crate.package_sha256 else [],
                     licenses=_licences(crate.expression), properties=properties)


def document(inventory: Inventory, epoch: int, copyright_expressions: dict[str, str | None] | None = None) -> str:
    """The SBOM of *inventory* as CycloneDX 1.6 JSON text, validated against the 1.6 schema."""
    project_source = next((s for s in inventory.sources if s.role == "project"), None)
    purl = PackageURL("pypi", None, inventory.name, inventory.version) if "+" not in inventory.name and \
        inventory.properties.get("kind") == "wheel" else PackageURL("generic", None, inventory.name,
                                                                   inventory.version)
    properties = [Property(name=f"crosslane:{k}", value=v) for k, v in sorted(inventory.properties.items())]
    if project_source is not None:
        properties.append(Property(name="crosslane:commit", value=project_source.commit))
    properties += [Property(name=BUILT_FILE, value=f) for f in inventory.built_files]
    root = Component(type=ComponentType.LIBRARY if inventory.properties.get("kind") == "wheel"
                     else ComponentType.APPLICATION, name=inventory.name, version=inventory.version, purl=purl,
                     bom_ref=f"artifact:{inventory.name}", properties=properties)
    parts: list[Component] = [source_component(s) for s in inventory.sources]
    expressions = copyright_expressions or {}
    for library in inventory.libraries:
        part = library_component(library, inventory.suite)
        expression = expressions.get(library.owner.package)
        if expression:
            part.licenses.add(LicenseExpression(expression))
        parts.append(part)
    parts += [linked_component(item, inventory.suite, copyright_expression(item.copyright))
              for item in inventory.linked]
    parts += [crate_component(c) for c in inventory.crates]
    metadata = BomMetaData(component=root, timestamp=datetime.datetime.fromtimestamp(epoch, datetime.UTC),
                           tools=ToolRepository(components=[Component(
                               type=ComponentType.APPLICATION, name="crosslane", version=__version__,
                               supplier=OrganizationalEntity(name="crosslane"))]))
    bom = Bom(components=parts, metadata=metadata, serial_number=NAMESPACE)
    bom.register_dependency(root, parts)
    text = JsonV1Dot6(bom).output_as_string(indent=1)
    # The serial number names the content: the document made with a placeholder, hashed, then given its own.
    serial = uuid.uuid5(NAMESPACE, hashlib.sha256(text.encode()).hexdigest())
    text = text.replace(f"urn:uuid:{NAMESPACE}", f"urn:uuid:{serial}")
    problem = schema_problem(text)
    if problem is not None:
        raise StepFailed(f"the SBOM of {inventory.name} does not validate against CycloneDX 1.6: {problem}",
                         fix="report this defect")
    return text + "\n"


def schema_problem(text: str) -> str | None:
    problem = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    return None if problem is None else str(problem)
