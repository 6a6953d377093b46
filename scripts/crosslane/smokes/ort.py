"""The ONNX Runtime smoke: real graphs on the CPU provider on every CPU profile, against the amd64 control.

The models are made on the host (ort_models) and handed to payloads/ort_payload.py; the "add" output must
equal the control's exactly, the "mlp" output within a relative 1e-5 (absolute 1e-6 near zero): MLAS
kernels may sum in another order on another ISA or vector length.
"""

from __future__ import annotations

from collections.abc import Sequence

from crosslane.archs import CONTROL_ARCH, Arch
from crosslane.config import Profile
from crosslane.context import Context
from crosslane.report import Row
from crosslane.smokes import contract_call, ort_models, payload
from crosslane.smokes.compare import EXACT, Tolerance

TOLERANCES = {"add": EXACT, "mlp": Tolerance(rel=1e-5, abs=1e-6)}
DEFAULT_TIMEOUT = 60.0


def smoke(ctx: Context, arch: Arch, component: str, profiles: Sequence[Profile]) -> list[Row]:
    spec = ctx.config.components[component].smoke
    base = spec.timeout if spec else DEFAULT_TIMEOUT
    models = ort_models.write(ctx.build_root / "models" / "ort")
    program = payload.Payload.builtin("ort_payload", "ORT", env={"ORT_MODELS_DIR": str(models)})
    control_cfg = ctx.config.arches[CONTROL_ARCH]
    control_profile = control_cfg.profile(control_cfg.default_profile)
    jobs = [(arch, p) for p in profiles]
    if arch is not CONTROL_ARCH or control_profile not in profiles:
        jobs.insert(0, (CONTROL_ARCH, control_profile))
    attempts = payload.run_jobs(ctx, jobs, program, base_timeout=base)
    control = next(a for a in attempts if a.arch is CONTROL_ARCH and a.profile == control_profile)
    mine = [a for a in attempts if a.arch is arch]
    rows = [payload.row(component, a, "ort") for a in mine]
    if arch is not CONTROL_ARCH:
        rows.insert(0, payload.row(component, control, "ort", control=True))
    return rows + payload.parity(ctx, component, mine, control, TOLERANCES)


run = contract_call(smoke)  # the contract's call (registry.SMOKES)
