"""Writes the Keras models nn/keras_model_test.cc and chief/warm_start_test.cc
read, as TensorFlow's own Keras writes them:

  nn/testdata/keras/residual.json          Keras 3 Functional: convolutions,
                                           batch norm, a residual Add, pooling,
                                           dropout, a softmax output
  nn/testdata/keras/residual_keras2.json   the same network from Keras 2
                                           (tf_keras)
  nn/testdata/keras/sequential.json        Keras 3 Sequential: an image
                                           flattened, Dense layers of each
                                           activation, L2 regularizers
  nn/testdata/keras/sequential_keras2.json the same from Keras 2
  nn/testdata/keras/ids.json               Keras 3 Functional of two inputs
                                           of ids, each embedded, concatenated
  chief/testdata/keras/sequential.ckpt     tf.train.Checkpoint(model=...) of
                                           sequential.json's model, every
                                           variable v holding
                                           0.01 * (0, 1, ...) + i, i its
                                           index in model.weights
  chief/testdata/keras/trained.ckpt        the same model trained by Keras
                                           (1 epoch of Adam on Fashion-MNIST,
                                           pixel / 255 - 0.5), and in
                                           trained.accuracy its test accuracy
                                           as Keras evaluates it

  /opt/pstrain/tf-venv/bin/python tests/tensorflow/keras_golden.py
"""
import os

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf_keras  # noqa: E402
from crosscheck import FASHION_MNIST, read_idx  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")


def residual(k):
    inp = k.Input((12, 12, 1), name="image")
    x = k.layers.Conv2D(4, 3, padding="same", activation="relu")(inp)
    y = k.layers.Conv2D(4, 3, padding="same", use_bias=False,
                        kernel_initializer="he_normal")(x)
    y = k.layers.BatchNormalization(momentum=0.9)(y)
    y = k.layers.Activation("relu")(y)
    z = k.layers.Add()([x, y])
    z = k.layers.MaxPooling2D(2)(z)
    z = k.layers.AveragePooling2D(2, strides=1, padding="same")(z)
    z = k.layers.Flatten()(z)
    z = k.layers.Dropout(0.25)(z)
    out = k.layers.Dense(10, activation="softmax")(z)
    return k.Model(inp, out, name="residual")


def sequential(k):
    return k.Sequential([
        k.Input((28, 28, 1)),
        k.layers.Flatten(),
        k.layers.Dense(8, activation="tanh", kernel_regularizer=k.regularizers.L2(0.01)),
        k.layers.Dense(8, activation="sigmoid"),
        k.layers.Dense(10),
    ], name="sequential")


def ids():
    user = keras.Input((1,), name="user", dtype="int64")
    item = keras.Input((1,), name="item", dtype="int64")
    u = keras.layers.Flatten()(keras.layers.Embedding(50, 4)(user))
    i = keras.layers.Flatten()(keras.layers.Embedding(80, 4)(item))
    x = keras.layers.Concatenate()([u, i])
    x = keras.layers.Dense(8, activation="relu")(x)
    return keras.Model([user, item], keras.layers.Dense(2)(x), name="ids")


def fashion_mnist(prefix):
    images = read_idx(os.path.join(FASHION_MNIST, prefix + "-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(FASHION_MNIST, prefix + "-labels-idx1-ubyte.gz"))
    return (images.reshape(-1, 28, 28, 1).astype(np.float32) / 255.0 - 0.5,
            labels.astype(np.int64))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    print("wrote", os.path.relpath(path, ROOT))


def main():
    out = os.path.join(ROOT, "nn/testdata/keras")
    write(os.path.join(out, "residual.json"), residual(keras).to_json())
    write(os.path.join(out, "residual_keras2.json"), residual(tf_keras).to_json())
    model = sequential(keras)
    write(os.path.join(out, "sequential.json"), model.to_json())
    write(os.path.join(out, "sequential_keras2.json"), sequential(tf_keras).to_json())
    write(os.path.join(out, "ids.json"), ids().to_json())
    for i, v in enumerate(model.weights):
        v.assign((0.01 * np.arange(np.prod(v.shape)) + i).reshape(v.shape).astype(np.float32))
    ckpt = os.path.join(ROOT, "chief/testdata/keras")
    os.makedirs(ckpt, exist_ok=True)
    tf.train.Checkpoint(model=model).write(os.path.join(ckpt, "sequential.ckpt"))
    print("wrote chief/testdata/keras/sequential.ckpt:",
          ", ".join("%s %s" % (v.path, list(v.shape)) for v in model.weights))
    keras.utils.set_random_seed(1)
    trained = keras.models.model_from_json(model.to_json())  # the JSON's layer names
    trained.compile(optimizer=keras.optimizers.Adam(0.001),
                    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                    metrics=["accuracy"])
    x, y = fashion_mnist("train")
    trained.fit(x, y, batch_size=128, epochs=1, verbose=0)
    _, accuracy = trained.evaluate(*fashion_mnist("t10k"), batch_size=1000, verbose=0)
    tf.train.Checkpoint(model=trained).write(os.path.join(ckpt, "trained.ckpt"))
    write(os.path.join(ckpt, "trained.accuracy"), "%.4f\n" % accuracy)
    print("Keras's test accuracy of trained.ckpt: %.4f" % accuracy)


if __name__ == "__main__":
    main()
