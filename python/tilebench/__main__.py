"""python3 -m tilebench [LIBRARY]: loads and checks the timing library and
prints what it found (exit status 1 if it cannot be used)."""
import sys

from . import __version__
from .timing import TimingError, TimingLibraryError, load


def main(argv):
    try:
        lib = load(argv[1] if len(argv) > 1 else None)
    except TimingLibraryError as e:
        print(f"tilebench {__version__}: {e}", file=sys.stderr)
        return 1
    print(f"tilebench {__version__}")
    print(f"library: {lib.path}")
    print(f"abi_version: {lib.abi_version()}")
    print(f"struct sizes: tb_timing_result {lib.result_struct_size}, "
          f"tb_timing_gpu_state {lib.gpu_state_struct_size} (match)")
    try:
        print(f"gpu_state: {lib.gpu_state()}")
    except TimingError as e:
        print(f"gpu_state: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
