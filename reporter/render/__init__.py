"""Renderers: a verdict in, a document out. Only the CLI decides where documents go."""
