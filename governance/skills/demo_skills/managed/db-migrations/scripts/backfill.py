"""Backfill in batches: python scripts/backfill.py --table ledger_entry --column currency --batch 10000"""

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--table", required=True)
    parser.add_argument("--column", required=True)
    parser.add_argument("--batch", type=int, default=10_000)
    args = parser.parse_args()
    print(f"UPDATE {args.table} SET {args.column} = ... WHERE id BETWEEN ...  -- batches of {args.batch}")
    time.sleep(0)


if __name__ == "__main__":
    main()
