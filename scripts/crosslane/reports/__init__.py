"""A run's build report (build: written from the run's stamps, manifests and rows) and what changed between two
(diff: `invoke report-diff`). The rows are report.py's, in the bottom layer: every stage makes them."""
