"""Smokes by kind (versions.toml `smoke.kind`): each is a kind of the one contract, `run(request) -> Outcome[None]`.

The registry names the module attribute; the smoke's module is imported only when a run uses it. A run that gives
no row gave no verdict: that is a FAIL, never a pass by silence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from crosslane import contract
from crosslane.contract import Outcome, Request
from crosslane.registry import Registry
from crosslane.report import Check, Row, Verdict

if TYPE_CHECKING:
    from crosslane.archs import Arch
    from crosslane.config import Profile
    from crosslane.context import Context

# A built-in smoke's own function: its rows for a component on an arch's profiles (what tests and bench call).
Smoke = Callable[["Context", "Arch", str, "Sequence[Profile]"], "Sequence[Row]"]


def contract_call(smoke: Smoke) -> Callable[[Request], Outcome[None]]:
    """*smoke* as the contract's call (registry.SMOKES names it): the request's context, arch, component, profiles."""
    def run(request: Request) -> Outcome[None]:
        return contract.rows(smoke(request.ctx, request.arch, request.component, request.profiles))
    return run


def run(registry: Registry, kind: str, request: Request) -> list[Row]:
    """The rows of the request's component's smoke of *kind*, through the contract (contract.run); no row at all is
    one FAIL row."""
    found = contract.run(registry, kind, request, type(None)).rows
    if not found:
        return [Row(component=request.component, arch=request.arch, check=Check.SMOKE, verdict=Verdict.FAIL,
                    reason=f"smoke kind '{kind}' produced no verdict (its run returned no row)")]
    return list(found)
