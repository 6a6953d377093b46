"""Policy over a run's results: lane toggles, ARCH-PARITY, floors, and the consistency lint."""
