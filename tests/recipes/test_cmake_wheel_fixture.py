"""The cmake-wheel recipe on a small fixture: a CPython extension cross-built for riscv64 whose one FetchContent
dependency crosslane supplies (staged from a local git mirror, CMake fully disconnected). The module's
suffix comes from the target's interpreter (FindPython runs it under qemu) and the wheel's tag is the
target's: the properties the genai lane relies on, in seconds instead of ten minutes."""

from __future__ import annotations

import dataclasses
import io
import subprocess
import zipfile
from pathlib import Path
from types import MappingProxyType

import pytest
from elftools.elf.elffile import ELFFile

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.config import Component, Config
from crosslane.context import Context
from crosslane.errors import UsageError
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.recipes import cmake
from crosslane.report import Check, Verdict
from crosslane.run import pipeline
from crosslane_helpers import fresh_cache, versions_header

pytestmark = [pytest.mark.cross, pytest.mark.qemu, pytest.mark.network]

CMAKELISTS = """\
cmake_minimum_required(VERSION 3.24)
project(pyfix C)
include(FetchContent)
FetchContent_Declare(helper GIT_REPOSITORY https://github.com/acme/helper GIT_TAG v1)
FetchContent_MakeAvailable(helper)
find_package(Python 3 REQUIRED COMPONENTS Interpreter Development.Module)
# As pybind11 does: cross-compiling, FindPython leaves Python_SOABI empty, so ask the (target) interpreter.
execute_process(COMMAND ${Python_EXECUTABLE} -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"
                OUTPUT_VARIABLE ext_suffix OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
Python_add_library(_pyfix MODULE pyfix.c)
set_target_properties(_pyfix PROPERTIES PREFIX "" SUFFIX "${ext_suffix}")
target_include_directories(_pyfix PRIVATE ${helper_SOURCE_DIR})
file(COPY ${CMAKE_SOURCE_DIR}/package/ DESTINATION ${CMAKE_BINARY_DIR}/wheel)
add_custom_command(TARGET _pyfix POST_BUILD
                   COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:_pyfix> ${CMAKE_BINARY_DIR}/wheel/pyfix/)
install(TARGETS _pyfix LIBRARY DESTINATION lib)
"""
SOURCE = """\
#include <Python.h>
#include "helper.h"
static PyObject *value(PyObject *self, PyObject *args) { return PyLong_FromLong(HELPER_VALUE); }
static PyMethodDef methods[] = {{"value", value, METH_NOARGS, ""}, {0}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pyfix", "", -1, methods};
PyMODINIT_FUNC PyInit__pyfix(void) { return PyModule_Create(&module); }
"""
SETUP = """\
from setuptools import Distribution, setup
class Binary(Distribution):
    def has_ext_modules(self):
        return True
setup(name="pyfix", version="1.0", packages=["pyfix"], package_data={"pyfix": ["*.so"]}, distclass=Binary)
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


# The module calls the sysroot's ONNX Runtime: auditwheel grafts it and what it needs (absl, onnx, protobuf, re2).
LINK_ORT = """
target_link_libraries(_pyfix PRIVATE ${CMAKE_SYSROOT}/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/libonnxruntime.so.1.23)
"""
CALL_ORT = "extern const void *OrtGetApiBase(void);\nconst void *pyfix_ort(void) { return OrtGetApiBase(); }\n"


def make_project(cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wheel: str = "", *,
                 ort: bool = False) -> Config:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    (upstream / "helper.h").write_text("#define HELPER_VALUE 42\n")
    (upstream / "LICENSE").write_text("The helper's licence.\n")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", "helper")
    git(upstream, "tag", "v1")
    commit = git(upstream, "rev-parse", "HEAD")
    subprocess.run(["git", "clone", "-q", "--bare", str(upstream), str(tmp_path / "mirrors/acme+helper/repo")],
                   check=True)
    src = tmp_path / "pyfix"
    (src / "package" / "pyfix").mkdir(parents=True)
    (src / "CMakeLists.txt").write_text(CMAKELISTS + (LINK_ORT if ort else ""))
    (src / "pyfix.c").write_text(SOURCE + (CALL_ORT if ort else ""))
    (src / "package" / "setup.py").write_text(SETUP)
    (src / "package" / "pyfix" / "__init__.py").write_text("from ._pyfix import value\n")
    # A cache of its own (sharing the sysroots and build tools), so the dependency is staged here.
    for key, value in fresh_cache(tmp_path).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("CROSSLANE_GIT_MIRROR", str(tmp_path / "mirrors" / "{owner}+{name}" / "repo"))
    text = versions_header() + f"""
[components.pyfix]
source = {{ kind = "tree", path = "pyfix" }}
arches = ["riscv64"]
recipe = "cmake-wheel"
distribution = "pyfix"
toolchain = {{ riscv64 = "clang" }}
cmake_args = ["-DPython_EXECUTABLE={{python_exe}}", "-DPython_INCLUDE_DIR={{python_include}}",
              "-DPython_LIBRARY={{python_library}}"]
[components.pyfix.fetchcontent.helper]
source = {{ kind = "git", url = "https://github.com/acme/helper", tag = "v1", commit = "{commit}" }}
{wheel}"""
    (tmp_path / "versions.toml").write_text(text)
    pyfix = config_mod.load(tmp_path / "versions.toml").components["pyfix"]
    # The repository's sysroot, toolchains and arches (the sysroots are already made), with this component.
    return dataclasses.replace(cfg, root=tmp_path, components=MappingProxyType({"pyfix": pyfix}))


@pytest.fixture
def project(cfg: Config, tmp_path: Path, sysroots: dict[Arch, Path], monkeypatch: pytest.MonkeyPatch) -> Config:
    return make_project(cfg, tmp_path, monkeypatch)


def test_the_wheel_is_the_targets_and_its_dependency_came_from_crosslane(project: Config, tmp_path: Path) -> None:
    rows = pipeline.build_components(Context(project, Runner(Log(io.StringIO()))), Arch.RISCV64, ["pyfix"])
    failed = [r for r in rows if r.verdict is Verdict.FAIL]
    assert not failed, failed
    steps = {r.label: r for r in rows}
    assert steps["source:helper"].verdict is Verdict.PASS and "(fetched)" in steps["source:helper"].reason
    assert steps["gates"].verdict is Verdict.PASS
    wheels = sorted((tmp_path / "build/riscv64/pyfix/install/dist").glob("*.whl"))
    # Repaired by auditwheel: the lowest manylinux tag riscv64 has (2.31), since the module needs no newer glibc.
    assert [w.name for w in wheels] == ["pyfix-1.0-cp314-cp314-manylinux_2_31_riscv64.whl"]
    with zipfile.ZipFile(wheels[0]) as archive:
        [module] = [n for n in archive.namelist() if n.startswith("pyfix/_pyfix")]
        assert module == "pyfix/_pyfix.cpython-314-riscv64-linux-gnu.so"
        assert ELFFile(io.BytesIO(archive.read(module)))["e_machine"] == "EM_RISCV"
    cache = (tmp_path / "build/riscv64/pyfix/wheels/cp314-linux_riscv64/build/CMakeCache.txt").read_text()
    assert f"FETCHCONTENT_SOURCE_DIR_HELPER:PATH={tmp_path / 'cache'}" in cache
    assert "FETCHCONTENT_FULLY_DISCONNECTED:BOOL=ON" in cache


def test_one_wheel_per_cpython_each_its_own_build_selectable_like_cibuildwheel(
        cfg: Config, tmp_path: Path, sysroots: dict[Arch, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_project(cfg, tmp_path, monkeypatch, '[components.pyfix.wheel]\npythons = ["3.13", "3.15"]\n')
    log = Log(io.StringIO())
    only = pipeline.build_components(Context(project, Runner(log), builds=("cp313-*",)), Arch.RISCV64, ["pyfix"])
    assert not [r for r in only if r.verdict is Verdict.FAIL], only
    dist = tmp_path / "build/riscv64/pyfix/install/dist"
    assert [w.name for w in dist.glob("*.whl")] == ["pyfix-1.0-cp313-cp313-manylinux_2_31_riscv64.whl"]
    # cibuildwheel's "No build identifiers selected": a selection of nothing is refused, not a success.
    with pytest.raises(UsageError, match=r"no build identifier matches cp27-\* \(known: cp313-linux_riscv64, "
                                         r"cp315-linux_riscv64\)"):
        pipeline.build_components(Context(project, Runner(log), builds=("cp27-*",)), Arch.RISCV64, ["pyfix"])
    both = pipeline.build_components(Context(project, Runner(log)), Arch.RISCV64, ["pyfix"])
    assert not [r for r in both if r.verdict is Verdict.FAIL], both
    steps = {r.subject: r for r in both if r.check is Check.BUILD}
    assert steps["cp313-linux_riscv64"].reason == "up to date (skipped)"  # its own stamp
    assert steps["cp315-linux_riscv64"].reason == "built"
    assert sorted(w.name for w in dist.glob("*.whl")) == ["pyfix-1.0-cp313-cp313-manylinux_2_31_riscv64.whl",
                                                          "pyfix-1.0-cp315-cp315-manylinux_2_31_riscv64.whl"]
    with zipfile.ZipFile(dist / "pyfix-1.0-cp315-cp315-manylinux_2_31_riscv64.whl") as archive:
        assert "pyfix/_pyfix.cpython-315-riscv64-linux-gnu.so" in archive.namelist()
    prepared: list[str] = []
    real = cmake.fetchcontent_args

    def counted(ctx: Context, component: Component, arch: Arch) -> cmake.FetchContent:
        prepared.append(component.name)
        return real(ctx, component, arch)
    monkeypatch.setattr(cmake, "fetchcontent_args", counted)
    again = pipeline.build_components(Context(project, Runner(log)), Arch.RISCV64, ["pyfix"])
    [summary] = [r for r in again if r.check is Check.BUILD and not r.subject]
    assert summary.reason.startswith("up to date (skipped)")
    assert prepared == ["pyfix"]  # the FetchContent dependencies once for both wheels, as the source itself


def test_a_failing_identifier_leaves_no_gathered_wheels_or_stamp(
        cfg: Config, tmp_path: Path, sysroots: dict[Arch, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_project(cfg, tmp_path, monkeypatch)
    ctx = Context(project, Runner(Log(io.StringIO())))
    assert not [r for r in pipeline.build_components(ctx, Arch.RISCV64, ["pyfix"]) if r.verdict is Verdict.FAIL]
    folder = tmp_path / "build/riscv64/pyfix"
    assert (folder / ".crosslane-stamp.json").is_file() and list((folder / "install/dist").glob("*.whl"))
    # The next build of the identifier breaks in packaging: its setup.py fails.
    (tmp_path / "pyfix/package/setup.py").write_text('raise SystemExit("broken on purpose")\n')
    rows = pipeline.build_components(Context(project, Runner(Log(io.StringIO()))), Arch.RISCV64, ["pyfix"])
    assert [r.subject for r in rows if r.check is Check.BUILD and r.verdict is Verdict.FAIL] == \
        ["cp314-linux_riscv64", ""]
    assert not (folder / ".crosslane-stamp.json").exists() and not (folder / "install").exists()


def test_the_wheel_carries_the_papers_of_what_auditwheel_grafted(
        cfg: Config, tmp_path: Path, sysroots: dict[Arch, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from crosslane.guest import sysroot as sysroot_mod
    from crosslane.shipping import sbom

    project = make_project(cfg, tmp_path, monkeypatch, ort=True)
    rows = pipeline.build_components(Context(project, Runner(Log(io.StringIO()))), Arch.RISCV64, ["pyfix"])
    assert not [r for r in rows if r.verdict is Verdict.FAIL], rows
    [wheel] = sorted((tmp_path / "build/riscv64/pyfix/install/dist").glob("*.whl"))
    assert (wheel.parent / (wheel.name + ".intoto.json")).is_file()
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        document = archive.read("pyfix-1.0.dist-info/sboms/crosslane.cdx.json").decode()
        metadata = archive.read("pyfix-1.0.dist-info/METADATA").decode()
    assert sbom.validate(document) is None
    grafted = [n for n in names if n.startswith("pyfix.libs/")]
    assert any("libonnxruntime-" in n for n in grafted) and any("libre2-" in n for n in grafted), grafted
    # Each grafted library is the component of the package whose .deb lists the file it came from, at the
    # version the sysroot's manifest has, with that package's copyright inside the wheel.
    versions = {p["package"]: p["version"] for p in
                sysroot_mod.Sysroot(Arch.RISCV64, sysroots[Arch.RISCV64], "").packages()}
    owners = sysroot_mod.read_owners(sysroots[Arch.RISCV64])
    libraries = {c["bom-ref"].removeprefix("file:"): c for c in sbom.components(document)
                 if c["bom-ref"].startswith("file:")}
    assert sorted(libraries) == sorted(grafted)
    for component in libraries.values():
        properties = {p["name"]: p["value"] for p in component["properties"]}
        assert owners[properties["crosslane:origin"]].package == component["name"]
        assert component["version"] == versions[component["name"]]
        assert f"pyfix-1.0.dist-info/licenses/debian/{component['name']}/copyright" in names
        assert f"License-File: debian/{component['name']}/copyright" in metadata
    assert {c["name"] for c in libraries.values()} >= {"libonnxruntime1.23", "libre2-11"}
    helper = next(c for c in sbom.components(document) if c["bom-ref"] == "source:pyfix+helper")
    assert helper["purl"].startswith("pkg:github/acme/helper@") and helper["version"] == "v1"
    assert "pyfix-1.0.dist-info/licenses/sources/pyfix+helper/LICENSE" in names
