"""Installing a wheel for a target without pip on the target: tags, requirements, unpacking, --wheel mapping."""

from __future__ import annotations

import base64
import hashlib
import json
import time
import zipfile
from pathlib import Path

import pytest

from crosslane import report
from crosslane.archs import Arch
from crosslane.cli import actions
from crosslane.config import Config
from crosslane.context import Context
from crosslane.errors import UsageError
from crosslane.guest.sysroot import MANIFEST, Sysroot
from crosslane.log import Log
from crosslane.process import costs
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.smokes import genai
from crosslane.smokes import site as target_site

GENAI_METADATA = ("Metadata-Version: 2.4\nName: onnxruntime-genai\nVersion: 0.18.0\nRequires-Dist: numpy>=1.21.6\n"
                  "Requires-Dist: onnxruntime>=1.31.0\nRequires-Dist: pywin32; sys_platform == 'win32'\n"
                  "Requires-Dist: pytest; extra == 'test'\n"
                  "Requires-Dist: old-thing; python_version < '3.10'\n")


def make_wheel(folder: Path, name: str, metadata: str, files: dict[str, str], *, corrupt: str = "") -> Path:
    """A wheel as the spec has it: METADATA, WHEEL and a RECORD of sha256 digests (*corrupt*: a member whose
    recorded digest is wrong)."""
    wheel = folder / name
    dist = "-".join(name.split("-")[:2])
    members = {f"{dist}.dist-info/METADATA": metadata,
               f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n", **files}
    record = []
    for path, text in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={'A' * 43 if path == corrupt else digest},{len(text.encode())}")
    record.append(f"{dist}.dist-info/RECORD,,")
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in members.items():
            archive.writestr(path, text)
        archive.writestr(f"{dist}.dist-info/RECORD", "\n".join(record) + "\n")
    return wheel


def test_glibc_from_the_manifest(tmp_path: Path) -> None:
    manifest = tmp_path / MANIFEST
    libc6 = {"package": "libc6", "version": "2.41-12+deb13u5", "sha256": "0" * 64}
    manifest.write_text(json.dumps({"packages": [libc6]}))
    assert target_site.glibc_version(Sysroot(Arch.ARM64, tmp_path, "k")) == (2, 41)
    manifest.write_text(json.dumps({"packages": []}))
    assert target_site.glibc_version(Sysroot(Arch.ARM64, tmp_path, "k")) is None


@pytest.mark.parametrize(("arch", "first", "count"), [
    (Arch.ARM64, "manylinux_2_41_aarch64", 25 + 2), (Arch.RISCV64, "manylinux_2_41_riscv64", 27),
    (Arch.AMD64, "manylinux_2_41_x86_64", 27)], ids=["arm64", "riscv64", "amd64"])
def test_platform_tags(arch: Arch, first: str, count: int) -> None:
    tags = target_site.platform_tags(arch, (2, 41))
    assert tags[0] == first and len(tags) == count
    assert tags[-2].startswith("manylinux2014_") and tags[-1].startswith("linux_")
    assert "manylinux_2_17_" + first.split("_", 3)[3] in tags


def test_platform_tags_without_glibc() -> None:
    assert target_site.platform_tags(Arch.RISCV64, None) == ["linux_riscv64"]


def test_requirements_apply_markers_for_the_target(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "onnxruntime_genai-0.18.0-cp313-cp313-manylinux_2_28_aarch64.whl", GENAI_METADATA, {})
    assert target_site.requirements(wheel, Arch.ARM64, "3.13") == ["numpy>=1.21.6", "onnxruntime>=1.31.0"]


def test_not_a_wheel(tmp_path: Path) -> None:
    bad = tmp_path / "x-1.0-py3-none-any.whl"
    bad.write_text("not a zip")
    with pytest.raises(UsageError, match="cannot read it"):
        target_site.requirements(bad, Arch.ARM64, "3.13")
    with pytest.raises(UsageError, match="not a wheel file name"):
        target_site.wheel_identity(tmp_path / "thing.zip")


def test_wheel_identity() -> None:
    named = target_site.wheel_identity(Path("onnxruntime_genai-0.18.0-cp313-cp313-manylinux_2_28_aarch64.whl"))
    assert named == target_site.WheelName(distribution="onnxruntime-genai", version="0.18.0",
                                          platforms=frozenset({"manylinux_2_28_aarch64"}))


def test_unpack_moves_data_schemes_to_the_top(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "pkg-1.0-py3-none-any.whl", "Name: pkg\nVersion: 1.0\n",
                       {"pkg/__init__.py": "A = 1\n", "pkg-1.0.data/platlib/pkg_native.so": "elf",
                        "pkg-1.0.data/purelib/pkg/extra.py": "B = 2\n",
                        "pkg-1.0.data/scripts/tool": "#!python\nA = 1\n"})
    site = tmp_path / "site"
    target_site.unpack(wheel, site)
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()) == [
        "pkg-1.0.dist-info/INSTALLER", "pkg-1.0.dist-info/METADATA", "pkg-1.0.dist-info/RECORD",
        "pkg-1.0.dist-info/WHEEL", "pkg/__init__.py", "pkg/extra.py", "pkg_native.so"]
    # the script is the target's: its #! names the sysroot's interpreter, not the host's
    assert (tmp_path / "bin" / "tool").read_text() == "#!/usr/bin/python3\nA = 1\n"
    assert (site / "pkg-1.0.dist-info" / "INSTALLER").read_text() == "crosslane\n"


def test_unpack_refuses_a_member_whose_digest_differs_from_its_record(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "pkg-1.0-py3-none-any.whl", "Name: pkg\nVersion: 1.0\n",
                       {"pkg/__init__.py": "A = 1\n"}, corrupt="pkg/__init__.py")
    with pytest.raises(UsageError, match=r"pkg-1.0-py3-none-any.whl: not a valid wheel"):
        target_site.unpack(wheel, tmp_path / "site")


def test_given_maps_a_wheel_to_its_component(cfg: Config, tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "onnxruntime_genai-0.18.0-cp313-cp313-manylinux_2_28_aarch64.whl", GENAI_METADATA, {})
    assert actions.wheels(cfg, [str(wheel)]) == {"onnxruntime-genai": (wheel,)}
    stray = make_wheel(tmp_path, "requests-2.0-py3-none-any.whl", "Name: requests\n", {})
    with pytest.raises(UsageError, match="no component"):
        actions.wheels(cfg, [str(stray)])
    with pytest.raises(UsageError, match="no such file"):
        actions.wheels(cfg, [str(tmp_path / "missing.whl")])


def test_requirements_the_sysroot_provides_are_not_downloaded(tmp_path: Path) -> None:
    from crosslane.smokes import site as site_mod

    dist = tmp_path / "usr/lib/python3/dist-packages"
    (dist / "onnxruntime-1.23.egg-info").mkdir(parents=True)
    (dist / "numpy-2.4.6.dist-info").mkdir()
    present = site_mod.sysroot_distributions(tmp_path)
    assert present == {"onnxruntime": "1.23", "numpy": "2.4.6"}
    rest, provided = site_mod.split_provided(["numpy>=1.21.6", "onnxruntime>=1.20.1", "onnxruntime>=1.30", "sympy"],
                                             present)
    assert provided == ["numpy 2.4.6", "onnxruntime 1.23"]
    assert rest == ["onnxruntime>=1.30", "sympy"]


def test_install_removes_gpu_variants_before_unpacking(cfg: Config, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from crosslane_helpers import fake_sysroot

    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    fake_sysroot(cfg, Arch.RISCV64, python="3.14")
    metadata = "Metadata-Version: 2.4\nName: thing\nVersion: 1.0\nRequires-Dist: sympy\n"
    wheel = make_wheel(tmp_path, "thing-1.0-cp314-cp314-linux_riscv64.whl", metadata, {"thing/__init__.py": ""})

    def download(ctx: Context, wanted: list[str], tags: list[str], version: str, dest: Path) -> bool:
        make_wheel(dest, "sympy-1.0-py3-none-any.whl", "Name: sympy\nVersion: 1.0\n", {"sympy/__init__.py": ""})
        make_wheel(dest, "onnxruntime_gpu-1.23.0-cp314-cp314-linux_riscv64.whl", "Name: onnxruntime-gpu\n",
                   {"onnxruntime/__init__.py": "gpu"})
        return True

    monkeypatch.setattr(target_site, "pip_download", download)
    done = target_site.install(Context(cfg, Runner(Log())), Arch.RISCV64, wheel, tmp_path / "site")
    assert done.pruned == ("onnxruntime_gpu-1.23.0-cp314-cp314-linux_riscv64.whl",)
    assert not (done.site / "onnxruntime").exists() and (done.site / "sympy").is_dir()
    assert "GPU variants removed: onnxruntime_gpu-1.23.0" in done.describe()


def test_the_genai_install_row_carries_its_own_time(cfg: Config, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from crosslane_helpers import fake_sysroot

    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    fake_sysroot(cfg, Arch.RISCV64, python="3.14")
    wheel = make_wheel(tmp_path, "thing-1.0-cp314-cp314-linux_riscv64.whl", "Name: thing\nVersion: 1.0\n",
                       {"thing/__init__.py": "x = 1\n" * 50_000})
    with costs.measured() as smoke:  # the smoke around it: an unmeasured row would take this one's time
        prepared = genai.install_site(Context(cfg, Runner(Log())), Arch.RISCV64, "onnxruntime-genai", wheel)
        time.sleep(0.3)  # the rest of a smoke: far longer than the unpack
    assert prepared.row.verdict is Verdict.PASS and prepared.site is not None
    assert 0 < prepared.row.wall < smoke.wall / 2 and prepared.row.cpu > 0
    assert report.timed([prepared.row], smoke.wall, smoke.cpu)[0].wall == prepared.row.wall
