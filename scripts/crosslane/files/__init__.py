"""Files crosslane reads and writes: where they live, writes that are all or nothing, reads bounded
against hostile input, input-keyed stamps and the per-arch lock."""
