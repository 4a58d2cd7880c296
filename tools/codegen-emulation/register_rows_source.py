"""A generated register-rows source (the golden dump's, TB_GOLDEN_DUMP) made
into C++ that run_register_rows.cpp can run on the host: the rows cut to a
few blocks' worth, the last block part full (rows past M take part in the
barriers and store nothing), each row start at every offset from a 16-byte
boundary that the stride gives, and each inline PTX statement replaced by its
emulation (ptx_emulation.py).

    python3 register_rows_source.py SOURCE OUT

Prints the -D flags run_register_rows.cpp needs (the operation). Exit 2, OUT
not written, for a SOURCE that is not a register-rows source.
"""
import re
import sys

from ptx_emulation import convert, replace_ptx


def shrink(text):
    """M cut to two blocks of P rows and 5 more (at least 9 rows: a stride of
    257 starts rows 0 to 3 elements past a boundary, each at least twice)."""
    found = re.search(r"^#define P (\d+)$", text, re.M)
    assert found, "#define P not found"
    rows_per_block = int(found.group(1))
    text, count = re.subn(r"^#define M \d+LL$", f"#define M {2 * rows_per_block + 5}LL", text,
                          flags=re.M)
    assert count == 1, "#define M not found once"
    return text


def main(argv):
    if len(argv) != 3:
        print("usage: register_rows_source.py SOURCE OUT", file=sys.stderr)
        return 2
    return convert("register_rows_source.py", argv[1], argv[2], "register_rows",
                   lambda text: replace_ptx(shrink(text)))

if __name__ == "__main__":
    sys.exit(main(sys.argv))
