"""The install test's pieces that need no board: the CPython of a wheel, the root it is tested in, the chroot argv,
the CA bundle ca-certificates' postinst would make, the ORT the payload mapped."""

from __future__ import annotations

import io
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from crosslane import config as config_mod
from crosslane.context import Context
from crosslane.host import toolroot
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.smokes import wheel_install
from gatekit import make_wheel, record_line


def test_the_cpython_comes_from_the_wheel_tag() -> None:
    assert wheel_install.python_of(Path("onnxruntime_genai-0.15.2-cp313-cp313-manylinux_2_39_riscv64.whl")) == "3.13"
    assert wheel_install.python_of(Path("x-1.0-cp315-cp315-linux_x86_64.whl")) == "3.15"


def test_each_cpython_is_tested_on_the_suite_whose_system_python_it_is() -> None:
    ctx = Context(config_mod.load(), Runner(Log(io.StringIO())))
    cp313 = wheel_install.root_spec(ctx, "onnxruntime-genai", "3.13")
    cp315 = wheel_install.root_spec(ctx, "onnxruntime-genai", "3.15")
    assert (cp313.suite, cp313.packages) == ("trixie", ("python3.13", "python3.13-venv", "python3-numpy"))
    assert (cp315.suite, cp315.packages) == ("forky", ("python3.15", "python3.15-venv", "python3-numpy"))


def test_the_board_is_entered_without_network_and_with_the_profiles_cpu(tmp_path: Path) -> None:
    argv = wheel_install.inside(tmp_path, ["/usr/bin/python3", "-V"], "/usr/bin/qemu-riscv64-static", "rv64,v=true",
                                [tmp_path / "model"])
    assert argv[:8] == ["unshare", "--mount", "--net", "--pid", "--fork", "--propagation", "private", "--"]
    assert argv[8:10] == [sys.executable, str(toolroot.ENTER)]
    assert argv[argv.index("--") + 1:][-6:] == ["--", "/usr/bin/qemu-riscv64-static", "-cpu", "rv64,v=true",
                                                "/usr/bin/python3", "-V"]
    assert ["--bind-ro", str(tmp_path / "model")] == argv[argv.index(str(tmp_path / "model")) - 1:][:2]


def test_only_the_pip_step_binds_a_folder_writable(tmp_path: Path) -> None:
    argv = wheel_install.inside(tmp_path, ["/usr/bin/python3", "-V"], "/q", "rv64", [tmp_path / "model"], "/",
                                [tmp_path / "pip"])
    assert ["--bind", str(tmp_path / "pip")] == argv[argv.index(str(tmp_path / "pip")) - 1:][:2]
    assert "--bind" not in wheel_install.inside(tmp_path, ["/x"], "/q", "rv64", [tmp_path / "model"])


def pip_wheel_file(folder: Path, members: dict[str, bytes], **hostile: Any) -> Path:
    """A root's pip wheel with a correct RECORD (gatekit.make_wheel; *hostile*: its tamper and raw entries)."""
    wheels = folder / "usr/share/python-wheels"
    wheels.mkdir(parents=True)
    return make_wheel(wheels, "pip-26.2.2-py3-none-any.whl", members, dist_info="pip-26.2.2.dist-info", **hostile)


def test_the_roots_pip_is_unpacked_once_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "root"
    wheel = pip_wheel_file(root, {"pip/__main__.py": b"print('pip')\n", "pip/_internal/__init__.py": b""})
    assert wheel_install.pip_wheel(root) == wheel
    tree = wheel_install.pip_tree(wheel)
    assert tree.parent == tmp_path / "cache" / "pip" and tree.name.startswith("pip-26.2.2-py3-none-any-")
    assert (tree / "pip/__main__.py").read_text() == "print('pip')\n" and (tree / "pip/_internal/__init__.py").is_file()
    (tree / "pip/__pycache__").mkdir()  # what a pip step leaves is kept: the tree is not unpacked again
    assert wheel_install.pip_tree(wheel) == tree and (tree / "pip/__pycache__").is_dir()


def sha256_field(data: bytes) -> str:
    """RECORD's hash field for *data* (`sha256=<urlsafe base64>`)."""
    return record_line("-", data).split(",")[1]


SHA_X, SHA_Y = sha256_field(b"x\n"), sha256_field(b"y\n")


@pytest.mark.parametrize(("members", "hostile", "refused"), [
    ({"README": b"no pip here\n"}, {}, r"holds no pip/__main__\.py"),
    ({"pip/__main__.py": b"x\n"}, {"raw": [(zipfile.ZipInfo("../escaped.py"), b"x = 1\n")]}, "zip-slip"),
    ({"pip/__main__.py": b"x\n"}, {"tamper": {"pip/__main__.py": b"y\n"}},
     re.escape(f"pip/__main__.py: RECORD says {SHA_X}, file has {SHA_Y}")),
], ids=["no-pip", "escapes", "record-differs"])
def test_a_damaged_pip_wheel_is_refused_and_nothing_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             members: dict[str, bytes], hostile: dict[str, Any],
                                                             refused: str) -> None:
    from crosslane.errors import MissingPrerequisite
    from crosslane.files import wheelzip

    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    wheel = pip_wheel_file(tmp_path / "root", members, **hostile)
    with pytest.raises((MissingPrerequisite, wheelzip.UnsafeWheel), match=refused):
        wheel_install.pip_tree(wheel)
    assert [p.name for p in (tmp_path / "cache" / "pip").iterdir()] == []
    assert not (tmp_path / "cache" / "escaped.py").exists()


def test_the_ca_bundle_is_what_update_ca_certificates_makes(tmp_path: Path) -> None:
    certs = tmp_path / "usr/share/ca-certificates/mozilla"
    certs.mkdir(parents=True)
    (certs / "b.crt").write_text("-----BEGIN CERTIFICATE-----\nB\n-----END CERTIFICATE-----\n")
    (certs / "a.crt").write_text("-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----")
    wheel_install.ca_bundle(tmp_path)
    bundle = (tmp_path / wheel_install.CA_BUNDLE).read_text()
    assert bundle.index("\nA\n") < bundle.index("\nB\n") and bundle.count("BEGIN") == 2
    (tmp_path / wheel_install.CA_BUNDLE).write_text("kept")
    wheel_install.ca_bundle(tmp_path)  # an existing bundle is the root's own
    assert (tmp_path / wheel_install.CA_BUNDLE).read_text() == "kept"


def test_the_ca_bundle_is_never_written_through_a_link(tmp_path: Path) -> None:
    root = tmp_path / "root"
    certs = root / "usr/share/ca-certificates/mozilla"
    certs.mkdir(parents=True)
    (certs / "a.crt").write_text("-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----\n")
    bundle = root / wheel_install.CA_BUNDLE
    bundle.parent.mkdir(parents=True)
    bundle.symlink_to("../../../../written-outside")  # a package's dangling link, out of the root
    wheel_install.ca_bundle(root)
    assert not (tmp_path / "written-outside").exists()
    assert not bundle.is_symlink() and "\nA\n" in bundle.read_text()


def test_the_pip_wheel_and_the_mapped_ort_are_read_from_what_the_board_left() -> None:
    assert wheel_install.loaded_ort('GENAI-BIND OK {"ort_library": "/crosslane/venv/x/libonnxruntime.so.1.23"}') == \
        "/crosslane/venv/x/libonnxruntime.so.1.23"
    assert wheel_install.loaded_ort("GENAI-BIND OK no json") == ""
    assert wheel_install.loaded_ort("GENAI-BIND OK: " + '{"a":' * 100_000) == ""  # nested too deeply
    assert wheel_install.loaded_ort("GENAI-BIND OK: [1]") == ""
    assert wheel_install.last_line("a\n\n  b  \n\n") == "b" and wheel_install.last_line("") == "no output"
    assert wheel_install.pip_wheel(Path("/nonexistent")) is None


def test_pips_success_line_is_read_item_by_item() -> None:
    line = "Successfully installed flatbuffers-25.12.19 onnxruntime-1.32.0 onnxruntime-genai-0.15.2 packaging-26.4"
    assert "onnxruntime-genai-0.15.2" in wheel_install.installed(f"Processing x\n{line}\n")
    assert "onnxruntime-genai-0.15.2" not in wheel_install.installed("Successfully installed onnxruntime-genai-0.15.3")


ELF = b"\x7fELF\x02\x01\x01" + b"\0" * 57


def venv_with(root: Path, files: dict[str, bytes], dist: str = "onnxruntime_genai-0.15.2") -> None:
    site = root / "crosslane/venv/lib/python3.14/site-packages"
    (site / f"{dist}.dist-info").mkdir(parents=True)
    for name, data in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_bytes(data)
    record = [f"{name},sha256=x,{len(data)}" for name, data in files.items()]
    (site / f"{dist}.dist-info/RECORD").write_text("\n".join([*record, f"{dist}.dist-info/RECORD,,", "../../../x,,"]))


def test_an_installed_wheel_is_the_smokes_bytes_only_when_every_elf_file_is(tmp_path: Path) -> None:
    """The install test runs the short generation only on positive evidence: every ELF file pip installed into the
    venv, the wheel's and its requirements' (PyPI's ORT for the control), is by sha256 one the smoke's runs loaded
    (its site)."""
    smoke_site = tmp_path / "site"
    (smoke_site / "onnxruntime_genai").mkdir(parents=True)
    (smoke_site / "onnxruntime/capi").mkdir(parents=True)
    (smoke_site / "onnxruntime_genai/onnxruntime_genai.so").write_bytes(ELF + b"ext314")
    (smoke_site / "onnxruntime/capi/libonnxruntime.so.1").write_bytes(ELF + b"ort")
    (smoke_site / "onnxruntime_genai/__init__.py").write_text("")
    proven = frozenset(wheel_install.elf_hashes(smoke_site).values())
    assert len(proven) == 2  # the ELF files only
    runner = Runner(Log(io.StringIO()))
    cfg = config_mod.load(Path(__file__).resolve().parents[2] / "versions.toml")
    same, other, other_ort = tmp_path / "same", tmp_path / "other", tmp_path / "other-ort"
    for root, ext, ort in ((same, b"ext314", b"ort"), (other, b"ext313", b"ort"), (other_ort, b"ext314", b"ort2")):
        venv_with(root, {"onnxruntime_genai/onnxruntime_genai.so": ELF + ext, "onnxruntime_genai/__init__.py": b""})
        venv_with(root, {"onnxruntime/capi/libonnxruntime.so.1": ELF + ort}, dist="onnxruntime-1.32.0")
    for root, expected in ((same, True), (other, False), (other_ort, False)):
        board = wheel_install.Board(Context(cfg, runner), root, "qemu", "max")
        found = wheel_install.installed_elf_hashes(board, "onnxruntime-genai")
        assert sorted(found) == ["onnxruntime/capi/libonnxruntime.so.1", "onnxruntime_genai/onnxruntime_genai.so"]
        assert (set(found.values()) <= proven) is expected
    assert wheel_install.installed_elf_hashes(wheel_install.Board(Context(cfg, runner), tmp_path / "none", "q",
                                                                  "m"), "onnxruntime-genai") == {}


@pytest.mark.parametrize("odd", ["no-own-elf", "no-own-record", "link-out", "not-a-row"])
def test_installed_bytes_are_nothing_unless_every_record_entry_is_accounted_for(tmp_path: Path, odd: str) -> None:
    """Fail closed: an ELF file the check could not see would otherwise leave the rest "the same bytes"."""
    runner = Runner(Log(io.StringIO()))
    cfg = config_mod.load(Path(__file__).resolve().parents[2] / "versions.toml")
    root = tmp_path / "root"
    own = {"onnxruntime_genai/__init__.py": b""} if odd == "no-own-elf" else \
        {"onnxruntime_genai/onnxruntime_genai.so": ELF + b"ext"}
    if odd != "no-own-record":
        venv_with(root, own)
    venv_with(root, {"onnxruntime/capi/libonnxruntime.so.1": ELF + b"ort"}, dist="onnxruntime-1.32.0")
    site = root / "crosslane/venv/lib/python3.14/site-packages"
    record = site / "onnxruntime-1.32.0.dist-info/RECORD"
    if odd == "link-out":  # a file pip would never link out of the venv: what it points to is not the board's
        outside = tmp_path / "host.so"
        outside.write_bytes(ELF + b"host")
        (site / "onnxruntime/capi/libhost.so").symlink_to(outside)
        record.write_text(record.read_text() + "\nonnxruntime/capi/libhost.so,sha256=x,1")
    if odd == "not-a-row":
        record.write_text(record.read_text() + "\nonnxruntime/capi/libmore.so")
    board = wheel_install.Board(Context(cfg, runner), root, "qemu", "max")
    assert wheel_install.installed_elf_hashes(board, "onnxruntime-genai") == {}
    ok = tmp_path / "ok"
    venv_with(ok, {"onnxruntime_genai/onnxruntime_genai.so": ELF + b"ext"})
    assert len(wheel_install.installed_elf_hashes(wheel_install.Board(Context(cfg, runner), ok, "qemu", "max"),
                                                  "onnxruntime-genai")) == 1


def test_the_short_generation_is_the_references_first_tokens_without_the_constrained_tier() -> None:
    generation = {"GENAI_MODEL_DIR": "/m", "GENAI_NEW_TOKENS": "16", "GENAI_EXPECTED_TOKENS": "[5, 6, 7, 8, 9, 10]",
                  "GENAI_CONSTRAINED": "{}", "GENAI_PROMPT": "p"}
    short = wheel_install.short_generation(generation)
    assert short == {"GENAI_MODEL_DIR": "/m", "GENAI_NEW_TOKENS": "2", "GENAI_EXPECTED_TOKENS": "[5, 6]",
                     "GENAI_PROMPT": "p"}


def test_a_short_guided_generation_compares_with_the_smokes_first_guided_tokens() -> None:
    guided = '{"kind": "regex", "data": "a+", "prompt": "p", "new_tokens": 24}'
    generation = {"GENAI_MODEL_DIR": "/m", "GENAI_EXPECTED_TOKENS": "[5, 6, 7, 8, 9]", "GENAI_CONSTRAINED": guided}
    short = wheel_install.short_generation(generation, (40, 41, 42, 43, 44, 45))
    assert json.loads(short["GENAI_CONSTRAINED"]) == {**json.loads(guided), "expected_tokens": [40, 41]}
    assert short["GENAI_EXPECTED_TOKENS"] == "[5, 6]"
    assert "GENAI_CONSTRAINED" not in wheel_install.short_generation(generation)


@pytest.mark.parametrize(("installed", "proof", "how"), [
    ({"pkg/lib.so": "L", "pkg/ext.cpython-314-riscv64-linux-gnu.so": "E"}, ("L", "E"), "same"),
    ({"pkg/lib.so": "L", "pkg/ext.cpython-313-riscv64-linux-gnu.so": "X"}, ("L", "E"), "library"),
    ({"pkg/lib.so": "L", "pkg/ext.abi3.so": "X"}, ("L", "E"), "library"),
    ({"pkg/lib.so": "M", "pkg/ext.cpython-313-riscv64-linux-gnu.so": "X"}, ("L", "E"), "full"),  # a library differs
    ({"pkg/lib.so": "L", "pkg/ext.cpython-313-riscv64-linux-gnu.so": "X"}, (), "full"),  # nothing proven
    ({}, ("L",), "full"),  # RECORD unreadable: nothing to compare
], ids=["same", "extension-differs", "abi3-differs", "library-differs", "unproven", "no-record"])
def test_how_much_an_install_test_runs_follows_what_the_smoke_proved(
        installed: dict[str, str], proof: tuple[str, ...], how: str) -> None:
    assert wheel_install.evidence(installed, wheel_install.Proof(hashes=frozenset(proof), constrained=(1, 2)))[0] == how


def test_an_extension_that_differs_runs_every_tier_without_the_smokes_guided_tokens() -> None:
    installed = {"pkg/lib.so": "L", "pkg/ext.cpython-313-riscv64-linux-gnu.so": "X"}
    how, unproven = wheel_install.evidence(installed, wheel_install.Proof(hashes=frozenset({"L", "E"})))
    assert how == "full" and unproven == {"pkg/ext.cpython-313-riscv64-linux-gnu.so": "X"}
    # With tier 5 not armed, the full run makes no guided call: the short generation is all it makes.
    unguided = wheel_install.evidence(installed, wheel_install.Proof(hashes=frozenset({"L", "E"})), guided=False)
    assert unguided[0] == "library"


def test_the_controls_first_wheel_proves_the_bytes_of_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    """On an arch of one profile with nothing proven by a smoke, the first wheel runs every tier alone; the others
    are held to what it passed with. A failing first test proves nothing; a smoke's proof is every test's."""
    from crosslane.archs import Arch
    from crosslane.report import Check, Row, Verdict

    ctx = Context(config_mod.load(), Runner(Log(io.StringIO())))
    given: list[tuple[str, wheel_install.Proof]] = []
    first_passes = [True]

    def fake(ctx: Context, arch: Arch, component: str, wheel: Path, generation: dict[str, str], base: float,
             lane: object, proof: wheel_install.Proof) -> tuple[Row, wheel_install.Proof]:
        given.append((wheel.name, proof))
        ok = first_passes[0] or wheel.name != "a"
        made = wheel_install.Proof(hashes=frozenset({f"sha-{wheel.name}"}), constrained=(1,),
                                   by=f"{wheel.name}'s") if ok else \
            wheel_install.Proof()
        return Row(component="g", arch=arch, check=Check.INSTALL, verdict=Verdict.PASS if ok else Verdict.FAIL,
                   reason=wheel.name), made

    monkeypatch.setattr(wheel_install, "install_one", fake)
    wheels = [Path("a"), Path("b"), Path("c")]
    rows = wheel_install.run(ctx, Arch.AMD64, "g", wheels, {}, 60)
    assert [r.reason for r in rows] == ["a", "b", "c"]
    assert given[0] == ("a", wheel_install.Proof())
    assert sorted(given[1:]) == [(n, wheel_install.Proof(hashes=frozenset({"sha-a"}), constrained=(1,),
                                                         by="a's")) for n in ("b", "c")]

    given.clear()
    first_passes[0] = False
    wheel_install.run(ctx, Arch.AMD64, "g", wheels, {}, 60)
    assert [proof for _, proof in given] == [wheel_install.Proof()] * 3

    given.clear()
    smoke = wheel_install.Proof(hashes=frozenset({"sha-smoke"}), constrained=(2,))
    wheel_install.run(ctx, Arch.RISCV64, "g", wheels, {}, 60)  # four profiles: only a smoke proves anything
    wheel_install.run(ctx, Arch.AMD64, "g", wheels, {}, 60, smoke)
    assert [proof for _, proof in given] == [wheel_install.Proof()] * 3 + [smoke] * 3
