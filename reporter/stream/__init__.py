"""Audits of traces larger than memory: batches, streaming reductions and sketches."""
