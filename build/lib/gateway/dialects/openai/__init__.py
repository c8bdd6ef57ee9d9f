"""Chat completions, completions and embeddings: passed through, usage read on the way."""
