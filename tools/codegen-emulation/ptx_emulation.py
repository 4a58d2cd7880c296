"""Inline PTX statements of the generated row kernels and the host C++ that
emulates each (emulated_blocks.h), and the conversion of a source that the
source scripts of the host emulations (persistent_source.py,
register_rows_source.py) share. A statement not listed here is refused, so a
kernel that gains inline PTX is not emulated by guesswork."""
import os
import re
import sys

PTX = [
    (r'asm volatile\("cp\.async\.(?:wait_all|commit_group|wait_group)[^"]*"[^;]*;', ";"),
    (r'asm volatile\("ld\.(acquire|relaxed)\.gpu\.global\.u(?:32|64) %0, \[%1\];" : "=[rl]"\((\w+)\) '
     r': "l"\((\w+)\) : "memory"\);', r"\2 = tb_emulated_load_\1(\3);"),
    (r'asm\("createpolicy\.fractional\.L2::evict_first\.b64 %0, 1\.0;" : "=l"\((\w+)\)\);',
     r"\1 = 0;"),
    (r'asm volatile\(TB_CP_ASYNC\("c[ag]", "(\d+)"\)::"r"\((.*?)\), "l"\((.*?)\),\s*"r"\((.*?)\) '
     r'TB_CP_POLICY\s*: "memory"\);', r"tb_emulated_copy_async(\2, \3, \4, \1);"),
    (r'asm\("ex2\.approx\.ftz\.f32 %0, %1;" : "=f"\((\w+)\) : "f"\((.*?)\)\);',
     r"\1 = std::exp2(\2);"),
]


def replace_ptx(text):
    """text with every inline PTX statement replaced by its emulation; an
    AssertionError naming any it has none for."""
    for pattern, replacement in PTX:
        text = re.sub(pattern, replacement, text, flags=re.S)
    left = [line.strip() for line in text.splitlines() if re.search(r"\basm\b", line)]
    assert not left, "inline PTX with no emulation: " + "; ".join(left)
    return text


def operation(text):
    """The operation a row source computes (tb_row_op), as the -D flag that
    row_reference.h takes."""
    found = re.search(r"^using tb_row_op = tb_(\w+);$", text, re.M)
    assert found, "no tb_row_op in the source"
    return f"-DTB_EMULATED_OP_{found.group(1).upper()}"


def convert(script, source, out, mapping, transform):
    """Writes OUT, the generated SOURCE of MAPPING made host C++ by
    transform(text), and prints the -D flag of its operation: 0. A source
    that cannot be read or converted: a message and 2, OUT not written (it
    appears only whole, by a rename)."""
    try:
        with open(source) as f:
            text = f.read()
        lines = text.splitlines()
        if not lines or f"mapping {mapping}" not in lines[0]:
            raise ValueError(f"not a {mapping} source")
        emulated, flag = transform(text), operation(text)
    except (OSError, ValueError, AssertionError) as e:
        print(f"{script}: {source}: {e}", file=sys.stderr)
        return 2
    with open(out + ".partial", "w") as f:
        f.write(emulated)
    os.replace(out + ".partial", out)
    print(flag)
    return 0
