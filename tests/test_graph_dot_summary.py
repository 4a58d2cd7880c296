"""tests/gpu/graph_dot_summary.py on Graphviz text in the layout cudaGraphDebugDotPrint writes
(a cluster per graph, a record label per node naming its type, kernels with their function and
launch shape): nodes counted by type, kernels by launch shape, a worker's and a check's capture
of one case compared; bad usage exits 2."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu", "graph_dot_summary.py")


def kernel(i, grid):
    return (f'"graph_1_node_{i}"[style="solid" shape="record" label="{{{i}\\nKERNEL\\n| '
            f'{{ID | node handle}} | {{func | triton_red_fused_0}} | {{gridDim | {{{grid}, 1, 1}}}} | '
            f'{{blockDim | {{256, 1, 1}}}} | {{sharedMemBytes | 0}}}}"];\n')


def dot(nodes, memset=False):
    body = "".join(kernel(i, grid) for i, grid in enumerate(nodes))
    if memset:
        body += '"graph_1_node_9"[style="solid" shape="record" label="{9\\nMEMSET\\n| {value | 0}}"];\n'
    edges = "".join(f'"graph_1_node_{i}" -> "graph_1_node_{i + 1}";\n' for i in range(len(nodes) - 1))
    return 'digraph dot {\nsubgraph cluster_1 {\nlabel="graph_1"\n' + body + edges + "}\n}\n"


class GraphDotSummaryTest(unittest.TestCase):
    def run_on(self, files):
        with tempfile.TemporaryDirectory() as tmp:
            for name, text in files.items():
                with open(os.path.join(tmp, name), "w") as f:
                    f.write(text)
            return subprocess.run([sys.executable, SCRIPT, tmp], capture_output=True, text=True)

    def test_counts_and_comparison(self):
        r = self.run_on({"worker-softmax-8x65536-64-0.dot": dot([8, 8, 32]),
                         "check-softmax-8x65536-kept-64.dot": dot([8, 8, 32], memset=True)})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("worker-softmax-8x65536-64-0.dot: 3 nodes (KERNEL 3), 2 edges", r.stdout)
        self.assertIn("check-softmax-8x65536-kept-64.dot: 4 nodes (KERNEL 3, MEMSET 1), 2 edges", r.stdout)
        self.assertIn("2 x triton_red_fused_0 grid 8,1,1 block 256,1,1 shared 0", r.stdout)
        self.assertIn("softmax-8x65536: node kinds differ, kernels and launch shapes the same", r.stdout)

    def test_other_launch_shapes_differ(self):
        r = self.run_on({"worker-layernorm-1024x1024-64-0.dot": dot([1024]),
                         "check-layernorm-1024x1024-kept-64.dot": dot([512])})
        self.assertIn("layernorm-1024x1024: node kinds the same, kernels and launch shapes differ",
                      r.stdout)

    def test_bad_usage_exits_2(self):
        self.assertEqual(self.run_on({}).returncode, 2)  # a folder without .dot files
        r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()
