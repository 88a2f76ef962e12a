#!/usr/bin/python3
"""scikit-learn's LogisticRegression on MovieLens-100k's one-hot features, the
movielens recipe's baseline, read from tools/data/make_movielens.py's
TFRecords: user id, movie id, gender, occupation, age bucket and release-year
bucket one-hot (at the recipe's boundaries), the movie's genres multi-hot,
and the movies the user liked before as a multi-hot vector divided by their
number (the mean the recipe's embedding takes). Prints the test AUC and
accuracy.

  /usr/bin/python3 tests/sklearn/movielens_baseline.py datasets/movielens
"""
import os
import sys

import numpy as np
from scipy.sparse import csr_matrix, hstack
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.preprocessing import OneHotEncoder

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tools/data"))
import tfrecords  # noqa: E402

AGE_BOUNDARIES = [18, 25, 30, 35, 45, 50, 56]
YEAR_BOUNDARIES = [1940, 1960, 1970, 1980, 1990, 1993, 1995, 1996, 1997]
MOVIES = 1683  # ids 1..1682


def read(path):
    categorical, bags, labels = [], [], []
    for e in tfrecords.read(path):
        age = int(np.searchsorted(AGE_BOUNDARIES, e["age"][0], side="right"))
        year = int(np.searchsorted(YEAR_BOUNDARIES, e["year"][0], side="right"))
        categorical.append([e["user_id"][0], e["movie_id"][0], e["gender"][0], e["occupation"][0],
                            age, year])
        bags.append((e["genres"], e["liked_before"]))
        labels.append(e["label"][0])
    return categorical, bags, np.array(labels)


def multi_hot(bags, genres):
    """The genres multi-hot, then liked_before's mean."""
    rows, cols, vals = [], [], []
    for i, (g, liked) in enumerate(bags):
        for name in g:
            rows.append(i)
            cols.append(genres.setdefault(name, len(genres)))
            vals.append(1.0)
        for movie in liked:
            rows.append(i)
            cols.append(32 + movie)
            vals.append(1.0 / len(liked))
    return csr_matrix((vals, (rows, cols)), shape=(len(bags), 32 + MOVIES))


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else "datasets/movielens"
    train_c, train_b, train_y = read(data + "/train.tfrecords")
    test_c, test_b, test_y = read(data + "/test.tfrecords")
    encoder = OneHotEncoder(handle_unknown="ignore").fit(train_c)
    genres = {}
    x_train = hstack([encoder.transform(train_c), multi_hot(train_b, genres)]).tocsr()
    x_test = hstack([encoder.transform(test_c), multi_hot(test_b, genres)]).tocsr()
    model = LogisticRegression(max_iter=1000).fit(x_train, train_y)
    p = model.predict_proba(x_test)[:, 1]
    print("scikit-learn LogisticRegression: test auc %.4f, accuracy %.4f (%d train, %d test rows)" %
          (roc_auc_score(test_y, p), accuracy_score(test_y, p > 0.5), len(train_y), len(test_y)))


if __name__ == "__main__":
    main()
