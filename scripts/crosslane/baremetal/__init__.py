"""Bare-metal RISC-V targets: programs without an OS, built in a tool root and run by qemu-system."""
