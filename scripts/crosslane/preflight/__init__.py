"""The doctor: every prerequisite of a build or smoke checked at once (doctor.py), one registry of checks."""
