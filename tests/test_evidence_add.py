"""scripts/evidence-add.sh in a repository of its own (a copy of the script beside an empty
evidence/ folder, so nothing is written to this one): a run copied with its sources moved to the
store and its large results compressed; a bundle written as one archive that extracts to the
run's bytes and is the same bytes when written twice; bad input refused with exit 2; a failure
leaving no file and no folder behind."""
import filecmp
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts",
                      "evidence-add.sh")
SOURCE = b"extern \"C\" __global__ void tb_main() {}\n"


def make_run(root):
    """A device run's output: a results file naming one archived source, and a log."""
    digest = hashlib.sha256(SOURCE).hexdigest()
    os.makedirs(os.path.join(root, "case", "sources"))
    with open(os.path.join(root, "case", "sources", digest + ".cu"), "wb") as f:
        f.write(SOURCE)
    with open(os.path.join(root, "case", "results.json"), "w") as f:
        json.dump({"cases": [{"source_sha256": digest, "pad": "x" * 120000}]}, f)
    with open(os.path.join(root, "log.txt"), "w") as f:
        f.write("a log\n")
    return digest


class EvidenceAddTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = os.path.join(self.tmp.name, "repo")
        os.makedirs(os.path.join(self.repo, "scripts"))
        os.makedirs(os.path.join(self.repo, "evidence"))
        self.script = os.path.join(self.repo, "scripts", "evidence-add.sh")
        shutil.copy(SCRIPT, self.script)
        self.run_dir = os.path.join(self.tmp.name, "run")
        self.digest = make_run(self.run_dir)

    def tearDown(self):
        self.tmp.cleanup()

    def add(self, *args, env=None):
        return subprocess.run(["bash", self.script, *args], capture_output=True, text=True,
                              cwd=self.repo, env=env)

    def test_copy_moves_sources_to_the_store_and_compresses_results(self):
        r = self.add(self.run_dir, "evidence/new-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        dest = os.path.join(self.repo, "evidence", "new-run")
        with gzip.open(os.path.join(dest, "case", "results.json.gz"), "rb") as f:
            with open(os.path.join(self.run_dir, "case", "results.json"), "rb") as g:
                self.assertEqual(f.read(), g.read())
        self.assertFalse(os.path.exists(os.path.join(dest, "case", "sources")))
        with gzip.open(os.path.join(self.repo, "evidence", "sources", self.digest + ".cu.gz")) as f:
            self.assertEqual(f.read(), SOURCE)

    def test_bundle_extracts_to_the_run_and_is_deterministic(self):
        archives = []
        for name in ("one", "two"):
            r = self.add("--bundle", self.run_dir, f"evidence/campaign/{name}")
            self.assertEqual(r.returncode, 0, r.stderr)
            archives.append(os.path.join(self.repo, "evidence", "campaign", name + ".tar.xz"))
        out = os.path.join(self.tmp.name, "out")
        with tarfile.open(archives[0]) as tar:
            names = tar.getnames()
            tar.extractall(out)
        self.assertTrue(all(n == "one" or n.startswith("one/") for n in names), names)
        cmp = filecmp.dircmp(self.run_dir, os.path.join(out, "one"))
        self.assertEqual((cmp.left_only, cmp.right_only, cmp.diff_files), ([], [], []))
        self.assertTrue(filecmp.cmp(os.path.join(self.run_dir, "case", "results.json"),
                                    os.path.join(out, "one", "case", "results.json"), shallow=False))
        # the run's own sources stay inside, none go to the store
        self.assertFalse(os.path.exists(os.path.join(self.repo, "evidence", "sources")))
        # the same folder gives the same bytes, whatever the name of the archive's top folder
        with tarfile.open(archives[0]) as a, tarfile.open(archives[1]) as b:
            self.assertEqual([m.name.split("/", 1)[1:] for m in a.getmembers()],
                             [m.name.split("/", 1)[1:] for m in b.getmembers()])
        os.remove(archives[1])
        r = self.add("--bundle", self.run_dir, "evidence/campaign/one-again")
        self.assertEqual(r.returncode, 0, r.stderr)
        shutil.copy(archives[0], os.path.join(self.tmp.name, "first.tar.xz"))
        os.remove(archives[0])
        r = self.add("--bundle", self.run_dir, "evidence/campaign/one")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(filecmp.cmp(archives[0], os.path.join(self.tmp.name, "first.tar.xz"),
                                    shallow=False))

    def test_bad_input_exits_2(self):
        existing = os.path.join(self.repo, "evidence", "taken.tar.xz")
        open(existing, "w").close()
        os.symlink("log.txt", os.path.join(self.run_dir, "link"))
        for args in (["--bundle", self.run_dir, "evidence/taken"],  # an existing destination
                     ["--bundle", self.run_dir, "evidence/fresh"],  # a link in the run
                     ["--bundle", self.run_dir, "elsewhere/x"],
                     ["--bundle", os.path.join(self.tmp.name, "missing"), "evidence/x"],
                     ["--bundle", self.run_dir]):
            r = self.add(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertTrue(r.stderr.strip(), args)
        self.assertEqual(sorted(os.listdir(os.path.join(self.repo, "evidence"))), ["taken.tar.xz"])

    def test_failed_bundle_leaves_nothing(self):
        # an xz that fails: no archive, no temporary file, no folder made for it
        bin_dir = os.path.join(self.tmp.name, "bin")
        os.makedirs(bin_dir)
        with open(os.path.join(bin_dir, "xz"), "w") as f:
            f.write("#!/bin/sh\ncat >/dev/null\nexit 1\n")
        os.chmod(os.path.join(bin_dir, "xz"), 0o755)
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"])
        r = self.add("--bundle", self.run_dir, "evidence/new-name/sub", env=env)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(os.listdir(os.path.join(self.repo, "evidence")), [])


if __name__ == "__main__":
    unittest.main()
