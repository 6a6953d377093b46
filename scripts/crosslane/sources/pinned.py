"""Pinned sources: fetch, verify against the pin, cache; mirrors tried in order.

Kinds (versions.toml `source` and `mirrors`): `tree` (a folder of this repository), `git` (url + optional
tag + full commit; the checked-out commit must equal the pin), `archive` (url + sha256, checked before
extraction), `debian` (package + version of a Debian source package; see debsrc.py). `--source NAME=PATH`
overrides all of them with a local checkout, used as is and reported as "local, unverified".

Fetched trees live under <cache>/sources/<component>/<kind>-<pin digest>/tree, written to a temporary
folder and renamed into place only after verification, so a cache entry is always whole and verified.
A verification failure (moved tag, checksum mismatch, hostile archive) stops at once; an unreachable
or incomplete mirror is reported and the next one tried.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import shutil
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from crosslane.config import (
    ArchiveSource,
    Component,
    DebianSource,
    GitSource,
    PinnedSource,
    SourceSpec,
    SysrootPackage,
    SysrootSpec,
    TreeSource,
)
from crosslane.errors import ConfigError, IntegrityError, MissingPrerequisite
from crosslane.files import atomic, stamps
from crosslane.files.paths import cache_dir
from crosslane.process.runner import Runner
from crosslane.sources import debsrc, gitexport, net, safe_extract

FETCH_TIMEOUT = 1800.0
OFFLINE_ENV = "CROSSLANE_OFFLINE"
MIRROR_ENV = "CROSSLANE_GIT_MIRROR"
PIN_FILE = "pin.json"
# SOURCE_DATE_EPOCH where a source names no time of its own (an archive, a Debian source, an entry staged before
# commit times were recorded): 1980-01-01, the earliest time a zip member can carry.
DEFAULT_EPOCH = 315532800
GIT_CONFIG = ("-c", "http.lowSpeedLimit=1000", "-c", "http.lowSpeedTime=30", "-c", "core.autocrlf=false",
              "-c", "advice.detachedHead=false", "-c", "init.defaultBranch=main")
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=10", "LC_ALL": "C"}


@dataclass(frozen=True, kw_only=True)
class Fetched:
    """A staged source: its folder, the identity its stamp records, and what served it."""

    path: Path
    identity: str  # what the build stamp records: the pin of the source that served
    served_by: str  # for the report: which source (or mirror) served, and how
    local: bool = False


def describe(spec: SourceSpec) -> str:
    match spec:
        case GitSource():
            tag = f" {spec.tag}" if spec.tag else ""
            return f"git {spec.url}{tag} @ {spec.commit[:12]}"
        case ArchiveSource():
            return f"archive {spec.url} (sha256 {spec.sha256[:12]}…)"
        case DebianSource():
            suite = f" ({spec.suite})" if spec.suite else ""
            return f"debian {spec.package} {spec.version}{suite}"
        case SysrootPackage():
            return f"sysroot package {spec.package}"
        case TreeSource():
            return f"tree {spec.path}"


def identity(spec: SourceSpec) -> str:
    match spec:
        case GitSource():
            with_submodules = f"+submodules:{','.join(spec.submodules)}" if spec.submodules else ""
            substituted = "".join(f"+{path}={commit}" for path, commit, _ in spec.substitutes)
            return f"git:{spec.url}@{spec.commit}{with_submodules}{substituted}"
        case ArchiveSource():
            return f"archive:{spec.url}#sha256={spec.sha256}"
        case DebianSource():
            return f"debian:{spec.package}={spec.version}"
        case SysrootPackage():
            return f"sysroot-package:{spec.package}"
        case TreeSource():
            return "tree:" + stamps.tree_digest(spec.path)


def pin_fields(spec: PinnedSource) -> dict[str, str]:
    """What names a cache entry: the kind and the pinned fields, spelled as they have been since schema 1 (the
    single-class SourceSpec's non-empty fields, absent_ok always, a Debian mirror under "url"), so entries
    staged before keep their names."""
    pin = {"kind": spec.kind, "absent_ok": "()"}
    match spec:
        case GitSource():
            pin |= {"url": spec.url, "commit": spec.commit, "absent_ok": str(spec.absent_ok)}
            pin |= {"tag": spec.tag} if spec.tag is not None else {}
            pin |= {"submodules": str(spec.submodules)} if spec.submodules else {}
            pin |= {"substitutes": str(spec.substitutes)} if spec.substitutes else {}
        case ArchiveSource():
            pin |= {"url": spec.url, "sha256": spec.sha256}
        case DebianSource():
            pin |= {"package": spec.package, "version": spec.version}
            pin |= {"url": spec.mirror} if spec.mirror is not None else {}
            pin |= {"suite": spec.suite} if spec.suite is not None else {}
    return pin


def cache_entry(component: str, spec: PinnedSource) -> Path:
    digest = hashlib.sha256(json.dumps(pin_fields(spec), sort_keys=True).encode()).hexdigest()[:16]
    return cache_dir() / "sources" / component / f"{spec.kind}-{digest}"


def cached(component: str, spec: PinnedSource) -> Path | None:
    entry = cache_entry(component, spec)
    return entry / "tree" if (entry / PIN_FILE).is_file() and (entry / "tree").is_dir() else None


def cache_name(component: Component, dependency: str = "") -> str:
    """The name a component's pinned source (or its FetchContent *dependency*'s) is cached under: the project's,
    so the variants of one project (source_of) read one entry per pin, which `invoke sources` stages once."""
    owner = component.source_of or component.name
    return f"{owner}+{dependency}" if dependency else owner


def fetch(runner: Runner, component: Component, defaults: SysrootSpec, override: Path | None = None, *,
          arch: str = "<arch>") -> Fetched:
    """The component's pristine source tree: the override, a cached pin, or the first mirror that serves."""
    if override is not None:
        return Fetched(path=override, identity="local:" + stamps.tree_digest(override),
                       served_by=f"local, unverified: {override}", local=True)
    first = component.sources[0]
    if isinstance(first, TreeSource):
        return Fetched(path=first.path, identity=identity(first),
                       served_by=f"tree {first.path.name} (in this repository)")
    return fetch_pinned(runner, cache_name(component), pinned_only(component.sources), defaults, arch=arch)


def pinned_only(specs: Sequence[SourceSpec]) -> list[PinnedSource]:
    """The pinned sources of a list the loader already checked (mirrors are pinned kinds)."""
    found = [s for s in specs if isinstance(s, PinnedSource)]
    if len(found) != len(specs):
        raise ConfigError(f"{describe(specs[0])}: not a pinned source (git, archive or debian)")
    return found


def fetch_pinned(runner: Runner, name: str, specs: Sequence[PinnedSource], defaults: SysrootSpec, *,
                 arch: str = "<arch>") -> Fetched:
    """A pinned source (and its mirrors) by cache name: cached, else staged from a git mirror or the network.

    With CROSSLANE_OFFLINE=1 nothing is downloaded: a source that is not staged is an error naming the pin
    and the `invoke sources` command that stages it.
    """
    first = specs[0]
    for spec in specs:
        tree = cached(name, spec)
        if tree is not None:
            return Fetched(path=tree, identity=identity(spec), served_by=f"{describe(spec)} (cached)")
    if runner.dry_run:
        runner.log.info(f"    would fetch {name} from {describe(first)}")
        return Fetched(path=cache_entry(name, first) / "tree", identity=identity(first),
                       served_by=f"{describe(first)} (not fetched: dry run)")

    staged_only = offline()
    failures: list[net.Unavailable] = []
    for index, spec in enumerate(specs):
        role = "source" if index == 0 else f"mirror {index}"
        if staged_only and git_mirror(spec) is None:
            continue
        runner.log.info(f"    fetching {name} from {role}: {describe(spec)}")
        try:
            tree = _fetch_one(runner, name, spec, defaults)
        except net.Unavailable as exc:
            runner.log.warn(f"{name}: {role} unavailable: {exc}")
            failures.append(exc)
            continue
        served = f"{describe(spec)} (fetched" + (f" from {role}, after {len(failures)} failed)" if failures else ")")
        return Fetched(path=tree, identity=identity(spec), served_by=served)
    component = name.partition("+")[0]
    stage = f"invoke sources --arch {arch} --component {component} (where the network or a git mirror reaches it)"
    if staged_only:
        raise MissingPrerequisite(f"{name}: {describe(first)} is not staged and {OFFLINE_ENV}=1 forbids fetching",
                                  fix=f"stage it: {stage}")
    hosts = ", ".join(f"{f.host} {f.reason}" for f in failures)
    raise MissingPrerequisite(f"{hosts} for {name}",
                              fix=f"stage it: {stage}, set {MIRROR_ENV}, pass --source {component}=PATH or add a "
                                  "mirror", detail="\n".join(str(f) for f in failures))


def offline() -> bool:
    return os.environ.get(OFFLINE_ENV, "") not in ("", "0")


def git_mirror(spec: SourceSpec) -> Path | None:
    """The local git folder CROSSLANE_GIT_MIRROR names for a git source, when it exists (Yocto's PREMIRRORS).

    The template may use {host}, {owner}, {name} and {path} of the URL: "/srv/git/{owner}/{name}.git".
    What it serves is verified against the pinned commit like anything the network serves.
    """
    template = os.environ.get(MIRROR_ENV)
    if not template or not isinstance(spec, GitSource):
        return None
    parts = urlsplit(spec.url)
    path = parts.path.strip("/").removesuffix(".git")
    owner, _, name = path.rpartition("/")
    values = {"host": parts.hostname or "", "owner": owner, "name": name, "path": path}
    folder = Path(fill_template(template, values, MIRROR_ENV))
    return folder if folder.is_dir() else None


def fill_template(template: str, values: Mapping[str, str], where: str) -> str:
    """*template* with its {name} placeholders filled from *values*; nothing else (str.format would walk
    `{owner.x}` and `{owner[0]}` and pad `{name:>999999999}`)."""
    fix = f"use only {', '.join('{' + k + '}' for k in values)}, with nothing after the name"
    out = []
    try:
        pieces = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ConfigError(f"{where}={template!r}: {exc}", fix=fix) from None
    for literal, field, spec, conversion in pieces:
        out.append(literal)
        if field is None:
            continue
        if field not in values or spec or conversion:
            shown = "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise ConfigError(f"{where}={template!r}: placeholder {shown} is not one of {', '.join(values)}", fix=fix)
        out.append(values[field])
    return "".join(out)


def _fetch_one(runner: Runner, name: str, spec: PinnedSource, defaults: SysrootSpec) -> Path:
    entry = cache_entry(name, spec)
    with atomic.publish_dir(entry, lambda _: cached(name, spec) is not None) as final:
        staging = final / ".fetch"
        staging.mkdir()
        submodules: dict[str, tuple[str, str]] = {}
        absent: tuple[str, ...] = ()
        match spec:
            case GitSource():
                git = fetch_git(runner, spec, staging)
                tree, when, submodules, absent = git.tree, git.commit_time, git.submodules, git.absent
            case ArchiveSource():
                tree, when = fetch_archive(spec, staging), DEFAULT_EPOCH
            case DebianSource():
                tree, when = fetch_debian(runner, spec, staging, defaults), DEFAULT_EPOCH
        tree.rename(final / "tree")
        shutil.rmtree(staging, ignore_errors=True)
        recorded = {"identity": identity(spec), **pin_fields(spec), "commit_time": when, "absent": list(absent),
                    "submodules": {path: {"url": url, "commit": commit} for path, (url, commit) in submodules.items()}}
        (final / PIN_FILE).write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    return entry / "tree"


def submodule_pins(name: str, spec: PinnedSource) -> dict[str, tuple[str, str]]:
    """path -> (url, commit) of each submodule as staged (recorded in its pin file); {} for an entry staged before
    they were recorded, or one that is not what crosslane wrote."""
    try:
        recorded = json.loads((cache_entry(name, spec) / PIN_FILE).read_text()).get("submodules")
    except (OSError, ValueError, AttributeError):
        return {}
    found = {}
    for path, pin in (recorded.items() if isinstance(recorded, dict) else []):
        if isinstance(pin, dict) and isinstance(pin.get("url"), str) and isinstance(pin.get("commit"), str) \
                and re.fullmatch(r"[0-9a-f]{40}", pin["commit"]):
            found[str(path)] = (pin["url"], pin["commit"])
    return found


def absent_files(name: str, spec: PinnedSource) -> frozenset[str] | None:
    """The files of a staged pin its mirror lacked (recorded when it was staged); None for an entry staged before
    they were recorded, or one that is not what crosslane wrote."""
    try:
        recorded = json.loads((cache_entry(name, spec) / PIN_FILE).read_text()).get("absent")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    if not isinstance(recorded, list) or not all(isinstance(path, str) for path in recorded):
        return None
    return frozenset(recorded)


def source_time(name: str, spec: PinnedSource) -> int:
    """SOURCE_DATE_EPOCH of a staged pin: its commit's time (recorded when it was staged), else DEFAULT_EPOCH."""
    try:
        recorded = json.loads((cache_entry(name, spec) / PIN_FILE).read_text()).get("commit_time")
    except (OSError, ValueError, AttributeError):
        return DEFAULT_EPOCH
    return recorded if isinstance(recorded, int) and recorded >= DEFAULT_EPOCH else DEFAULT_EPOCH


@dataclass(frozen=True, kw_only=True)
class FetchedGit:
    """A commit exported: its tree, its commit time, its submodules, and the files a partial mirror lacked."""

    tree: Path
    commit_time: int
    submodules: dict[str, tuple[str, str]]  # path -> (url, commit) each listed submodule was exported at
    absent: tuple[str, ...] = ()  # files of the commit a partial mirror lacked (allowed by absent_ok)


def fetch_git(runner: Runner, spec: GitSource, work: Path) -> FetchedGit:
    """The pinned commit's tree in *work*/tree, the commit's time, and where each submodule came from."""
    tree = work / "tree"
    tree.mkdir()
    mirror = git_mirror(spec)
    if mirror is not None:
        exported = gitexport.export(mirror, spec.commit, spec.tag, spec.url, tree, spec.absent_ok)
        if exported.absent:
            runner.log.notice(f"{spec.url}: {len(exported.absent)} files absent from the mirror {mirror}, allowed by "
                              f"absent_ok: {', '.join(exported.absent[:3])}{' …' if len(exported.absent) > 3 else ''}")
        exported_at = export_submodules(runner, spec, tree, dict(exported.gitlinks)) if spec.submodules else {}
        safe_extract.check_tree_links(tree)
        return FetchedGit(tree=tree, commit_time=exported.commit_time, submodules=exported_at, absent=exported.absent)
    origin = spec.url
    net.probe(spec.url)
    git = ["git", *GIT_CONFIG, "-C", str(tree)]
    runner.run([*git, "init", "-q"], env=GIT_ENV, timeout=60, quiet=True)
    wanted = f"refs/tags/{spec.tag}:refs/tags/{spec.tag}" if spec.tag else spec.commit
    fetched = runner.run([*git, "fetch", "-q", "--depth", "1", "--no-tags", "--", origin, wanted], env=GIT_ENV,
                         timeout=FETCH_TIMEOUT, check=False)
    if not fetched.ok:
        what = f"tag {spec.tag}" if spec.tag else f"commit {spec.commit}"
        last = fetched.tail(1).strip() or f"git exited {fetched.returncode}"
        raise net.Unavailable(net.host_of(origin), f"did not serve {what}", last)
    ref = f"refs/tags/{spec.tag}^{{commit}}" if spec.tag else "FETCH_HEAD^{commit}"
    got = runner.run([*git, "rev-parse", "--verify", "-q", ref], env=GIT_ENV, timeout=60, check=False,
                     quiet=True).output.strip()
    if got != spec.commit:
        what = f"tag {spec.tag}" if spec.tag else "the fetched commit"
        raise IntegrityError(f"{spec.url}: {what} is commit {got or '(none)'}, versions.toml pins {spec.commit} "
                          "(a moved tag)", fix="check upstream; update commit only if the move is legitimate")
    runner.run([*git, "checkout", "-q", "--detach", spec.commit], env=GIT_ENV, timeout=600, quiet=True)
    head = runner.run([*git, "rev-parse", "HEAD"], env=GIT_ENV, timeout=600, quiet=True).output.strip()
    when = runner.run([*git, "show", "-s", "--format=%ct", "HEAD"], env=GIT_ENV, timeout=60, quiet=True).output.strip()
    if head != spec.commit:
        raise IntegrityError(f"{spec.url}: checked out {head}, versions.toml pins {spec.commit}",
                          fix="delete the cache entry and retry")
    submodules: dict[str, tuple[str, str]] = {}
    for path in sorted(spec.submodules, key=lambda p: p.count("/")):
        # git checks the submodule out at the gitlink's commit: the superproject's pin is the submodule's.
        runner.run([*git, "submodule", "update", "--init", "--depth", "1", "--", path], env=GIT_ENV,
                   timeout=FETCH_TIMEOUT)
        for substituted, commit, _ in spec.substitutes:
            if substituted == path:
                inner = ["git", *GIT_CONFIG, "-C", str(tree / path)]
                runner.run([*inner, "fetch", "-q", "--depth", "1", "origin", commit], env=GIT_ENV,
                           timeout=FETCH_TIMEOUT)
                runner.run([*inner, "checkout", "-q", "--detach", commit], env=GIT_ENV, timeout=600)
        at = runner.run(["git", *GIT_CONFIG, "-C", str(tree / path), "rev-parse", "HEAD"], env=GIT_ENV, timeout=60,
                        quiet=True).output.strip()
        submodules[path] = (gitmodules(tree, spec.url).get(path, ""), at)
    for dot_git in sorted(tree.rglob(".git"), key=lambda p: -len(p.parts)):
        if dot_git.is_dir() and not dot_git.is_symlink():
            shutil.rmtree(dot_git)
        else:
            dot_git.unlink()
    safe_extract.check_tree_links(tree)
    return FetchedGit(tree=tree, commit_time=int(when) if when.isascii() and when.isdigit() else DEFAULT_EPOCH,
                      submodules=submodules)


def gitmodules(tree: Path, base_url: str) -> dict[str, str]:
    """path -> absolute URL from a tree's .gitmodules (relative URLs resolved against *base_url*, as git does)."""
    try:
        text = (tree / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    found: dict[str, str] = {}
    path = url = None
    for raw in [*text.splitlines(), "[end]"]:
        line = raw.strip()
        if line.startswith("["):
            if path and url:
                found[path] = url
            path = url = None
            continue
        key, _, value = line.partition("=")
        if key.strip() == "path":
            path = value.strip()
        elif key.strip() == "url":
            url = value.strip()
    for name, value in found.items():
        if value.startswith(("./", "../")):
            parts = urlsplit(base_url.rstrip("/"))
            joined = posixpath.normpath(posixpath.join(parts.path, value))
            found[name] = f"{parts.scheme}://{parts.netloc}{joined}"
    return found


def export_submodules(runner: Runner, spec: GitSource, tree: Path, gitlinks: dict[str, str]
                      ) -> dict[str, tuple[str, str]]:
    """Each listed submodule exported into *tree* at its gitlink's commit from its own mirror (the URL from
    .gitmodules through CROSSLANE_GIT_MIRROR), shallowest first so nested ones find their parent; path -> (url,
    commit) of each."""
    exported_at: dict[str, tuple[str, str]] = {}
    urls = gitmodules(tree, spec.url)
    substitutes = {path: (commit, reason) for path, commit, reason in spec.substitutes}
    for path in sorted(spec.submodules, key=lambda p: p.count("/")):
        commit, url = gitlinks.get(path), urls.get(path)
        if path in substitutes and commit is not None:
            runner.log.notice(f"submodule {path}: {substitutes[path][0][:12]} instead of the gitlink's {commit[:12]} "
                              f"({substitutes[path][1]})")
            commit = substitutes[path][0]
        if commit is None or url is None:
            raise ConfigError(f"{spec.url}@{spec.commit[:12]}: '{path}' is not a submodule there "
                              f"({'no gitlink' if commit is None else 'not in .gitmodules'})",
                              fix="check the submodules list of the source in versions.toml")
        sub = GitSource(url=url, commit=commit)
        mirror = git_mirror(sub)
        if mirror is None:
            raise MissingPrerequisite(f"submodule {path}: no mirror of {url} under {os.environ.get(MIRROR_ENV)}",
                                      fix=f"add a mirror of {url} there")
        inner = [p[len(path) + 1:] for p in spec.absent_ok if p.startswith(path + "/")]
        exported = gitexport.export(mirror, commit, None, url, tree / path, inner)
        runner.log.info(f"    submodule {path}: {url} @ {commit[:12]} ({exported.files} files)")
        exported_at[path] = (url, commit)
        gitlinks.update({f"{path}/{p}": c for p, c in exported.gitlinks})
        urls.update({f"{path}/{p}": u for p, u in gitmodules(tree / path, url).items()})
    return exported_at


def fetch_archive(spec: ArchiveSource, work: Path) -> Path:
    download = work / "download"
    actual = net.download(spec.url, download)
    if actual != spec.sha256:
        raise IntegrityError(f"{spec.url}: sha256 is {actual}, versions.toml pins {spec.sha256}",
                          fix="the download differs from the pin; check the URL, update sha256 only if the "
                              "change is legitimate")
    return safe_extract.extract(download, work / "tree")


def fetch_debian(runner: Runner, spec: DebianSource, work: Path, defaults: SysrootSpec) -> Path:
    origin = debsrc.Origin(spec.package, spec.version, spec.suite or defaults.suite, spec.mirror or defaults.mirror,
                           defaults.keyring)
    state = cache_dir() / "sources" / ".apt" / hashlib.sha256(
        f"{origin.mirror} {origin.suite}".encode()).hexdigest()[:16]
    dsc = debsrc.download(runner, origin, state, work / "debian")
    files = debsrc.verify(dsc)
    return safe_extract.extract(debsrc.upstream_tarball(dsc, files), work / "tree")
