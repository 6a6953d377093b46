"""The machine as crosslane finds it: CROSSLANE_* places that are files, an arch never set up, odd wheel names.
Each through a real invoke process: its exit code, one error line naming the fix, no traceback."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from hostilekit import Sandbox

pytestmark = [pytest.mark.spawns]


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


@pytest.mark.parametrize("variable", ["CROSSLANE_CACHE", "CROSSLANE_BUILD_DIR"])
def test_a_place_that_is_a_file(box: Sandbox, variable: str) -> None:
    path = box.inputs / "a-file"
    path.write_text("")
    box.refused(3, f"{variable}={path}: not a folder", "build", "--arch", "riscv64", "--component", "canary",
                env={variable: str(path)})


@pytest.mark.parametrize("command", [("build", "--arch", "riscv64", "--component", "canary"),
                                     ("build", "--arch", "arm64")], ids=["build-canary", "build-arm64"])
def test_an_arch_never_set_up_is_exit_3_with_its_fix(box: Sandbox, command: tuple[str, ...]) -> None:
    done = box.refused(3, "a missing prerequisite among them", *command)
    assert f"invoke sysroot --arch {command[2]}" in done.out and "invoke setup" in done.out, done.out


def test_a_given_wheel_on_an_arch_never_set_up(box: Sandbox) -> None:
    given = wheel(box.inputs, "onnxruntime_genai-0.18.0-cp314-cp314-manylinux_2_28_aarch64.whl")
    box.refused(3, "no arm64 sysroot for the current versions.toml; invoke sysroot --arch arm64", "smoke", "--arch",
                "arm64", "--component", "onnxruntime-genai", "--wheel", str(given))


def wheel(folder: Path, name: str) -> Path:
    path = folder / name
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("demo/__init__.py", "")
        archive.writestr("demo-1.0.dist-info/RECORD", "")
    return path


@pytest.mark.parametrize(("name", "words"), [
    ("demo-1.0-cp-cp-linux_aarch64.whl", "names no CPython version"),
    ("demo-1.0-cpx3-cpx3-linux_aarch64.whl", "names no CPython version"),
    ("demo-1.0--cp314-linux_aarch64.whl", "invalid wheel name"),
], ids=["cp-cp", "cp-letters", "empty-python-tag"])
def test_an_odd_wheel_name_is_a_fail_row(box: Sandbox, name: str, words: str) -> None:
    done = box.invoke("verify", "--arch", "arm64", "--path", str(wheel(box.inputs, name)))
    assert done.rc == 1 and "Traceback" not in done.out and words in done.out, done.out
    assert len(done.errors) == 1, done.out


def test_two_given_wheels_of_one_platform_are_refused(box: Sandbox) -> None:
    one = wheel(box.inputs, "onnxruntime_genai-0.18.0-cp314-cp314-manylinux_2_28_aarch64.whl")
    other = box.inputs / "other"
    other.mkdir()
    two = wheel(other, one.name)
    box.refused(2, "need one platform each", "smoke", "--arch", "arm64", "--component", "onnxruntime-genai",
                "--wheel", str(one), "--wheel", str(two))
