"""What the host and its toolchains can do (probes, each fact once) and what that decides (rules, pure)."""
