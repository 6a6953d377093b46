"""An artifact's papers: what it is made of (inventory), the licence texts of every part (licences), its SBOM
(sbom, CycloneDX 1.6), its build provenance (provenance, in-toto/SLSA v1), a wheel's final bytes (wheel) and an
install folder's (folder), and the PEP 503 index a board installs the wheels from (index)."""
