"""crosslane: cross-build native ML inference runtimes for amd64, arm64 and riscv64, and prove them."""

__version__ = "0.1.0"
