"""TensorFlow's step of pstrain's resnet20 (nn/models/resnet20.pbtxt): the
same network built with TensorFlow's Keras (3x3 convolutions without bias
before batch norm of momentum 0.997 and epsilon 1e-5, option-A shortcuts
that take every other position and pad the new channels with zeros, He
normal weights, global average pooling), trained as the recipe trains it
(momentum 0.9 at 0.1, L2 of 1e-4 on the convolutions' and the dense
layer's weights, the same loss as weight decay 2e-4), on random batches of
32x32x3 images. Prints one line: the median of --steps train steps after
--warmup, each timed alone, compiled as Keras does by default
(jit_compile="auto") and with jit_compile=False. Run in the project's
TensorFlow venv.

  /opt/pstrain/tf-venv/bin/python bench/peers/keras/resnet20.py --threads=2
"""
import argparse
import os
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402


def conv(x, filters, stride):
    return keras.layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False,
                               kernel_initializer="he_normal",
                               kernel_regularizer=keras.regularizers.L2(1e-4))(x)


def bn(x):
    return keras.layers.BatchNormalization(momentum=0.997, epsilon=1e-5)(x)


def block(x, filters, stride):
    y = keras.layers.ReLU()(bn(conv(x, filters, stride)))
    y = bn(conv(y, filters, 1))
    shortcut = x
    if stride != 1 or x.shape[-1] != filters:
        pad = filters - x.shape[-1]
        shortcut = keras.layers.AveragePooling2D(1, strides=stride)(x)
        shortcut = keras.layers.Lambda(
            lambda t: tf.pad(t, [[0, 0], [0, 0], [0, 0], [pad // 2, pad - pad // 2]]))(shortcut)
    return keras.layers.ReLU()(keras.layers.Add()([y, shortcut]))


def resnet20():
    inp = keras.Input((32, 32, 3))
    x = keras.layers.ReLU()(bn(conv(inp, 16, 1)))
    for filters, stride in ((16, 1), (32, 2), (64, 2)):
        for i in range(3):
            x = block(x, filters, stride if i == 0 else 1)
    x = keras.layers.GlobalAveragePooling2D()(x)
    out = keras.layers.Dense(10, kernel_regularizer=keras.regularizers.L2(1e-4))(x)
    return keras.Model(inp, out, name="resnet20")


def median_step(jit, args):
    model = resnet20()
    model.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=jit)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(args.batch, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 10, size=args.batch)
    times = []
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        model.train_on_batch(x, y)
        if step >= args.warmup:
            times.append(time.perf_counter() - start)
    return float(np.median(times)), model.count_params()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    default, params = median_step("auto", args)
    plain, _ = median_step(False, args)
    print("tensorflow %s resnet20 (%d values), batch %d, %d threads: step %.3f s (Keras's "
          "default compile), %.3f s (jit_compile=False)" % (tf.__version__, params, args.batch,
                                                      args.threads, default, plain))


if __name__ == "__main__":
    main()
