"""A run: its plan (data), the dry run's outline, its execution (pipeline, smokes beside builds),
rebuilds compared bit for bit, and packs of built components for CI."""
