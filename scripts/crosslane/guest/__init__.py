"""The target: Debian sysroots, qemu-user and its guest root, the target CPython and its site-packages."""
