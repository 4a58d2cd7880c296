"""tests/fuzz/make_corpus.py, the writer of the fuzz targets' seed corpora and dictionaries,
run with --out into a temporary folder (the committed corpus is left as it is): it finds every
source and evidence file it reads, writes seeds for each target the committed corpus has, and
refuses a folder that is not empty.
Run by CTest with TB_BINARY (the tilebench executable)."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "fuzz", "make_corpus.py")
COMMITTED = os.path.join(HERE, "fuzz", "corpus")


def make(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class MakeCorpusTest(unittest.TestCase):
    def test_writes_every_target_and_dictionary(self):
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
            with open(os.path.join(tmp, "options.dict")) as f:
                self.assertIn('"calibrated-2"', f.read().split("\n"))
            with open(os.path.join(tmp, "results.dict")) as f:
                tokens = f.read()
            for key in ("cases", "execution_plans", "per_call_ns"):  # read by load.c, model.c
                self.assertIn('"\\"%s\\""' % key, tokens.split("\n"))  # the key with its quotes
        self.assertTrue(os.listdir(COMMITTED))  # untouched

    def test_refuses_a_folder_with_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            open(os.path.join(tmp, "keep"), "w").close()
            r = make(os.environ["TB_BINARY"], "--out", tmp)
            self.assertEqual(r.returncode, 2)
            self.assertIn("--out", r.stderr)
            self.assertEqual(os.listdir(tmp), ["keep"])


if __name__ == "__main__":
    unittest.main()
