"""One process's gateway state: the runtime and its loops, the registry snapshot, settings, last
errors, the upstream connector. No Django."""
