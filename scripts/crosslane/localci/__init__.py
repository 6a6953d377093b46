"""The workflow run by a real Actions engine on this machine (`invoke actions`, `nox -s actions`).

act (nektos/act) runs .github/workflows/ci.yml in host mode without GitHub (PyPI, the Debian archive and npm's
registry for a rebuilt bundle):
the actions the workflow pins are staged like every git source (pins.py, staging.py), the runner's tool cache
and event payloads are made here (runnerenv.py), and each leg — one act run of one job with what it needs —
is judged from act's JSON log, job by job and step by step (actlog.py, legs.py, check.py).
"""
