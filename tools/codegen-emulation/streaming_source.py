"""A generated block-streaming or split-row source (the golden dump's,
TB_GOLDEN_DUMP) made into C++ that run_streaming.cpp can run on the host: the
rows cut to at most three (the mappings treat every row alike; the passes'
batches and their tails are what a row's length and alignment exercise).

    python3 streaming_source.py SOURCE OUT

Prints the -D flags run_streaming.cpp needs (the operation, and for a split
row -DTB_EMULATED_SPLIT_ROW). Exit 2, OUT not written, for a SOURCE of
another mapping.
"""
import re
import sys

from ptx_emulation import convert, replace_ptx


def shrink(text):
    """M cut to at most 3 rows. A block-streaming source gets a K (its
    blocks a row, 1) that it never uses: the merge of a row's partials, which
    it shares with the split rows, names K in a template it does not
    instantiate, which NVRTC accepts and g++ refuses."""
    found = re.search(r"^#define M (\d+)LL$", text, re.M)
    assert found, "#define M not found"
    rows = min(int(found.group(1)), 3)
    k = "" if re.search(r"^#define K ", text, re.M) else "\n#define K 1LL"
    return text[:found.start(1)] + str(rows) + "LL" + k + text[found.end(0):]


def main(argv):
    if len(argv) != 3:
        print("usage: streaming_source.py SOURCE OUT", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            first = f.readline()
    except OSError as e:
        print(f"streaming_source.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    if not any(f"mapping {m}" in first for m in ("block_streaming", "split_row")):
        print(f"streaming_source.py: {argv[1]}: not a block_streaming or split_row source",
              file=sys.stderr)
        return 2
    split = "mapping split_row" in first
    status = convert("streaming_source.py", argv[1], argv[2],
                     "split_row" if split else "block_streaming",
                     lambda text: replace_ptx(shrink(text)))
    if status == 0 and split:
        print("-DTB_EMULATED_SPLIT_ROW")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
