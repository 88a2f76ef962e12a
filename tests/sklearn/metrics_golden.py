#!/usr/bin/python3
"""Prints the golden values of chief/eval_metrics_test.cc: scikit-learn's
metrics (Debian's python3-sklearn) on the test's fixed predictions.

  /usr/bin/python3 tests/sklearn/metrics_golden.py   # Debian's python3 with python3-sklearn
"""
import numpy as np
from sklearn.metrics import accuracy_score, f1_score, log_loss, precision_score, recall_score
from sklearn.metrics import roc_auc_score

# Two classes: p(1) per example, ties and a certain mistake included.
P1 = [0.9, 0.2, 0.6, 0.6, 0.1, 0.8, 0.4, 0.6, 1.0, 0.3, 0.5, 0.7]
Y2 = [1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1]
# Three classes: rows of probabilities.
P3 = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.3, 0.4, 0.3],
      [0.5, 0.25, 0.25], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1], [0.2, 0.5, 0.3]]
Y3 = [0, 1, 2, 0, 2, 2, 1, 1]


def main():
    p = np.array(P1, dtype=np.float32).astype(np.float64)
    probs = np.stack([1 - p, p], axis=1)
    said = (p > 0.5).astype(int)
    print("two classes: accuracy %.17g auc %.17g log_loss %.17g precision %.17g recall %.17g" % (
        accuracy_score(Y2, probs.argmax(1)), roc_auc_score(Y2, p), log_loss(Y2, probs),
        precision_score(Y2, said), recall_score(Y2, said)))
    p3 = np.array(P3, dtype=np.float32).astype(np.float64)
    print("three classes: accuracy %.17g auc %.17g log_loss %.17g macro_f1 %.17g" % (
        accuracy_score(Y3, p3.argmax(1)), roc_auc_score(Y3, p3, multi_class="ovr"),
        log_loss(Y3, p3), f1_score(Y3, p3.argmax(1), average="macro")))


if __name__ == "__main__":
    main()
