"""The command-line layer: what tasks.py calls. Argument checks, printing and exit codes live here only."""
