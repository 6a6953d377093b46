"""versions.toml values that would reach git, apt or pip as options, or climb out of a tree, and CROSSLANE_*
environment values that would walk or pad a template: each is refused on load with one line naming the key,
exit 2, by a real invoke process, and nothing outside the build folder and the cache changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hostilekit import REPO, Sandbox

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("versions.toml")]

GIT = 'source = {{ kind = "git", url = "{url}", commit = "' + "a" * 40 + '"{extra} }}'


def component(body: str) -> str:
    return f'\n[components.hostile]\n{body}\narches = ["riscv64"]\n'


def git_component(url: str = "https://example.invalid/x.git", extra: str = "", more: str = "") -> str:
    return component(GIT.format(url=url, extra=extra) + more)


def fetchcontent(url: str) -> str:
    table = f'[components.hostile.fetchcontent.dep]\nsource = {{ kind = "git", url = "{url}", commit = "{"b" * 40}" }}'
    return git_component() + "\n" + table + "\n"


def replaced(old: str, new: str) -> tuple[str, str]:
    return (old, new)


APPENDED: dict[str, tuple[str, str]] = {
    "git-url-upload-pack": (git_component("--upload-pack=touch /tmp/crosslane-pwned"), "is not a URL"),
    "git-url-proxycommand": (git_component("-oProxyCommand=touch /tmp/crosslane-pwned"), "is not a URL"),
    "git-url-ext-transport": (git_component("ext::sh -c touch% /tmp/crosslane-pwned"), "is not a URL"),
    "git-url-space": (git_component("https://example.invalid/a b.git"), "is not a URL"),
    "git-url-no-host": (git_component("https:///x.git"), "is not a URL"),
    "git-url-empty": (git_component(""), "is not a URL"),
    "git-url-newline": (git_component("https://example.invalid/x\\n--upload-pack=x"), "is not a URL"),
    "git-tag-option": (git_component(extra=', tag = "--upload-pack=x"'), "is not a git tag name"),
    "git-tag-dotdot": (git_component(extra=', tag = "v1..2"'), "is not a git tag name"),
    "git-tag-lock": (git_component(extra=', tag = "v1.lock"'), "is not a git tag name"),
    "submodule-dotdot": (git_component(extra=', submodules = ["../x"]'), "not a relative path inside the tree"),
    "submodule-absolute": (git_component(extra=', submodules = ["/etc"]'), "not a relative path inside the tree"),
    "fetchcontent-url-option": (fetchcontent("--upload-pack=touch /tmp/crosslane-pwned"), "is not a URL"),
    "fetchcontent-url-scheme": (fetchcontent("javascript:alert(1)"), "is not a URL"),
    "mirror-url-option": (git_component(more='\nmirrors = [{ kind = "git", url = "-x", commit = "' + "a" * 40 +
                                             '" }]'), "is not a URL"),
    "archive-url-option": (component('source = { kind = "archive", url = "--output=/tmp/x", sha256 = "' + "c" * 64 +
                                     '" }'), "is not a URL"),
    "debian-package-option": (component('source = { kind = "debian", package = "-o=APT::x=1", version = "1.0" }'),
                              "is not a Debian package name"),
    "debian-version-shell": (component('source = { kind = "debian", package = "zlib", version = "1.0; rm -rf /" }'),
                             "is not a Debian version"),
    "debian-version-option": (component('source = { kind = "debian", package = "zlib", version = "--x" }'),
                              "is not a Debian version"),
    "debian-mirror-option": (component('source = { kind = "debian", package = "zlib", version = "1.0", '
                                       'mirror = "-x" }'), "is not a URL"),
    "sysroot-package-option": (component('source = { kind = "sysroot-package", package = "--allow-unauthenticated" '
                                         '}'), "is not a Debian package name"),
    "collect-absolute": (git_component(more='\ncollect = ["/etc/hostname"]'), "not a relative path inside the tree"),
    "collect-dotdot": (git_component(more='\ncollect = ["../../../etc/hostname"]'),
                       "not a relative path inside the tree"),
    "collect-option": (git_component(more='\ncollect = ["-rf"]'), "not a relative path inside the tree"),
    "collect-dot": (git_component(more='\ncollect = ["."]'), "not a relative path inside the tree"),
    "collect-empty": (git_component(more='\ncollect = [""]'), "not a relative path inside the tree"),
    "smoke-timeout-huge": (git_component(more='\nsmoke = { kind = "canary", timeout = 1e300 }'), "at most 86400"),
    "requirement-target": ('\n[hostenvs.hostile]\nrequirements = ["--target=/tmp/x==1"]\n', "is not a requirement"),
    "requirement-editable": ('\n[hostenvs.hostile]\nrequirements = ["-e /==1"]\n', "is not a requirement"),
    "requirement-index": ('\n[hostenvs.hostile]\nrequirements = ["--index-url=http://x==1"]\n',
                          "is not a requirement"),
    "requirement-url": ('\n[hostenvs.hostile]\nrequirements = ["six @ file:///etc/passwd"]\n', "is not pinned"),
    "requirement-range": ('\n[hostenvs.hostile]\nrequirements = ["six>=1"]\n', "is not pinned"),
    "pin-option": ('\n[hostenvs.hostile]\nrequirements = ["six"]\n', "has no version"),
}

REPLACED: dict[str, tuple[tuple[str, str], str]] = {
    "host-package-option": (replaced('"qemu-user-static", "debootstrap"', '"-o=Dpkg::Options::=x", "debootstrap"'),
                            "is not a Debian package name"),
    "sysroot-package-option": (replaced('"libc6-dev", "libgcc-14-dev"', '"--force-yes", "libgcc-14-dev"'),
                               "is not a Debian package name"),
    "sysroot-mirror-option": (replaced('mirror = "http://deb.debian.org/debian"\nkeyring',
                                       'mirror = "--option=x"\nkeyring'), "is not a URL"),
    "toolroot-package-option": (replaced('packages = ["gcc-riscv64-unknown-elf"', 'packages = ["-o=APT::x"'),
                                "is not a Debian package name"),
    "pins-version-spaces": (replaced('[pins]\n', '[pins]\nsix = "1 ; --x"\n'), "is not a version"),
}


def config_with(box: Sandbox, text: str) -> Path:
    """A versions.toml of the repository's, changed, in a folder whose components/ and patches/ are the repository's."""
    folder = box.inputs / "repo"
    folder.mkdir()
    for name in ("components", "patches"):
        shutil.copytree(REPO / name, folder / name)  # a link would lead out of the folder, which load refuses
    path = folder / "versions.toml"
    path.write_text(text)
    return path


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


@pytest.mark.parametrize("case", list(APPENDED))
def test_a_value_that_would_be_an_option_is_refused_on_load(box: Sandbox, case: str) -> None:
    extra, words = APPENDED[case]
    path = config_with(box, (REPO / "versions.toml").read_text() + extra)
    box.refused(2, words, "matrix", "--config", str(path))
    assert not Path("/tmp/crosslane-pwned").exists()


@pytest.mark.parametrize("case", list(REPLACED))
def test_a_shared_table_value_that_would_be_an_option(box: Sandbox, case: str) -> None:
    (old, new), words = REPLACED[case]
    text = (REPO / "versions.toml").read_text()
    assert old in text, old
    box.refused(2, words, "matrix", "--config", str(config_with(box, text.replace(old, new, 1))))


def test_the_repository_file_through_the_same_path_loads(box: Sandbox) -> None:
    done = box.invoke("matrix", "--config", str(config_with(box, (REPO / "versions.toml").read_text())))
    assert done.rc == 0 and "run=true" in done.out, done.out


@pytest.mark.parametrize(("template", "words"), [
    ("/srv/{owner.__class__}", "placeholder {owner.__class__}"),
    ("/srv/{owner[0]}", "placeholder {owner[0]}"),
    ("/srv/{name:>999999999}", "placeholder {name:>999999999}"),
    ("/srv/{name!r}", "placeholder {name!r}"),
    ("/srv/{0}", "placeholder {0}"),
    ("/srv/{secret}", "placeholder {secret}"),
    ("/srv/{", "Single '{'"),
], ids=["attribute", "index", "width", "conversion", "positional", "unknown", "unclosed"])
def test_a_mirror_template_is_names_only(box: Sandbox, template: str, words: str) -> None:
    path = config_with(box, (REPO / "versions.toml").read_text() + git_component())
    box.refused(2, words, "sources", "--arch", "riscv64", "--component", "hostile", "--config", str(path),
                env={"CROSSLANE_GIT_MIRROR": template, "CROSSLANE_OFFLINE": "1"})
