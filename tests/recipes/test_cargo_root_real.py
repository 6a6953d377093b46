"""The tool root's cargo for real (slow tier: the root is ~2.6 GB, made once and cached): a crate whose build
script compiles, links and runs a C program on the build machine (as cc-rs build scripts do), cross-built
offline for riscv64 through the same wrapper Corrosion gets. The HOST-LINK LEAK guard is shown to matter: with
the target's paths left in the environment (CPATH and LIBRARY_PATH into the riscv64 sysroot) the host build
script's compile picks the target's headers and fails (riscv64's bits/ types); with the runner unsetting
HOST_LEAK_VARS, as a Rust component's build steps do, it builds and runs."""

from __future__ import annotations

import io
from pathlib import Path
from typing import NoReturn

import pytest

from crosslane.archs import Arch, host_arch, info
from crosslane.config import Config
from crosslane.context import Context
from crosslane.files.paths import cache_dir
from crosslane.host import toolroot
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.recipes import cargo_root
from crosslane.recipes.crosswire import HOST_LEAK_VARS

pytestmark = [pytest.mark.slow, pytest.mark.cross, pytest.mark.network]


@pytest.fixture(scope="module")
def root(cfg: Config) -> toolroot.ToolRoot:
    return toolroot.ensure(Runner(Log()), cfg.toolroots["rust"])


BUILD_SCRIPT = r"""use std::process::Command;
fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    std::fs::write(format!("{out}/probe.c"), "#include <stdio.h>\nint main(void) { return puts(\"host\") < 0; }\n")
        .unwrap();
    let built = Command::new("cc").arg(format!("{out}/probe.c")).arg("-o").arg(format!("{out}/probe")).status();
    assert!(built.unwrap().success(), "the host compile and link of probe.c failed");
    assert!(Command::new(format!("{out}/probe")).status().unwrap().success(), "probe did not run");
}
"""


def crate(folder: Path) -> Path:
    (folder / "src").mkdir(parents=True)
    (folder / "Cargo.toml").write_text('[package]\nname = "leak"\nversion = "0.1.0"\nedition = "2021"\n'
                                       '[lib]\ncrate-type = ["staticlib"]\n')
    (folder / "build.rs").write_text(BUILD_SCRIPT)
    (folder / "src/lib.rs").write_text('#[no_mangle]\npub extern "C" fn leak_answer() -> u32 { 42 }\n')
    return folder


def test_cargo_in_the_root_cross_builds_and_the_leak_guard_is_real(root: toolroot.ToolRoot, cfg: Config,
                                                                   sysroots: object, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    host = host_arch()
    assert host is not None
    mode = toolroot.entry_mode(Runner(Log(io.StringIO())))
    assert mode is not None
    cargo = tmp_path / "cargo"
    cargo.write_text(cargo_root.wrapper(root, "cargo", (tmp_path, cache_dir()), mode, host))
    cargo.chmod(0o755)
    target = Context(cfg, Runner(Log(io.StringIO()))).sysroot(Arch.RISCV64).path
    project = crate(tmp_path / "leak")
    home = tmp_path / "cargo-home"
    home.mkdir()
    (home / "config.toml").write_text(cargo_root.CARGO_CONFIG)
    # What a cross shell leaves in the environment crosslane is started from.
    monkeypatch.setenv("CPATH", f"{target}/usr/include/riscv64-linux-gnu:{target}/usr/include")
    monkeypatch.setenv("LIBRARY_PATH", str(target / "usr/lib/riscv64-linux-gnu"))
    env = {"CARGO_HOME": str(home), "CARGO_NET_OFFLINE": "true"}
    argv = [str(cargo), "build", "--offline", "--release", "--target", "riscv64gc-unknown-linux-gnu",
            "--manifest-path", str(project / "Cargo.toml"), "--target-dir", str(tmp_path / "target")]
    runner = Runner(Log(io.StringIO()))
    leaked = runner.run(argv, cwd=tmp_path, env=env, check=False, timeout=600)
    assert not leaked.ok and f"{target}/usr/include" in leaked.output, leaked.output[-2000:]  # the target's headers
    guarded = runner.run(argv, cwd=tmp_path, env=env, unset=HOST_LEAK_VARS, check=False, timeout=600)
    assert guarded.ok, guarded.output[-2000:]
    library = tmp_path / "target/riscv64gc-unknown-linux-gnu/release/libleak.a"
    assert library.is_file() and b"leak_answer" in library.read_bytes()


def test_the_std_probe_reads_the_real_root(root: toolroot.ToolRoot, cfg: Config) -> None:
    from crosslane.features.probes import Probes

    def no_compiler(component: str, arch: Arch) -> NoReturn:
        raise AssertionError("the std probe needs no compiler")

    probes = Probes(Runner(Log(io.StringIO())), cfg, no_compiler)
    for arch in Arch:
        found = probes.root_std("rust", info(arch).rust_target)
        assert found.state == "present", found


def test_a_crate_the_root_lacks_fails_offline_naming_it(root: toolroot.ToolRoot, tmp_path: Path) -> None:
    """Offline and against Debian's crates only: a dependency no package provides is an error naming it, never a
    download."""
    host = host_arch()
    assert host is not None
    mode = toolroot.entry_mode(Runner(Log(io.StringIO())))
    assert mode is not None
    cargo = tmp_path / "cargo"
    cargo.write_text(cargo_root.wrapper(root, "cargo", (tmp_path,), mode, host))
    cargo.chmod(0o755)
    project = crate(tmp_path / "wants")
    with (project / "Cargo.toml").open("a") as manifest:
        manifest.write('[dependencies]\ncrosslane-no-such-crate = "1"\n')
    home = tmp_path / "cargo-home"
    home.mkdir()
    (home / "config.toml").write_text(cargo_root.CARGO_CONFIG)
    done = Runner(Log(io.StringIO())).run(
        [str(cargo), "build", "--offline", "--manifest-path", str(project / "Cargo.toml"), "--target-dir",
         str(tmp_path / "target")], cwd=tmp_path, env={"CARGO_HOME": str(home), "CARGO_NET_OFFLINE": "true"},
        check=False, timeout=300)
    assert not done.ok and "crosslane-no-such-crate" in done.output, done.output[-1500:]
