"""Pinned sources: fetch and verify (git, archive, Debian source), extract safely, patch, copy per arch."""
