"""A generated persistent-row source (the golden dump's, TB_GOLDEN_DUMP) made
into C++ that run_persistent.cpp can run on the host: the plan's sizes shrunk
to a grid of a few blocks (the same code paths: several rows a group, a
group's second turn, a ring that wraps, a row end inside a group), and each
inline PTX statement the kernel has replaced by its emulation
(ptx_emulation.py).

    python3 persistent_source.py SOURCE OUT [--strided] [--several-turns]

Prints the -D flags run_persistent.cpp needs (the operation); exit 2, OUT not
written, for a SOURCE that is not a persistent-row source. With
--several-turns a source planned with PARAMS_AHEAD (one row a group) is run
without it, as the planner plans such rows where groups take several.
"""
import math
import re
import sys

from ptx_emulation import convert, replace_ptx

THREADS = 256
# N: the last chunk ends inside a group, and a chunk's 626 groups leave some threads of 256 a
# group short (e >= hi), as the real plans do (2x1000000: 1894 groups a chunk)
SHRUNK = {"N": 10001, "K": 4, "ROW_GROUPS": 2}


def define(text, name):
    found = re.search(rf"^#define {name} (\d+)(LL)?$", text, re.M)
    assert found, f"#define {name} not found"
    return int(found.group(1))


def shrink(text, strided, several_turns):
    """The plan's sizes for a grid of SHRUNK['K'] * ROW_GROUPS blocks: one row
    a group, or (several_turns) three rows for group 0 (rows 0, 2, 4) and two
    for group 1 in a ring of GROUPS + 2 slots, so that, as in the real plans
    of many groups a thread (10x500000: 19 of 27), only some of the next
    row's groups are copied before the barrier, the rest into slots as they
    are written, and the ring wraps."""
    n, k = SHRUNK["N"], SHRUNK["K"]
    chunk = 4 * math.ceil(n / k / 4)
    groups = math.ceil(chunk / 4 / THREADS)
    rows = 2 * SHRUNK["ROW_GROUPS"] + 1 if several_turns else SHRUNK["ROW_GROUPS"]
    sizes = dict(SHRUNK, M=rows, SX=n + 3 if strided else n, CHUNK=chunk, GROUPS=groups)
    if several_turns:
        sizes["RING"] = groups + 2
    else:  # PARAMS_AHEAD's weight and bias beside the chunk
        assert groups * 3 <= define(text, "RING"), "the ring holds a chunk, weight and bias"
    for name, value in sizes.items():
        suffix = "" if name in ("N", "GROUPS", "RING") else "LL"
        text, count = re.subn(rf"^#define {name} \d+(LL)?$", f"#define {name} {value}{suffix}",
                              text, flags=re.M)
        assert count == 1, f"#define {name} not found once"
    assert re.search(rf"^#define THREADS {THREADS}$", text, re.M), "THREADS is not 256"
    return text


def emulate_ptx(text):
    text = replace_ptx(text)
    # polls before a barrier that never completes traps: fewer, each a yield to the blocks
    text, count = re.subn(r"^#define TB_SPIN_LIMIT \(1u << 25\)$", "#define TB_SPIN_LIMIT (1u << 20)",
                          text, flags=re.M)
    assert count == 1, "TB_SPIN_LIMIT not found"
    text, count = re.subn(r"extern __shared__ float4 tb_ring\[\];",
                          "float4 *const tb_ring = tb_emulated_dynamic;", text)
    assert count == 1, "the ring's extern __shared__ declaration not found"
    return text


def main(argv):
    flags = set(argv[3:])
    if len(argv) < 3 or not flags <= {"--strided", "--several-turns"} or len(flags) < len(argv) - 3:
        print("usage: persistent_source.py SOURCE OUT [--strided] [--several-turns]",
              file=sys.stderr)
        return 2
    several = "--several-turns" in flags

    def transform(text):
        if several:
            # PARAMS_AHEAD (the weight copied with the chunk) is planned only where every
            # group takes one row: with several, the kernel as the planner plans it there
            text = re.sub(r"^#define PARAMS_AHEAD 1\n", "", text, flags=re.M)
        return emulate_ptx(shrink(text, "--strided" in flags, several))

    return convert("persistent_source.py", argv[1], argv[2], "persistent_row", transform)

if __name__ == "__main__":
    sys.exit(main(sys.argv))
