"""tests/fuzz/make_corpus.py, the writer of the fuzz targets' seed corpora and dictionaries,
run with --out into a temporary folder (the committed corpus is left as it is): it finds every
source and evidence file it reads, writes seeds for each target the committed corpus has, and
refuses a folder that is not empty.
Run by CTest with TB_BINARY (the tilebench executable)."""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "fuzz", "make_corpus.py")
COMMITTED = os.path.join(HERE, "fuzz", "corpus")


def digest(folder):
    """One SHA-256 over every file's path and bytes below folder."""
    h = hashlib.sha256()
    for d, _, files in sorted(os.walk(folder)):
        for f in sorted(files):
            path = os.path.join(d, f)
            h.update(os.path.relpath(path, folder).encode())
            with open(path, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def make(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class MakeCorpusTest(unittest.TestCase):
    def test_writes_every_target_and_dictionary(self):
        committed = digest(os.path.dirname(COMMITTED))
        with tempfile.TemporaryDirectory() as tmp:
            r = make(os.environ["TB_BINARY"], "--out", tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            written = sorted(os.listdir(os.path.join(tmp, "corpus")))
            self.assertEqual(written, sorted(os.listdir(COMMITTED)))
            for target in written:
                self.assertGreater(len(os.listdir(os.path.join(tmp, "corpus", target))), 3, target)
            seeds = os.listdir(os.path.join(tmp, "corpus", "fuzz_results"))
            for name in ("cpu_run.json", "cpu_replay.json", "cpu_frozen.json", "gpu_torch.json",
                         "gpu_gemm.json", "gpu_small_k.json", "gpu_gemv.json"):
                self.assertIn(name, seeds)
                with open(os.path.join(tmp, "corpus", "fuzz_results", name)) as f:
                    self.assertTrue(json.load(f)["cases"], name)  # the filter kept some
            with open(os.path.join(tmp, "options.dict")) as f:
                self.assertIn('"calibrated-2"', f.read().split("\n"))
            with open(os.path.join(tmp, "results.dict")) as f:
                tokens = f.read()
            for key in ("cases", "execution_plans", "per_call_ns"):  # read by load.c, model.c
                self.assertIn('"\\"%s\\""' % key, tokens.split("\n"))  # the key with its quotes
        self.assertEqual(digest(os.path.dirname(COMMITTED)), committed)  # left as it was

    def test_refuses_a_folder_with_files_or_a_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            keep = os.path.join(tmp, "keep")
            open(keep, "w").close()
            for out in (tmp, keep):
                r = make(os.environ["TB_BINARY"], "--out", out)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("--out needs a new or empty folder", r.stderr)
            self.assertEqual(os.listdir(tmp), ["keep"])


if __name__ == "__main__":
    unittest.main()
