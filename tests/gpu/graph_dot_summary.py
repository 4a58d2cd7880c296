"""Summarises the CUDA graphs written as Graphviz text (cudaGraphDebugDotPrint, through
torch's CUDAGraph.debug_dump) under a folder: per file its nodes by type, its edges, and its
kernel nodes by function and launch shape; then, per case, whether the torch worker's graphs
(worker-<op>-<m>x<n>-...) and the independent check's (check-<op>-<m>x<n>-...) hold the same
kinds of node and the same kernels. A diagnostic for issue 18 (scripts/gpu.sh replay-dumps):
which differences between two captures of the same calls are there to see.

    python3 graph_dot_summary.py DOTS_DIR

Exit 0 with a summary (also when files differ: that is the finding), 2 on bad usage or a
folder without .dot files.
"""
import collections
import os
import re
import sys

NODE_TYPES = ("KERNEL", "MEMCPY", "MEMSET", "HOST", "GRAPH", "EMPTY", "WAIT_EVENT", "EVENT_RECORD",
              "EXT_SEMAS_SIGNAL", "EXT_SEMAS_WAIT", "MEM_ALLOC", "MEM_FREE", "BATCH_MEM_OP",
              "CONDITIONAL")
NODE = re.compile(r'^\s*"?([\w.]+)"?\s*\[(.*)\]\s*;?\s*$', re.S)
LABEL = re.compile(r'label\s*=\s*"((?:[^"\\]|\\.)*)"', re.S)
FIELD = {"grid": re.compile(r"gridDim[^{(\d]*[{(]?\s*([\d\s,]+)"),
         "block": re.compile(r"blockDim[^{(\d]*[{(]?\s*([\d\s,]+)"),
         "shared": re.compile(r"sharedMem(?:Bytes)?[^\d]*(\d+)")}
FUNCTION = re.compile(r"(?:func|function|name)\W+([A-Za-z_][\w$.:<>]*)")


def statements(text):
    """The node and edge statements of a DOT text (';' or newline separated, brackets kept)."""
    out, depth, current = [], 0, []
    for ch in text:
        current.append(ch)
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch in ";\n" and depth == 0:
            out.append("".join(current).strip())
            current = []
    out.append("".join(current).strip())
    return [s for s in out if s]


def node_type(label):
    for word in re.findall(r"[A-Z_]{4,}", label):
        if word in NODE_TYPES:
            return word
    return "OTHER"


def launch(label):
    """(function, grid, block, shared) of a kernel node's label; None where absent."""
    fields = {k: (m.group(1).replace(" ", "").strip(",") if (m := r.search(label)) else None)
              for k, r in FIELD.items()}
    name = FUNCTION.search(label)
    return (name.group(1) if name else None, fields["grid"], fields["block"], fields["shared"])


def summarise(path):
    with open(path, errors="replace") as f:
        text = f.read()
    types, kernels, edges = collections.Counter(), collections.Counter(), 0
    for statement in statements(text):
        if "->" in statement:
            edges += 1
            continue
        node = NODE.match(statement)
        label = LABEL.search(statement) if node else None
        if label is None:
            continue
        kind = node_type(label.group(1))
        types[kind] += 1
        if kind == "KERNEL":
            kernels[launch(label.group(1))] += 1
    return types, kernels, edges


def case_of(name):
    """('worker' or 'check', '<op>-<m>x<n>') of a dump's file name, or None."""
    m = re.match(r"(worker|check)-([a-z_]+-\d+x\d+)-", name)
    return (m.group(1), m.group(2)) if m else None


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print(__doc__.strip().splitlines()[-4].strip(), file=sys.stderr)
        return 2
    files = sorted(os.path.join(d, f) for d, _, names in os.walk(argv[1]) for f in names
                   if f.endswith(".dot"))
    if not files:
        print(f"graph_dot_summary: no .dot files under {argv[1]}", file=sys.stderr)
        return 2
    by_case = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in files:
        types, kernels, edges = summarise(path)
        name = os.path.basename(path)
        print(f"{name}: {sum(types.values())} nodes ({', '.join(f'{t} {n}' for t, n in sorted(types.items()))}), "
              f"{edges} edges")
        for (function, grid, block, shared), count in sorted(kernels.items(), key=str):
            print(f"  {count} x {function} grid {grid} block {block} shared {shared}")
        side = case_of(name)
        if side:
            by_case[side[1]][side[0]].append((frozenset(types), frozenset(kernels)))
    for case, sides in sorted(by_case.items()):
        if "worker" not in sides or "check" not in sides:
            continue
        same_types = {t for t, _ in sides["worker"]} & {t for t, _ in sides["check"]}
        same_kernels = {k for _, k in sides["worker"]} & {k for _, k in sides["check"]}
        print(f"{case}: node kinds {'the same' if same_types else 'differ'}, kernels and launch "
              f"shapes {'the same' if same_kernels else 'differ'} (worker against check)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
