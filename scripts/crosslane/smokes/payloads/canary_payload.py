"""Imports the canary extension with the target's own CPython and reports what it computed.

stdlib only; runs inside the target. Ends with one line: CANARY-BIND OK|FAIL|ABSENT: ...
"""

import importlib.machinery
import json
import sys
import sysconfig


def main() -> int:
    print(f"PROVEN interpreter {sys.implementation.cache_tag} {sysconfig.get_platform()}")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    try:
        import canary  # type: ignore[import-not-found]
    except ImportError as exc:
        print(f"DEFECT import canary failed: {exc}")
        print(f"CANARY-BIND FAIL: import failed: {exc}")
        return 1
    loaded = getattr(canary, "__file__", "") or ""
    if not loaded.endswith(suffix):
        print(f"DEFECT loaded {loaded}, expected a file ending {suffix}")
        print(f"CANARY-BIND FAIL: extension suffix mismatch ({loaded})")
        return 1
    print(f"PROVEN loaded {loaded} with EXT_SUFFIX {suffix}")
    if suffix not in importlib.machinery.EXTENSION_SUFFIXES:
        print(f"UNPROVEN {suffix} not among {importlib.machinery.EXTENSION_SUFFIXES}")
    result = json.loads(canary.info())
    print(f"PROVEN canary.info() ran: {json.dumps(result)}")
    print(f"CANARY-BIND OK: {json.dumps(result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
