"""invoke's own argument errors routed to crosslane's one line and exit 2 (cli/invoke_errors.py), in this process
on a real invoke Program (the hostile suite runs the same through `invoke` processes)."""

from __future__ import annotations

import pytest
from invoke.collection import Collection
from invoke.program import Program
from invoke.tasks import task

from crosslane.cli import invoke_errors


@task
def smoke(c: object, cpu: str = "") -> None:
    """A task with a flag that takes a value."""


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    invoke_errors.route_parse_errors()
    invoke_errors.route_parse_errors()  # idempotent: routed once, not wrapped twice
    with pytest.raises(SystemExit) as exited:
        Program(namespace=Collection(smoke)).run(["invoke", *argv])
    code = exited.value.code
    return code if isinstance(code, int) else -1, capsys.readouterr().err


def test_a_flag_without_its_value(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    code, err = run(["smoke", "--cpu"], capsys)
    assert code == 2
    assert err.strip() == ("crosslane: error: invoke smoke: Flag '--cpu' needed value and was not given one!; "
                           "see invoke --help smoke")


def test_an_unknown_flag_under_github_actions(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, err = run(["smoke", "--no-such"], capsys)
    assert code == 2 and err.startswith("::error::invoke smoke: No idea what '--no-such' is!")
    assert err.count("\n") == 1
