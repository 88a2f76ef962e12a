#!/usr/bin/python3
"""scikit-learn's LogisticRegression on MovieLens-100k's one-hot features, the
movielens recipe's baseline: user id, movie id, gender, occupation and age
bucket one-hot (age bucketized at the recipe's boundaries), and the 19 genre
flags, read from tools/data/make_movielens.py's files. Prints the test AUC
and accuracy.

  /usr/bin/python3 tests/sklearn/movielens_baseline.py datasets/movielens
"""
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.preprocessing import OneHotEncoder

AGE_BOUNDARIES = [18, 25, 30, 35, 45, 50, 56]


def read(path):
    categorical, genres, labels = [], [], []
    for line in open(path):
        v = [x.strip() for x in line.split(",")]
        del v[24]  # the first genre, one of the flags already
        age_bucket = int(np.searchsorted(AGE_BOUNDARIES, float(v[2]), side="right"))
        categorical.append([v[0], v[1], v[3], v[4], str(age_bucket)])
        genres.append([float(x) for x in v[5:24]])
        labels.append(1 if v[24] == "liked" else 0)
    return categorical, np.array(genres), np.array(labels)


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else "datasets/movielens"
    train_c, train_g, train_y = read(data + "/ratings.train")
    test_c, test_g, test_y = read(data + "/ratings.test")
    encoder = OneHotEncoder(handle_unknown="ignore").fit(train_c)
    from scipy.sparse import hstack
    x_train = hstack([encoder.transform(train_c), train_g]).tocsr()
    x_test = hstack([encoder.transform(test_c), test_g]).tocsr()
    model = LogisticRegression(max_iter=1000).fit(x_train, train_y)
    p = model.predict_proba(x_test)[:, 1]
    print("scikit-learn LogisticRegression: test auc %.4f, accuracy %.4f (%d train, %d test rows)" %
          (roc_auc_score(test_y, p), accuracy_score(test_y, p > 0.5), len(train_y), len(test_y)))


if __name__ == "__main__":
    main()
