"""`invoke verify` vs `auditwheel show` on the onnxruntime-genai 0.18.0 aarch64 wheel (bench/run.py picks it up).

Needs auditwheel (the `bench` extra). Goal: verify >= 5x faster, i.e. ratio verify/auditwheel <= 0.2.
"""

from __future__ import annotations

import shutil

from common import Measure
from verify_vs_auditwheel import measure


def run_bench() -> list[Measure]:
    if shutil.which("auditwheel") is None:
        print("verify vs auditwheel: skipped (auditwheel not installed; pip install -e '.[bench]')")
        return []
    t = measure()
    return [Measure("invoke verify vs auditwheel show, processes (onnxruntime-genai 0.18.0 aarch64)",
                    t.verify_cli, t.auditwheel_show, "s", "ratio <= 0.2"),
            Measure("crosslane.verify in-process vs auditwheel show process", t.verify_in_process,
                    t.auditwheel_show, "s", "ratio <= 0.2")]
