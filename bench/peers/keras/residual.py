"""A Keras Functional model with a residual block on Fashion-MNIST: writes its
JSON (--write_json, for pstrain's --model=keras:FILE.json), or trains it with
Keras's own model.fit and prints one line: its test accuracy and seconds a
step. Run in the project's TensorFlow venv (tests/tensorflow/install_tf.sh).

  /opt/pstrain/tf-venv/bin/python bench/peers/keras/residual.py --write_json=net.json
  /opt/pstrain/tf-venv/bin/python bench/peers/keras/residual.py --epochs=3 --threads=2
"""
import argparse
import gzip
import os
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def residual_model():
    """Two convolutions, a residual block of two more with batch norm, a
    strided convolution, pooling and two Dense layers."""
    inp = keras.Input((28, 28, 1), name="image")
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D(2)(x)
    y = keras.layers.Conv2D(32, 3, padding="same", use_bias=False)(x)
    y = keras.layers.BatchNormalization()(y)
    y = keras.layers.Activation("relu")(y)
    y = keras.layers.Conv2D(32, 3, padding="same", use_bias=False)(y)
    y = keras.layers.BatchNormalization()(y)
    z = keras.layers.ReLU()(keras.layers.Add()([x, y]))
    z = keras.layers.Conv2D(64, 3, strides=2, padding="same", activation="relu")(z)
    z = keras.layers.MaxPooling2D(2)(z)
    z = keras.layers.Dropout(0.25)(keras.layers.Flatten()(z))
    z = keras.layers.Dense(128, activation="relu")(z)
    out = keras.layers.Dense(10, activation="softmax")(z)
    return keras.Model(inp, out, name="residual")


def read_idx(path):
    with gzip.open(path) as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(split):
    """pstrain's preprocessing of an image of 28x28x1: pixel / 255 - 0.5."""
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(os.path.join(FASHION_MNIST, prefix + "-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(FASHION_MNIST, prefix + "-labels-idx1-ubyte.gz"))
    return images.reshape(-1, 28, 28, 1).astype(np.float32) / 255.0 - 0.5, labels.astype(np.int64)


class StepTimes(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.times = []

    def on_train_batch_begin(self, batch, logs=None):
        self.start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter() - self.start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write_json", help="write the model's JSON here and exit")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--learning_rate", type=float, default=0.001)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.write_json:
        with open(args.write_json, "w") as f:
            f.write(residual_model().to_json())
        return
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    keras.utils.set_random_seed(args.seed)
    model = residual_model()
    model.compile(optimizer=keras.optimizers.Adam(args.learning_rate),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    x, y = load("train")
    tx, ty = load("test")
    steps = StepTimes()
    start = time.perf_counter()
    model.fit(x, y, batch_size=args.batch, epochs=args.epochs, shuffle=True, verbose=0,
              callbacks=[steps])
    wall = time.perf_counter() - start
    _, accuracy = model.evaluate(tx, ty, batch_size=1000, verbose=0)
    # The first steps trace and compile the function: left out of the mean.
    step = float(np.mean(steps.times[20:]))
    print("keras %s (TensorFlow %s): %d epochs, test accuracy %.4f, step %.3f s, %.0f s training"
          % (keras.__version__, tf.__version__, args.epochs, accuracy, step, wall))


if __name__ == "__main__":
    main()
