"""Writes chief/testdata/tf_saver/model.ckpt-42: a checkpoint of TensorFlow's
own tf.compat.v1.train.Saver (its V2 format), which chief/tf_bundle_test.cc
reads: "conv1/weights" [2, 2, 1, 3] holding 0.5 * (0, 1, ..., 11),
"softmax_linear/biases" [3] holding (-1, 0, 1), "global_step" an int64
scalar 42, and the biases' Momentum slot holding 0.25 * (1, 2, 3).

  /opt/pstrain/tf-venv/bin/python tests/tensorflow/tf_bundle_golden.py
"""
import os

import numpy as np
import tensorflow as tf

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../chief/testdata/tf_saver")


def main():
    tf.compat.v1.disable_eager_execution()
    graph = tf.Graph()
    with graph.as_default():
        weights = tf.compat.v1.get_variable(
            "conv1/weights", initializer=(0.5 * np.arange(12, dtype=np.float32)).reshape(2, 2, 1, 3))
        biases = tf.compat.v1.get_variable(
            "softmax_linear/biases", initializer=np.array([-1, 0, 1], dtype=np.float32))
        momentum = tf.compat.v1.get_variable(
            "softmax_linear/biases/Momentum",
            initializer=0.25 * np.array([1, 2, 3], dtype=np.float32))
        step = tf.compat.v1.get_variable("global_step", initializer=np.int64(42))
        saver = tf.compat.v1.train.Saver([weights, biases, momentum, step])
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            os.makedirs(OUT, exist_ok=True)
            print(saver.save(session, os.path.join(OUT, "model.ckpt"), global_step=42,
                             write_meta_graph=False, write_state=False))


if __name__ == "__main__":
    main()
