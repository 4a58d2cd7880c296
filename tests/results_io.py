"""A run's results file, as the tests and the GPU scripts read it: results.json, or the
results.json.gz that committed evidence keeps (evidence/STORAGE.md)."""
import gzip
import json
import os


def load_results(run_dir, missing_ok=False):
    """The results document of run_dir; None when it has none and missing_ok, else
    FileNotFoundError naming the folder."""
    for name in ("results.json", "results.json.gz"):
        path = os.path.join(run_dir, name)
        if os.path.exists(path):
            with (gzip.open(path, "rt") if name.endswith(".gz") else open(path)) as f:
                return json.load(f)
    if missing_ok:
        return None
    raise FileNotFoundError(f"no results.json or results.json.gz in {run_dir}")
