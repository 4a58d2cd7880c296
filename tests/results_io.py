"""A run's results file, as the tests and the GPU scripts read it: results.json, or the
results.json.gz that committed evidence keeps (evidence/STORAGE.md); and the committed
archives of runs (<run>/<sub>.tar.xz), extracted safely."""
import gzip
import json
import os
import tarfile


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


def extract_plainly(tar, target, members=None):
    """Extracts an evidence archive of plain files and folders only (all of it, or `members`),
    every path inside target (Python's "data" filter where it has one; the same refusals by
    hand where it does not)."""
    for member in tar.getmembers() if members is None else members:
        path = os.path.normpath(member.name)
        outside = os.path.isabs(path) or path == ".." or path.startswith(".." + os.sep)
        if not (member.isfile() or member.isdir()) or outside:
            raise ValueError(f"{member.name}: not a plain file or folder inside the archive")
    if hasattr(tarfile, "data_filter"):
        tar.extractall(target, members=members, filter="data")
    else:
        tar.extractall(target, members=members)
