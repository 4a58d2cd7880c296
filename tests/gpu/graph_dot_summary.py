"""Summarises the CUDA graphs written as Graphviz text (cudaGraphDebugDotPrint, through
torch's CUDAGraph.debug_dump) under a folder: per file its nodes by type, its edges, and its
kernel nodes by function and launch shape (grid, block, dynamic shared bytes) with the launch
sequence in topological order; then, per case, whether the torch worker's graphs
(worker-<op>-<m>x<n>-...) and the independent check's (check-<op>-<m>x<n>-<mode>-...) hold the
same kinds of node, the same kernels with the same launch shapes, in the same order. Where the
captures left <name>-addresses.json beside their .dot files (the worker under
TILEBENCH_TORCH_GRAPH_DUMP, tests/gpu/graph_replay_check.py under TB_CHECK_GRAPH_DUMP), the
output addresses of each graph's calls are set side by side. A diagnostic for issue 18
(scripts/gpu.sh replay-dumps): which differences between two captures of the same calls are
there to see.

    python3 graph_dot_summary.py DOTS_DIR

The label of a kernel node, as the CUDA runtime writes it (one record; `\\<` escaped):

    "graph_1_node_0"[style="bold" shape="record" label="{KERNEL
    | {ID | 0 (topoId: 63) | triton_per_fused_..._0\\<\\<\\<1024,32,0\\>\\>\\>}
    | {{node handle | func handle} | {0x00000000297E6C70 | 0x00000000290E8950}}
    | {accessPolicyWindow | {base_ptr | num_bytes | ...} | {0x0000000000000000 | 0 | ...}}
    | {cooperative | 0}
    | {priority | 0}
    }"];
    "graph_1_node_0" -> "graph_1_node_1" [headlabel=0];

Exit 0 with a summary (also when files differ: that is the finding), 2 on bad usage or a
folder without .dot files.
"""
import collections
import json
import os
import re
import sys

NODE_TYPES = ("KERNEL", "MEMCPY", "MEMSET", "HOST", "GRAPH", "EMPTY", "WAIT_EVENT", "EVENT_RECORD",
              "EXT_SEMAS_SIGNAL", "EXT_SEMAS_WAIT", "MEM_ALLOC", "MEM_FREE", "BATCH_MEM_OP",
              "CONDITIONAL")
QUOTED = r'"(?:[^"\\]|\\.)*"'
ID = rf'(?:{QUOTED}|[\w.]+)'
ATTRS = rf'\[(?:[^\]"]|{QUOTED})*\]'
# An edge statement (its attributes, if any, consumed with it) or a node statement; scanned
# left to right, so an edge's second node is never taken for a node statement.
STATEMENT = re.compile(rf'(?P<a>{ID})\s*->\s*(?P<b>{ID})\s*(?:{ATTRS})?|(?P<node>{ID})\s*(?P<attrs>{ATTRS})',
                       re.S)
LABEL = re.compile(r'label\s*=\s*"((?:[^"\\]|\\.)*)"', re.S)
TOPO = re.compile(r"ID\s*\|\s*(\d+)\s*\(topoId:\s*(\d+)\)")
# name<<<grid,block,shared>>>, the angle brackets escaped for the record label
LAUNCH = re.compile(r"\|\s*([^|{}]*?)\s*\\?<\\?<\\?<(.*?)\\?>\\?>\\?>", re.S)
HANDLES = re.compile(r"\{\{\s*node handle\s*\|\s*func handle\s*\}\s*\|\s*\{\s*(0x[0-9A-Fa-f]+)\s*\|"
                     r"\s*(0x[0-9A-Fa-f]+)\s*\}\}")
NODE_HANDLE = re.compile(r"node handle\W+(0x[0-9A-Fa-f]+)")


def unquote(name):
    return name[1:-1] if name.startswith('"') else name


def node_type(label):
    first = re.match(r"\s*\{?\s*([A-Z_]+)", label)
    if first and first.group(1) in NODE_TYPES:
        return first.group(1)
    for word in re.findall(r"[A-Z_]{4,}", label):
        if word in NODE_TYPES:
            return word
    return "OTHER"


def launch_args(text):
    """'1024,32,0' or '(8,2,1),(256,1,1),0' -> ('1024', '32', '0') / ('8,2,1', '256,1,1', '0'):
    grid, block, dynamic shared bytes; None each where the text is not three fields."""
    fields, depth, current = [], 0, []
    for ch in text.replace(" ", ""):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == "," and depth == 0:
            fields.append("".join(current))
            current = []
            continue
        current.append(ch)
    fields.append("".join(current))
    fields = [f.strip("(){}[]") for f in fields]
    return tuple(fields) if len(fields) == 3 else (None, None, None)


def parse_node(name, label):
    """A node's facts from its record label: type, ID, topoId, kernel function and launch
    shape, node and function handles (None where absent)."""
    kind = node_type(label)
    node = {"name": name, "type": kind, "id": None, "topo": None, "function": None,
            "grid": None, "block": None, "shared": None, "node_handle": None, "func_handle": None}
    if (m := TOPO.search(label)):
        node["id"], node["topo"] = int(m.group(1)), int(m.group(2))
    if (m := HANDLES.search(label)):
        node["node_handle"], node["func_handle"] = m.group(1), m.group(2)
    elif (m := NODE_HANDLE.search(label)):
        node["node_handle"] = m.group(1)
    if kind == "KERNEL" and (m := LAUNCH.search(label)):
        node["function"] = m.group(1)
        node["grid"], node["block"], node["shared"] = launch_args(m.group(2))
    return node


def parse(text):
    """(nodes by name in file order, edges as (from, to)) of a DOT text."""
    nodes, edges = {}, []
    for m in STATEMENT.finditer(text):
        if m.group("a") is not None:
            edges.append((unquote(m.group("a")), unquote(m.group("b"))))
            continue
        label = LABEL.search(m.group("attrs"))
        if label is None:  # graph[style=...] and other attribute statements
            continue
        name = unquote(m.group("node"))
        nodes[name] = parse_node(name, label.group(1))
    return nodes, edges


def topological(nodes, edges):
    """Node names in a topological order (Kahn's; ties by ID, then file order), and the
    shape of the dependencies: 'a chain' when each node but the first waits on the one before."""
    order_key = {name: (n["id"] if n["id"] is not None else i, i)
                 for i, (name, n) in enumerate(nodes.items())}
    preds = collections.defaultdict(set)
    succs = collections.defaultdict(set)
    for a, b in edges:
        if a in nodes and b in nodes:
            preds[b].add(a)
            succs[a].add(b)
    waiting = {name: len(preds[name]) for name in nodes}
    ready = sorted((name for name, k in waiting.items() if k == 0), key=order_key.get)
    order = []
    while ready:
        name = ready.pop(0)
        order.append(name)
        for b in succs[name]:
            waiting[b] -= 1
            if waiting[b] == 0:
                ready.append(b)
        ready.sort(key=order_key.get)
    if len(order) < len(nodes):  # a cycle: cannot be a CUDA graph; keep the file order
        order += [name for name in nodes if name not in order]
    chain = (sum(len(v) for v in preds.values()) == max(0, len(order) - 1)
             and all(preds[b] == {a} for a, b in zip(order, order[1:])))
    return order, ("a chain" if chain else "not a chain")


def shape(node):
    return (node["function"], node["grid"], node["block"], node["shared"])


def period(sequence):
    """The shortest p such that the sequence is its first p items repeated (a call's kernels)."""
    for p in range(1, len(sequence) + 1):
        if len(sequence) % p == 0 and sequence == sequence[:p] * (len(sequence) // p):
            return p
    return len(sequence)


def summarise(path):
    with open(path, errors="replace") as f:
        nodes, edges = parse(f.read())
    order, dependencies = topological(nodes, edges)
    types = collections.Counter(n["type"] for n in nodes.values())
    kernels = collections.Counter(shape(n) for n in nodes.values() if n["type"] == "KERNEL")
    sequence = [shape(nodes[name]) if nodes[name]["type"] == "KERNEL" else (nodes[name]["type"],)
                for name in order]
    handles = collections.defaultdict(set)
    for n in nodes.values():
        if n["type"] == "KERNEL":
            handles[n["function"]].add(n["func_handle"])
    topo = sorted(n["topo"] for n in nodes.values() if n["topo"] is not None)
    return {"types": types, "kernels": kernels, "edges": len(edges), "dependencies": dependencies,
            "sequence": sequence, "func_handles": handles,
            "topo_ids": (f"topoId {topo[0]}..{topo[-1]}" if topo else "no topoId"),
            "node_handles": len({n["node_handle"] for n in nodes.values() if n["node_handle"]})}


def case_of(name):
    """('worker' or 'check', '<op>-<m>x<n>', what follows) of a dump's file name, or None."""
    m = re.match(r"(worker|check)-([a-z_]+-\d+x\d+)-(.*?)(?:-addresses)?\.(?:dot|json)$", name)
    return (m.group(1), m.group(2), m.group(3)) if m else None


def describe(name, s):
    lines = [f"{name}: {sum(s['types'].values())} nodes "
             f"({', '.join(f'{t} {n}' for t, n in sorted(s['types'].items()))}), "
             f"{s['edges']} edges ({s['dependencies']}), {s['topo_ids']}, "
             f"{s['node_handles']} distinct node handles"]
    for (function, grid, block, shared), count in sorted(s["kernels"].items(), key=str):
        handles = s["func_handles"].get(function, set())
        lines.append(f"  {count} x {function} grid {grid} block {block} shared {shared} "
                     f"({len(handles)} func handle{'s' if len(handles) != 1 else ''})")
    seq = s["sequence"]
    if seq:
        p = period(seq)
        lines.append(f"  order: {len(seq) // p} x [{', '.join(str(k[0]) for k in seq[:p])}]")
    return lines


def mib(n):
    return f"{n / 2**20:.1f} MiB"


def address_line(who, a):
    gap = a.get("fewest_calls_between_writes_of_one_address")
    return (f"  {who}: {a['calls']} calls over {a.get('input_sets_read', '?')} of {a.get('sets', '?')} "
            f"sets (first {a.get('first_set', '?')}; inputs {mib(a.get('input_bytes_read', 0))}), "
            f"{a['distinct_output_addresses']} distinct output addresses "
            f"({mib(a['distinct_output_bytes'])}), {a['calls_sharing_output_bytes']} calls write "
            f"bytes another call of the graph writes"
            + (f", fewest calls between two writes of one address {gap}" if gap is not None else "")
            + (f"; outputs aligned to {size(a['output_alignment_bytes'])}"
               if a.get("output_alignment_bytes") else "")
            + (f", {a['distinct_input_addresses']} input addresses aligned to "
               f"{size(a['input_alignment_bytes'])}" if a.get("input_alignment_bytes") else ""))


def size(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else (
        f"{n >> 10} KiB" if n >= 1 << 10 and n % (1 << 10) == 0 else f"{n} B")


def address_facts(files):
    """Per case: [(who, facts)] from the *-addresses.json files, worker first."""
    by_case = collections.defaultdict(list)
    for path in files:
        side = case_of(os.path.basename(path))
        if side is None:
            continue
        try:
            with open(path) as f:
                facts = json.load(f)
        except (OSError, ValueError) as e:
            print(f"graph_dot_summary: {path}: {e}", file=sys.stderr)
            continue
        who = (f"worker graph {facts.get('graph', side[2])}" if side[0] == "worker"
               else f"check {facts.get('mode', side[2])}")
        by_case[side[1]].append((side[0] != "worker", who, facts))
    return {case: sorted(rows, key=lambda r: (r[0], r[1])) for case, rows in by_case.items()}


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print(__doc__.strip().split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    found = sorted(os.path.join(d, f) for d, _, names in os.walk(argv[1]) for f in names)
    files = [f for f in found if f.endswith(".dot")]
    if not files:
        print(f"graph_dot_summary: no .dot files under {argv[1]}", file=sys.stderr)
        return 2
    by_case = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in files:
        s = summarise(path)
        name = os.path.basename(path)
        print("\n".join(describe(name, s)))
        side = case_of(name)
        if side:
            by_case[side[1]][side[0]].append((side[2], s))
    for case, sides in sorted(by_case.items()):
        if "worker" not in sides or "check" not in sides:
            continue
        pairs = [(w, c) for _, w in sides["worker"] for _, c in sides["check"]]
        same_types = all(w["types"] == c["types"] for w, c in pairs)
        same_kernels = all(w["kernels"] == c["kernels"] for w, c in pairs)
        same_order = all(w["sequence"] == c["sequence"] for w, c in pairs)
        same_edges = all((w["edges"], w["dependencies"]) == (c["edges"], c["dependencies"])
                         for w, c in pairs)
        print(f"{case}: node kinds {'the same' if same_types else 'differ'}, kernels and launch "
              f"shapes {'the same' if same_kernels else 'differ'}, order "
              f"{'the same' if same_order else 'differs'}, edges "
              f"{'the same' if same_edges else 'differ'} (worker against check, "
              f"{len(sides['worker'])} x {len(sides['check'])} graphs)")
    facts = address_facts([f for f in found if f.endswith("-addresses.json")])
    for case, rows in sorted(facts.items()):
        l2 = next((f["l2_bytes"] for _, _, f in rows if f.get("l2_bytes")), None)
        print(f"{case} output addresses a graph" + (f" (L2 {mib(l2)})" if l2 else "") + ":")
        for _, who, f in rows:
            print(address_line(who, f))
    if not facts:
        print("no *-addresses.json beside the graphs: no output addresses to compare")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
