"""tilebench's PyTorch worker (see docs/torch-worker.md)."""
