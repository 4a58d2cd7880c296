"""A generated register-rows source (the golden dump's, TB_GOLDEN_DUMP) made
into C++ that run_register_rows.cpp can run on the host: the rows cut to a
few blocks' worth, the last block part full (rows past M take part in the
barriers and store nothing), each row start at every offset from a 16-byte
boundary that the stride gives, and each inline PTX statement replaced by its
emulation (ptx_emulation.py).

    python3 register_rows_source.py SOURCE OUT

Prints the -D flags run_register_rows.cpp needs (the operation).
"""
import re
import sys

from ptx_emulation import operation, replace_ptx


def shrink(text):
    """M cut to two blocks of P rows and 5 more (at least 9 rows: a stride of
    257 starts rows 0 to 3 elements past a boundary, each at least twice)."""
    rows_per_block = int(re.search(r"^#define P (\d+)$", text, re.M).group(1))
    text, count = re.subn(r"^#define M \d+LL$", f"#define M {2 * rows_per_block + 5}LL", text,
                          flags=re.M)
    assert count == 1, "#define M not found once"
    return text


def main(argv):
    if len(argv) != 3:
        print("usage: register_rows_source.py SOURCE OUT", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        text = f.read()
    assert "mapping register_rows" in text.splitlines()[0], "not a register-rows source"
    with open(argv[2], "w") as f:
        f.write(replace_ptx(shrink(text)))
    print(operation(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
