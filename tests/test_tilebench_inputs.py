"""tests/gpu/tilebench_inputs.py: tilebench's inputs regenerated from
docs/inputs.md. Its exact implementation gives the known answers that
tests/test_inputs.c checks the C generator against (so the text, the C and
this port agree), and its torch port gives, element for element, what the
exact one does, on whole tensors of several roles and shapes (run with
TILEBENCH_PYTHON, a python with PyTorch; skipped without one)."""
import os
import struct
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "gpu"))
import tilebench_inputs  # noqa: E402

# the known answers of tests/test_inputs.c (generator_matches_its_documentation)
KNOWN = [((1, "x", 100, 100, 0), "403199d4"), ((1, "x", 100, 100, 9999), "bfe9cf94"),
         ((7, "weight", 8, 65536, 65535), "3f4d0612"), ((123456789, "bias", 3, 5, 4), "3e780100")]

PORT_CHECK = r"""
import sys, torch
sys.path.insert(0, sys.argv[1])
import tilebench_inputs as ti
for seed, role, m, n, rows, cols in [(1, "x", 100, 100, 100, 100), (7, "weight", 8, 65536, 1, 65536),
                                     (1, "b", 17, 257, 17, 257), (2**63 + 5, "bias", 3, 5, 1, 5)]:
    t = ti.values(torch, seed, role, m, n, rows, cols, "cpu")
    assert t.shape == (rows, cols) and t.dtype == torch.float32
    ti.verify(t, seed, role, m, n, samples=4000)
t = ti.values(torch, 1, "x", 100, 100, 100, 100, "cpu")
t[3, 7] += 1.0
try:
    ti.verify(t, 1, "x", 100, 100, samples=100000)
except ValueError as e:
    assert "element 307" in str(e), e
else:
    raise AssertionError("a changed element passed verify")
print("port ok")
"""


class TilebenchInputsTest(unittest.TestCase):
    def test_exact_implementation_gives_the_known_answers(self):
        for args, bits in KNOWN:
            value = tilebench_inputs.value_exact(*args)
            self.assertEqual(struct.pack(">f", value).hex(), bits, args)

    def test_ranges_are_the_documented_ones(self):
        for role, (lo, hi) in (("x", (-4.0, 4.0)), ("b", (-4.0, 4.0)), ("weight", (0.5, 1.5)),
                               ("bias", (-0.5, 0.5))):
            values = [tilebench_inputs.value_exact(3, role, 9, 11, k) for k in range(99)]
            self.assertTrue(all(lo <= v < hi for v in values), role)

    def test_torch_port_matches_the_exact_implementation(self):
        python = os.environ.get("TILEBENCH_PYTHON", "python3")
        if subprocess.run([python, "-c", "import torch"], capture_output=True).returncode != 0:
            self.skipTest(f"{python} has no PyTorch")
        r = subprocess.run([python, "-c", PORT_CHECK, os.path.join(HERE, "gpu")],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("port ok", r.stdout)


if __name__ == "__main__":
    unittest.main()
