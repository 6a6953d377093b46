"""The target-side helpers, run in-process on the host: the bootstrap and bindkit (absent vs broken)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from crosslane.smokes.payloads import bindkit, bootstrap


def make_distribution(site: Path, name: str, body: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (site / name).mkdir()
    (site / name / "__init__.py").write_text(body)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("crosslane_fake_ok", "crosslane_fake_broken"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path


def test_not_installed_is_skip(site: Path) -> None:
    imported = bindkit.import_distribution("crosslane-fake-absent", "crosslane_fake_absent")
    assert (imported.state, imported.exit_code) == ("SKIP", 3)
    assert "not installed" in imported.reason


def test_installed_but_import_raises_is_fail_never_skip(site: Path) -> None:
    make_distribution(site, "crosslane_fake_broken", "raise ImportError('wrong ELF class: ELFCLASS32')\n")
    imported = bindkit.import_distribution("crosslane_fake_broken", "crosslane_fake_broken")
    assert (imported.state, imported.exit_code) == ("FAIL", 1)
    assert "installed but import crosslane_fake_broken raised ImportError: wrong ELF class" in imported.reason


def test_installed_and_importable_is_ok(site: Path) -> None:
    make_distribution(site, "crosslane_fake_ok", "VALUE = 1\n")
    imported = bindkit.import_distribution("crosslane_fake_ok", "crosslane_fake_ok")
    assert imported.state == "OK"
    assert imported.module is not None and imported.module.VALUE == 1


def test_require_prints_the_sentinel_when_broken(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_distribution(site, "crosslane_fake_broken", "raise OSError('cannot open shared object file')\n")
    assert bindkit.require("X", "crosslane_fake_broken", "crosslane_fake_broken") == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith("X-BIND FAIL: crosslane_fake_broken 1.0 is installed")


@pytest.mark.parametrize(("env", "words"), [
    ({}, "no payload was passed"),
    ({"CROSSLANE_PAYLOAD": "  \n"}, "is empty"),
    ({"CROSSLANE_PAYLOAD_FILE": "/nonexistent/p.py"}, "never arrived"),
], ids=["unset", "empty-text", "missing-file"])
def test_bootstrap_absent(env: dict[str, str], words: str, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    for key in ("CROSSLANE_PAYLOAD", "CROSSLANE_PAYLOAD_FILE"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert bootstrap.main(["X"]) == 4
    line = capsys.readouterr().out.strip()
    assert line.startswith("X-BIND ABSENT: ") and words in line


def test_bootstrap_empty_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.py").write_text("")
    monkeypatch.setenv("CROSSLANE_PAYLOAD_FILE", str(tmp_path / "p.py"))
    assert bootstrap.main(["X"]) == 4
    assert "is empty" in capsys.readouterr().out


def test_bootstrap_runs_text_with_args_and_exit_code(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("CROSSLANE_PAYLOAD_FILE", raising=False)
    monkeypatch.setenv("CROSSLANE_PAYLOAD", "import sys\nprint('X-BIND OK:', sys.argv[1:], __name__)\n"
                                            "sys.exit(0 if __name__ == '__main__' else 1)\n")
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    with pytest.raises(SystemExit) as stopped:
        bootstrap.main(["X", "a", "b"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.strip() == "X-BIND OK: ['a', 'b'] __main__"
