"""The build machine: host packages, pinned build tools, cross compilers, cached probes and their rules."""
