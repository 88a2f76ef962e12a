"""Cross-checks pstrain against TensorFlow itself.

  1. cifar10: the same weights and batch through pstrain and through the
     network built here in TensorFlow from docs/MODELS.md; the loss, the logits
     and every gradient agree to a relative error of at most 1e-4.
  2. distortions: each stage of pstrain's training distortions and its
     evaluation path against tf.image with the same random draws.
  3. TFRecord both ways: files written by TensorFlow's own writer (plain and
     GZIP) read by pstrain, and pstrain_convert's files read by TensorFlow.
  4. event files: a short pstrain cluster's TensorBoard events loaded by
     TensorBoard's own event loader.
  5. sparse optimizers: an embedding table's rows and slots under each of
     pstrain's sparse optimizers, after pushes with repeated keys, against
     TensorFlow's own optimizers applying the same IndexedSlices to a dense
     variable (LazyAdam, whose TF Addons cannot be installed here, against
     its published update in numpy); relative error at most 1e-5.
  6. embedding bag: EmbeddingBagForward and EmbeddingBagBackward, each
     combiner, weighted and not, against tf.nn.embedding_lookup_sparse and
     its gradient; relative error at most 1e-5.
  7. the data tools' TFRecords (tools/data/tfrecords.py, no TensorFlow in
     it): Examples of int64, float and bytes features, one empty, written
     by it and read by TensorFlow, and written by TensorFlow and read by it.
  8. TensorFlow's checkpoint format (chief/tf_bundle.h): a checkpoint pstrain
     writes listed and loaded by tf.train.list_variables and
     tf.train.load_checkpoint with every name, shape, dtype and value exact;
     one tf.compat.v1.train.Saver writes read by pstrain, exactly.
  9. cifar10 trained by pstrain (Fashion-MNIST in CIFAR-10's layout, moving
     averages kept) and saved with --checkpoint_format=tensorflow, restored
     into a TF 1.x graph of the same network by tf.compat.v1.train.Saver
     from the moving averages (ExponentialMovingAverage.variables_to_restore),
     evaluated on the 10,000 test images with TF's evaluation crop and
     standardization: the same precision@1 as pstrain's final evaluation.
 10. the other way: the same TF 1.x graph trained by TensorFlow (200 steps
     of gradient descent on the training images, cropped and standardized
     as for evaluation) and saved by tf.compat.v1.train.Saver, evaluated by
     pstrain's evaluator (--checkpoint): the same precision@1 as TF's own
     evaluation of it; and a pstrain run warm-started from it
     (--warm_start_from, at learning rate 0) ends at that precision@1 too.
 11. a crash at every write point of a save in TensorFlow's format leaves a
     checkpoint TensorFlow finds (tf.train.latest_checkpoint) and loads
     whole: the previous one, or the new one once its index is in place.
 12. embedding tables in TensorFlow's format: mnist_ids trained by pstrain
     with --checkpoint_format=tensorflow; TensorFlow lists each table's
     "<table>-keys" and "<table>-values" tensors, imports them into a
     tf.lookup.experimental.MutableHashTable, and its lookups give exactly
     the rows pstrain_export --format=projector writes from pstrain's rows
     file, whose projector_config.pbtxt TensorBoard's own ProjectorConfig
     parses, naming each table with its shape and files.
 13. ONNX export: mnist and mnist_bn trained by pstrain on Fashion-MNIST,
     check 9's cifar10 (its moving averages) and resnet20 (a graph, 60
     steps on Fashion-MNIST as CIFAR), exported by pstrain_export
     --format=onnx; each file passes onnx.checker (full check, with shape
     inference), and onnxruntime's logits on the 10,000 test images, fed
     the images as pstrain's evaluation prepares them, match pstrain's to a
     relative 1e-5 (each example's largest difference over its largest
     logit), with the same precision@1.

 14. Keras models as they are: a Functional model with a residual block
     (convolutions, batch norm, Add, pooling, Dense layers of tanh and
     sigmoid, an L2 regularizer, Concatenate, Multiply, a Softmax output),
     written by Keras 3 and by Keras 2 (tf_keras): from its JSON
     (--model=keras:FILE.json) and a tf.train.Checkpoint of it trained by
     Keras (200 steps), pstrain's logits on
     the 10,000 test images match Keras's to a relative 1e-5; from pstrain's
     initial values, Keras gives the same loss (relative 1e-5) and
     gradients (1e-4) on a batch; and trained by pstrain from the JSON
     alone, read back into Keras by variable name, Keras's precision@1 is
     pstrain's.
 15. the layers of several inputs and the new activations (channel_pad,
     sigmoid, tanh, add, multiply, dot_interaction, fm, concat, cross) in
     one network, against the same network in TensorFlow's ops: the loss
     (relative 1e-5), the logits and every gradient (1e-4).

Run by tests/tensorflow/run_crosscheck.sh, which installs TensorFlow into a
virtual environment first. Prints one line per check and exits 1 if any
fails.
"""

import argparse
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import onnx  # noqa: E402
import onnxruntime  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorboard.plugins.projector import projector_config_pb2  # noqa: E402

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"
failures = []


def report(name, ok, detail):
    print(("PASS " if ok else "FAIL ") + name + ": " + detail, flush=True)
    if not ok:
        failures.append(name)


def rel_error(a, b):
    """max |a - b| / max(|b|), the whole tensor's scale as the denominator."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    scale = max(np.max(np.abs(b)), 1e-30)
    return float(np.max(np.abs(a - b)) / scale)


def load(directory, entry, dtype=np.float32, shape=None):
    data = np.fromfile(os.path.join(directory, entry), dtype=dtype)
    return data.reshape(shape) if shape is not None else data


def dump(build, out, *flags):
    subprocess.run([os.path.join(build, "tests", "crosscheck_dump"), "--out=" + out] +
                   list(flags), check=True)
    with open(os.path.join(out, "manifest.json")) as f:
        return json.load(f)


# 1. cifar10 ---------------------------------------------------------------

def tf_lrn(x):
    return tf.nn.local_response_normalization(x, depth_radius=4, bias=1.0,
                                              alpha=0.001 / 9.0, beta=0.75)


def tf_cifar10(v, images):
    """cifar10 as docs/MODELS.md gives it, on the weights `v` (name -> tensor)."""
    conv1 = tf.nn.relu(tf.nn.conv2d(images, v["conv1/weights"], 1, "SAME") +
                       v["conv1/biases"])
    pool1 = tf.nn.max_pool2d(conv1, 3, 2, "SAME")
    norm1 = tf_lrn(pool1)
    conv2 = tf.nn.relu(tf.nn.conv2d(norm1, v["conv2/weights"], 1, "SAME") +
                       v["conv2/biases"])
    norm2 = tf_lrn(conv2)
    pool2 = tf.nn.max_pool2d(norm2, 3, 2, "SAME")
    flat = tf.reshape(pool2, [-1, int(np.prod(pool2.shape[1:]))])
    local3 = tf.nn.relu(tf.matmul(flat, v["local3/weights"]) + v["local3/biases"])
    local4 = tf.nn.relu(tf.matmul(local3, v["local4/weights"]) + v["local4/biases"])
    return tf.matmul(local4, v["softmax_linear/weights"]) + v["softmax_linear/biases"]


def check_cifar10(build, work):
    out = os.path.join(work, "cifar10")
    os.makedirs(out)
    m = dump(build, out, "--what=model", "--model=cifar10", "--batch=16", "--seed=7")
    images = tf.constant(load(out, m["images"]["file"], shape=m["images"]["shape"]))
    labels = tf.constant(load(out, m["labels"], np.int32))
    names = [var["name"] for var in m["variables"]]
    v = {var["name"]: tf.Variable(load(out, var["value"], shape=var["shape"]))
         for var in m["variables"]}
    wd = {var["name"]: var["weight_decay"] for var in m["variables"]}
    with tf.GradientTape() as tape:
        logits = tf_cifar10(v, images)
        xent = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        loss = xent + tf.add_n([wd[n] * tf.nn.l2_loss(v[n]) for n in names if wd[n] > 0])
    grads = tape.gradient(loss, [v[n] for n in names])

    err = rel_error(m["loss"], loss.numpy())
    report("cifar10 loss", err <= 1e-4,
           "pstrain %.7f, TensorFlow %.7f, relative error %.2e" % (m["loss"], loss, err))
    ours = load(out, m["logits"]["file"], shape=m["logits"]["shape"])
    err = rel_error(ours, logits.numpy())
    report("cifar10 logits", err <= 1e-4, "relative error %.2e" % err)
    worst = 0.0
    for var, g in zip(m["variables"], grads):
        err = rel_error(load(out, var["grad"], shape=var["shape"]), g.numpy())
        worst = max(worst, err)
        report("cifar10 gradient " + var["name"], err <= 1e-4, "relative error %.2e" % err)
    print("     worst gradient relative error %.2e over %d variables" % (worst, len(names)))


# 2. distortions ------------------------------------------------------------

def check_distortions(build, work):
    out = os.path.join(work, "distort")
    os.makedirs(out)
    m = dump(build, out, "--what=distort", "--batch=32", "--seed=11")
    n, h, w, d = m["count"], m["height"], m["width"], m["depth"]
    ch, cw = m["crop"]
    images = load(out, "images.u8", np.uint8, (n, h, w, d))
    ours = {s: load(out, s + ".f32", shape=(n, ch, cw, d)) for s in m["stages"]}
    theirs = {s: [] for s in m["stages"]}
    for i, draw in enumerate(m["draws"]):
        x = tf.cast(tf.constant(images[i]), tf.float32)  # as cifar10_input.py casts
        x = tf.image.crop_to_bounding_box(x, draw["top"], draw["left"], ch, cw)
        theirs["crop"].append(x)
        if draw["flip"]:
            x = tf.image.flip_left_right(x)
        theirs["flip"].append(x)
        x = tf.image.adjust_brightness(x, draw["brightness"])
        theirs["brightness"].append(x)
        x = tf.image.adjust_contrast(x, draw["contrast"])
        theirs["contrast"].append(x)
        x = tf.image.per_image_standardization(x)
        theirs["standardized"].append(x)
        theirs["fused"].append(x)
        e = tf.image.resize_with_crop_or_pad(tf.cast(tf.constant(images[i]), tf.float32), ch, cw)
        theirs["eval"].append(tf.image.per_image_standardization(e))
    for stage in m["stages"]:
        err = rel_error(ours[stage], np.stack([t.numpy() for t in theirs[stage]]))
        report("distortion " + stage, err <= 1e-5,
               "%d images, relative error %.2e" % (n, err))


# 3. TFRecord ---------------------------------------------------------------

def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def example(image, label):
    feature = {
        "height": tf.train.Feature(int64_list=tf.train.Int64List(value=[image.shape[0]])),
        "width": tf.train.Feature(int64_list=tf.train.Int64List(value=[image.shape[1]])),
        "depth": tf.train.Feature(int64_list=tf.train.Int64List(value=[image.shape[2]])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
        "image_raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def check_tfrecord(build, work):
    images = read_idx(os.path.join(FASHION_MNIST, "t10k-images-idx3-ubyte.gz"))[..., None]
    labels = read_idx(os.path.join(FASHION_MNIST, "t10k-labels-idx1-ubyte.gz"))
    count = 2000
    # TensorFlow writes, pstrain reads.
    for compression, name in (("", "test.tfrecords"), ("GZIP", "test.tfrecords.gz")):
        data_dir = os.path.join(work, "tf_written_" + (compression or "plain"))
        os.makedirs(data_dir)
        with tf.io.TFRecordWriter(os.path.join(data_dir, name),
                                  options=tf.io.TFRecordOptions(compression_type=compression)) as w:
            for i in range(count):
                w.write(example(images[i], labels[i]))
        out = os.path.join(data_dir, "dump")
        os.makedirs(out)
        m = dump(build, out, "--what=read", "--data_dir=" + data_dir, "--split=test")
        got = load(out, "pixels.u8", np.uint8).reshape(m["count"], m["height"], m["width"],
                                                        m["depth"])
        same = (m["count"] == count and np.array_equal(got, images[:count]) and
                np.array_equal(load(out, "labels.i32", np.int32), labels[:count]))
        report("TFRecord written by TensorFlow (%s) read by pstrain" % (compression or "plain"),
               same, "%d of %d examples, pixels and labels identical: %s" %
               (m["count"], count, same))
    # pstrain writes, TensorFlow reads.
    for compression, suffix in (("none", ""), ("gzip", ".gz")):
        out = os.path.join(work, "pstrain_written_" + compression)
        subprocess.run([os.path.join(build, "tools", "pstrain_convert"), "--input_format=idx",
                        "--data_dir=" + FASHION_MNIST, "--output_dir=" + out,
                        "--compression=" + compression], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        spec = {"image_raw": tf.io.FixedLenFeature([], tf.string),
                "label": tf.io.FixedLenFeature([], tf.int64),
                "height": tf.io.FixedLenFeature([], tf.int64),
                "width": tf.io.FixedLenFeature([], tf.int64),
                "depth": tf.io.FixedLenFeature([], tf.int64)}
        ds = tf.data.TFRecordDataset(os.path.join(out, "test.tfrecords" + suffix),
                                     compression_type="GZIP" if suffix else "")
        read = 0
        same = True
        for i, record in enumerate(ds):
            e = tf.io.parse_single_example(record, spec)
            img = np.frombuffer(e["image_raw"].numpy(), np.uint8).reshape(
                int(e["height"]), int(e["width"]), int(e["depth"]))
            same = same and np.array_equal(img, images[i]) and int(e["label"]) == labels[i]
            read += 1
        same = same and read == len(labels)
        report("TFRecord written by pstrain_convert (%s) read by TensorFlow" % compression, same,
               "%d of %d examples, pixels and labels identical: %s" % (read, len(labels), same))


# 4. event files ------------------------------------------------------------

def check_events(build, work):
    from tensorboard.backend.event_processing import event_file_loader

    train_dir = os.path.join(work, "events_run")
    subprocess.run([os.path.join(build, "deploy", "pstrain_local"), "--ps=1", "--workers=1",
                    "--model=mnist", "--max_steps=40", "--save_summaries_steps=10",
                    "--train_dir=" + train_dir], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=600)
    files = sorted(glob.glob(os.path.join(train_dir, "**", "events.out.tfevents.*"),
                             recursive=True))
    if not files:
        report("event files", False, "no events.out.tfevents.* under " + train_dir)
        return
    for path in files:
        events = 0
        kinds = {}
        steps = set()
        for event in event_file_loader.EventFileLoader(path).Load():
            events += 1
            steps.add(event.step)
            for value in event.summary.value:
                kind = value.WhichOneof("value")
                if kind == "tensor" and value.metadata.plugin_data.plugin_name:
                    kind = value.metadata.plugin_data.plugin_name
                kinds[kind] = kinds.get(kind, 0) + 1
        ok = events > 1 and bool(kinds)
        report("event file %s loaded by TensorBoard" % os.path.relpath(path, train_dir), ok,
               "%d events, steps %s..%s, values %s" %
               (events, min(steps), max(steps), dict(sorted(kinds.items()))))


# 5. sparse optimizers -------------------------------------------------------

# pstrain's slot names (ps/optimizer.h), in its order, and TF's get_slot name
# for each.
SPARSE_SLOTS = {
    "GradientDescent": [],
    "Momentum": [("Momentum", "momentum")],
    "Adagrad": [("accumulator", "accumulator")],
    "Ftrl": [("accumulator", "accum"), ("linear", "linear")],
    "Adam": [("m", "m"), ("v", "v")],
    "LazyAdam": [("m", None), ("v", None)],
}


def tf_optimizer(o):
    """The tf.compat.v1.train optimizer the manifest's config names."""
    train = tf.compat.v1.train
    name, lr = o["name"], o["learning_rate"]
    if name == "GradientDescent":
        return train.GradientDescentOptimizer(lr)
    if name == "Momentum":
        return train.MomentumOptimizer(lr, o["momentum"], use_nesterov=o["use_nesterov"])
    if name == "Adagrad":
        return train.AdagradOptimizer(lr, initial_accumulator_value=o["initial_accumulator_value"])
    if name == "Ftrl":
        # l2_shrinkage > 0: ResourceSparseApplyFtrlV2; else ResourceSparseApplyFtrl.
        return train.FtrlOptimizer(
            lr, learning_rate_power=o["learning_rate_power"],
            initial_accumulator_value=o["initial_accumulator_value"],
            l1_regularization_strength=o["l1"], l2_regularization_strength=o["l2"],
            l2_shrinkage_regularization_strength=o["l2_shrinkage"])
    if name == "Adam":
        # TF's own sparse Adam (_apply_sparse_shared): m and v of every row
        # decay, every row moves; beta powers start at beta and multiply after
        # each apply_gradients (t = the number of applies, from 1).
        return train.AdamOptimizer(lr, beta1=o["beta1"], beta2=o["beta2"], epsilon=o["epsilon"])
    raise ValueError("no TensorFlow optimizer for " + name)


class LazyAdamReference:
    """TF Addons' LazyAdamOptimizer's published update, in float64: only the
    rows with a gradient (their repeats summed) change.
      m_t = b1 m + (1 - b1) g;  v_t = b2 v + (1 - b2) g^2
      var -= lr sqrt(1 - b2^t) / (1 - b1^t) m_t / (sqrt(v_t) + eps)"""

    def __init__(self, o, var, m, v):
        self.o = o
        self.var, self.m, self.v = (np.array(x, np.float64) for x in (var, m, v))
        self.t = 0

    def apply(self, indices, grad):
        o = self.o
        self.t += 1
        rows = np.unique(indices)
        g = np.zeros(self.var.shape, np.float64)
        np.add.at(g, indices, np.asarray(grad, np.float64))
        g = g[rows]
        b1, b2 = o["beta1"], o["beta2"]
        lr_t = o["learning_rate"] * np.sqrt(1 - b2 ** self.t) / (1 - b1 ** self.t)
        self.m[rows] = b1 * self.m[rows] + (1 - b1) * g
        self.v[rows] = b2 * self.v[rows] + (1 - b2) * g * g
        self.var[rows] -= lr_t * self.m[rows] / (np.sqrt(self.v[rows]) + o["epsilon"])

    def state(self):
        return [self.var, self.m, self.v]


def check_sparse_optimizers(build, work):
    out = os.path.join(work, "sparse_optimizers")
    os.makedirs(out)
    m = dump(build, out, "--what=sparse_optimizers", "--seed=5")
    dim, keys, written = m["dim"], m["keys"], m["written"]
    n = len(keys)
    row_of = {k: i for i, k in enumerate(keys)}
    pushes = []
    for push in m["pushes"]:
        push_keys = load(out, push["keys"], np.int64)
        pushes.append((np.array([row_of[int(k)] for k in push_keys], np.int64),
                       load(out, push["grad"], shape=(push["count"], dim))))
    repeats = sum(len(i) - len(np.unique(i)) for i, _ in pushes)
    for case in m["cases"]:
        o = case["optimizer"]
        expected = SPARSE_SLOTS[o["name"]]
        name = "sparse optimizer " + case["label"]
        if case["slots"] != [ours for ours, _ in expected]:
            report(name, False, "slots %s, TensorFlow's are %s" %
                   (case["slots"], [ours for ours, _ in expected]))
            continue
        shape = (n, 1 + len(expected), dim)
        initial = load(out, case["initial"], shape=shape)
        # TF's dense variable starts at every key's row as pstrain holds it
        # (the fresh key, never written: its RowInitializer value, which
        # Lookup answers); the written rows' slots as written, the fresh
        # key's as TF's optimizer starts them.
        var = tf.Variable(initial[:, 0, :])
        written_rows = tf.constant(np.arange(written, dtype=np.int64))
        if o["name"] == "LazyAdam":
            slot0 = np.zeros((2, n, dim), np.float32)
            slot0[:, :written] = initial[:written, 1:, :].transpose(1, 0, 2)
            ref = LazyAdamReference(o, initial[:, 0, :], slot0[0], slot0[1])
            apply = ref.apply
            state = ref.state
        else:
            opt = tf_optimizer(o)
            opt._create_slots([var])  # to write the slots before the first update
            slots = [opt.get_slot(var, theirs) for _, theirs in expected]
            for s, slot in enumerate(slots):
                slot.scatter_update(tf.IndexedSlices(
                    tf.constant(initial[:written, 1 + s, :]), written_rows))

            def apply(indices, grad, opt=opt, var=var):
                # Duplicate indices as they are: TF's optimizers sum them
                # (unsorted_segment_sum) before the sparse update.
                opt.apply_gradients([(tf.IndexedSlices(
                    tf.constant(grad), tf.constant(indices), tf.constant([n, dim],
                                                                          tf.int64)), var)])

            def state(var=var, slots=slots):
                return [var.numpy()] + [slot.numpy() for slot in slots]

        names = ["var"] + case["slots"]
        worst = {x: 0.0 for x in names + ["lookup"]}
        for (indices, grad), after in zip(pushes, case["after"]):
            apply(indices, grad)
            theirs = state()
            ours = load(out, after["rows"], shape=shape)
            held = np.array(after["held"], bool)
            for s, x in enumerate(names):
                # Slots of a key without a row yet are not pstrain's to hold.
                rows = slice(None) if s == 0 else held
                worst[x] = max(worst[x], rel_error(ours[rows, s, :], theirs[s][rows]))
            worst["lookup"] = max(worst["lookup"], rel_error(
                load(out, after["lookup"], shape=(n, dim)), theirs[0]))
        err = max(worst.values())
        report(name, err <= 1e-5,
               "%d pushes (%d repeated keys) into %d rows of %d, relative error %.2e (%s)" %
               (len(pushes), repeats, n, dim, err,
                ", ".join("%s %.2e" % (x, e) for x, e in worst.items())))


# 6. embedding bag ------------------------------------------------------------

def check_embedding_bag(build, work):
    out = os.path.join(work, "embedding_bag")
    os.makedirs(out)
    m = dump(build, out, "--what=embedding_bag", "--seed=9")
    dim, vocabulary, batch = m["dim"], m["vocabulary"], m["batch"]
    values = load(out, "values.i64", np.int64)
    splits = load(out, "row_splits.i64", np.int64)
    weights = load(out, "weights.f32")
    unique = load(out, "unique.i64", np.int64)
    table = load(out, "table.f32", shape=(vocabulary, dim))
    dout = load(out, "dout.f32", shape=(batch, dim))
    lengths = np.diff(splits)
    indices = np.array([[b, j] for b in range(batch) for j in range(lengths[b])], np.int64)
    dense_shape = [batch, int(lengths.max())]
    sp_ids = tf.SparseTensor(indices, values, dense_shape)
    sp_weights = tf.SparseTensor(indices, weights, dense_shape)
    # TF's output has a row per example up to the last with an id (its
    # segment ops); an empty example before it gets zeros, as in pstrain.
    # This batch's last example is not empty, so both have `batch` rows.
    assert lengths[-1] > 0
    params = tf.Variable(table)
    for case in m["cases"]:
        name = "embedding bag %s %s" % (case["combiner"],
                                        "weighted" if case["weighted"] else "unweighted")
        with tf.GradientTape() as tape:
            y = tf.nn.embedding_lookup_sparse(
                params, sp_ids, sp_weights if case["weighted"] else None,
                combiner=case["combiner"])
            loss = tf.reduce_sum(y * dout)
        grad = tape.gradient(loss, params)  # IndexedSlices, repeats not summed
        theirs_grad = tf.convert_to_tensor(grad).numpy()
        ours = load(out, case["out"])
        if ours.size != y.numpy().size:
            report(name, False, "pstrain %d values out, TensorFlow %s" % (ours.size, y.shape))
            continue
        drows = load(out, case["drows"], shape=(len(unique), dim))
        ours_grad = np.zeros((vocabulary, dim), np.float32)
        ours_grad[unique] = drows  # one row per unique id, its repeats summed
        fwd = rel_error(ours.reshape(batch, dim), y.numpy())
        bwd = rel_error(ours_grad, theirs_grad)
        report(name, max(fwd, bwd) <= 1e-5,
               "%d examples, %d ids (%d unique), forward %.2e, backward %.2e" %
               (batch, len(values), len(unique), fwd, bwd))


def check_data_tool_tfrecords(work):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "../../tools/data"))
    import tfrecords
    rows = [{"ids": [1, -2, 1 << 40], "name": [b"x", b"yz"], "weights": [1.5, -0.25], "none": []},
            {"ids": [7], "name": [b""], "weights": [0.0], "none": [5]}]
    path = os.path.join(work, "tool.tfrecords")
    tfrecords.write(path, rows)
    theirs = []
    for raw in tf.data.TFRecordDataset(path):
        e = tf.train.Example.FromString(raw.numpy()).features.feature
        theirs.append({k: list(v.int64_list.value) or list(v.bytes_list.value) or
                       list(v.float_list.value) for k, v in e.items()})
    report("TFRecord written by tools/data/tfrecords.py read by TensorFlow", theirs == rows,
           "%d examples" % len(rows))
    path = os.path.join(work, "tf.tfrecords")
    with tf.io.TFRecordWriter(path) as w:
        for r in rows:
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=r["ids"])),
                "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=r["name"])),
                "weights": tf.train.Feature(float_list=tf.train.FloatList(value=r["weights"])),
                "none": tf.train.Feature(int64_list=tf.train.Int64List(value=r["none"])),
            })).SerializeToString())
    ours = list(tfrecords.read(path))
    report("TFRecord written by TensorFlow read by tools/data/tfrecords.py", ours == rows,
           "%d examples" % len(rows))


def check_tf_checkpoints(build, work):
    out = os.path.join(work, "bundle_out")
    os.makedirs(out)
    dump(build, out, "--what=bundle", "--seed=5")
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    prefix = os.path.join(out, manifest["prefix"])
    listed = dict(tf.train.list_variables(prefix))
    reader = tf.train.load_checkpoint(prefix)
    dtypes = reader.get_variable_to_dtype_map()
    bad = []
    for t in manifest["tensors"]:
        want = np.fromfile(os.path.join(out, t["file"]), dtype=t["dtype"]).reshape(t["shape"])
        got = reader.get_tensor(t["name"])
        if (listed.get(t["name"]) != t["shape"] or dtypes[t["name"]].name != t["dtype"] or
                got.dtype != want.dtype or not np.array_equal(got, want)):
            bad.append(t["name"])
    report("checkpoint written by pstrain read by TensorFlow",
           not bad and len(listed) == len(manifest["tensors"]),
           "%d tensors%s" % (len(listed), ", differing: " + ", ".join(bad) if bad else ""))

    rng = np.random.default_rng(9)
    values = {"conv2/weights": rng.standard_normal((5, 5, 3, 2)).astype(np.float32),
              "local3/biases/ExponentialMovingAverage": rng.standard_normal(7).astype(np.float32),
              "global_step": np.int64(987654321012)}
    graph = tf.Graph()
    with graph.as_default():
        variables = [tf.compat.v1.get_variable(name, initializer=value)
                     for name, value in values.items()]
        saver = tf.compat.v1.train.Saver(variables)
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            prefix = saver.save(session, os.path.join(work, "tf_saver", "model.ckpt"),
                                global_step=5, write_meta_graph=False, write_state=False)
    out = os.path.join(work, "bundle_in")
    os.makedirs(out)
    dump(build, out, "--what=bundle", "--bundle=" + prefix)
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    read = {t["name"]: np.fromfile(os.path.join(out, t["file"]), dtype=t["dtype"])
            .reshape(t["shape"]) for t in manifest["tensors"]}
    same = set(read) == set(values) and all(
        read[n].dtype == np.asarray(v).dtype and np.array_equal(read[n], v)
        for n, v in values.items())
    report("checkpoint written by tf.compat.v1.train.Saver read by pstrain", same,
           "%d tensors" % len(read))


CIFAR10_VARIABLES = [("conv1/weights", [5, 5, 3, 64], 5e-2), ("conv1/biases", [64], 0.0),
                     ("conv2/weights", [5, 5, 64, 64], 5e-2), ("conv2/biases", [64], 0.1),
                     ("local3/weights", [2304, 384], 0.04), ("local3/biases", [384], 0.1),
                     ("local4/weights", [384, 192], 0.04), ("local4/biases", [192], 0.1),
                     ("softmax_linear/weights", [192, 10], 1 / 192.0),
                     ("softmax_linear/biases", [10], 0.0)]


def fmnist_as_cifar(build, work):
    """The directory of Fashion-MNIST in CIFAR-10's layout, made once."""
    data = os.path.join(work, "fmnist_cifar")
    if not os.path.isdir(data):
        subprocess.run([os.path.join(build, "tools", "pstrain_fmnist_to_cifar"),
                        "--data_dir=" + FASHION_MNIST, "--output_dir=" + data], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return data


def cifar_batch_file(data, name):
    raw = np.fromfile(os.path.join(data, "cifar-10-batches-bin", name), np.uint8)
    raw = raw.reshape(-1, 1 + 3 * 32 * 32)
    return raw[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), raw[:, 0].astype(np.int64)


def eval_input(batch):
    """cifar10_input's evaluation path: the central 24x24, standardized."""
    return tf.map_fn(lambda im: tf.image.per_image_standardization(
        tf.image.resize_with_crop_or_pad(tf.cast(im, tf.float32), 24, 24)),
        batch, fn_output_signature=tf.float32)


def run_output(argv, marker, before):
    """Runs argv; the word after `before` on its last line holding `marker`
    ("none" when there is none), and whether it exited 0."""
    run = subprocess.run(argv, capture_output=True, text=True)
    lines = [l for l in (run.stdout + run.stderr).splitlines() if marker in l]
    value = lines[-1].split(before)[1].split()[0] if lines else "none"
    return value, run.returncode == 0


def train_local(build, model, data, train_dir, *flags):
    """pstrain_local's `model` on `data`: its final test accuracy, as printed,
    and whether it exited 0."""
    return run_output([os.path.join(build, "deploy", "pstrain_local"), "--ps=1", "--workers=1",
                       "--model=" + model, "--data_dir=" + data, "--epochs=0",
                       "--train_dir=" + train_dir, "--http_port=-1"] + list(flags),
                      "final: step", "test accuracy ")


def train_cifar10(build, data, train_dir, *flags):
    return train_local(build, "cifar10", data, train_dir, *flags)


def check_tf_trained_cifar10(build, work):
    data = fmnist_as_cifar(build, work)
    train_x, train_y = cifar_batch_file(data, "data_batch_1.bin")
    test_x, test_y = cifar_batch_file(data, "test_batch.bin")
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(3)
        batch = tf.compat.v1.placeholder(tf.uint8, [None, 32, 32, 3])
        labels = tf.compat.v1.placeholder(tf.int64, [None])
        v = {}
        for name, shape, init in CIFAR10_VARIABLES:
            initializer = (tf.compat.v1.truncated_normal_initializer(stddev=init)
                           if name.endswith("weights") else tf.compat.v1.constant_initializer(init))
            v[name] = tf.compat.v1.get_variable(name, shape, initializer=initializer)
        step = tf.compat.v1.train.get_or_create_global_step()
        logits = tf_cifar10(v, eval_input(batch))
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        train = tf.compat.v1.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)
        saver = tf.compat.v1.train.Saver(list(v.values()) + [step])
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer())
            for i in range(200):
                j = (i * 128) % 9984
                session.run(train, {batch: train_x[j:j + 128], labels: train_y[j:j + 128]})
            correct = 0
            for i in range(0, 10000, 1000):
                out = session.run(logits, {batch: test_x[i:i + 1000]})
                correct += int(np.sum(np.argmax(out, 1) == test_y[i:i + 1000]))
            prefix = saver.save(session, os.path.join(work, "tf_cifar10", "model.ckpt"),
                                global_step=step, write_meta_graph=False)
    theirs = "%.4f" % (correct / 10000.0)
    ours, ok = run_output([os.path.join(build, "chief", "evaluator"), "--model=cifar10",
                           "--data_dir=" + data, "--checkpoint=" + prefix,
                           "--eval_dir=" + os.path.join(work, "tf_cifar10_eval")],
                          "test accuracy ", "test accuracy ")
    report("cifar10 trained by TensorFlow, evaluated by pstrain", ok and ours == theirs,
           "%s: TF's precision@1 %s, pstrain's evaluator %s" %
           (os.path.basename(prefix), theirs, ours))
    warm, ok = train_cifar10(build, data, os.path.join(work, "warm_cifar10"), "--max_steps=5",
                             "--learning_rate=0", "--noeval_use_moving_averages",
                             "--warm_start_from=" + prefix)
    report("cifar10 warm-started from TensorFlow's checkpoint", ok and warm == theirs,
           "%s: TF's precision@1 %s, pstrain after 5 steps at learning rate 0 %s" %
           (os.path.basename(prefix), theirs, warm))


def check_cifar10_checkpoint(build, work):
    data = fmnist_as_cifar(build, work)
    train_dir = os.path.join(work, "cifar10_train")
    ours, ok = train_cifar10(build, data, train_dir, "--max_steps=300", "--ema_decay=0.99",
                             "--checkpoint_format=tensorflow")
    if not ok:
        report("cifar10 trained by pstrain, evaluated by TensorFlow", False,
               "pstrain_local failed")
        return
    prefix = tf.train.latest_checkpoint(train_dir)

    images, labels = cifar_batch_file(data, "test_batch.bin")
    graph = tf.Graph()
    with graph.as_default():
        batch = tf.compat.v1.placeholder(tf.uint8, [1000, 32, 32, 3])
        x = eval_input(batch)
        shapes = dict(tf.train.list_variables(prefix))
        names = ["conv1/weights", "conv1/biases", "conv2/weights", "conv2/biases",
                 "local3/weights", "local3/biases", "local4/weights", "local4/biases",
                 "softmax_linear/weights", "softmax_linear/biases"]
        v = {n: tf.compat.v1.get_variable(n, shapes[n]) for n in names}
        logits = tf_cifar10(v, x)
        ema = tf.compat.v1.train.ExponentialMovingAverage(0.99)
        saver = tf.compat.v1.train.Saver(ema.variables_to_restore(list(v.values())))
        with tf.compat.v1.Session(graph=graph) as session:
            saver.restore(session, prefix)
            correct = 0
            for i in range(0, 10000, 1000):
                out = session.run(logits, {batch: images[i:i + 1000]})
                correct += int(np.sum(np.argmax(out, 1) == labels[i:i + 1000]))
    theirs = "%.4f" % (correct / 10000.0)
    report("cifar10 trained by pstrain, evaluated by TensorFlow", theirs == ours,
           "%s: pstrain's final precision@1 %s, TF 1.x graph restored by Saver from the moving "
           "averages %s" % (os.path.basename(prefix), ours, theirs))


def check_table_tensors(build, work):
    train_dir = os.path.join(work, "mnist_ids_train")
    _, ok = train_local(build, "mnist_ids", FASHION_MNIST, train_dir, "--max_steps=100",
                        "--checkpoint_format=tensorflow")
    prefix = tf.train.latest_checkpoint(train_dir) if ok else None
    if prefix is None:
        report("embedding tables as TF hash tables' keys and values", False, "no checkpoint")
        return
    out = os.path.join(work, "projector")
    subprocess.run([os.path.join(build, "export", "pstrain_export"), "--model=mnist_ids",
                    "--checkpoint=" + prefix, "--format=projector", "--output=" + out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    reader = tf.train.load_checkpoint(prefix)
    tables = sorted(n[:-len("-keys")] for n in reader.get_variable_to_shape_map()
                    if n.endswith("-keys"))
    config = projector_config_pb2.ProjectorConfig()
    with open(os.path.join(out, "projector_config.pbtxt")) as f:
        text_format.Parse(f.read(), config)
    embeddings = {e.tensor_name: e for e in config.embeddings}
    details, same = [], bool(tables) and sorted(embeddings) == tables
    for table in tables:
        keys = reader.get_tensor(table + "-keys")
        values = reader.get_tensor(table + "-values")
        hashed = tf.lookup.experimental.MutableHashTable(
            tf.int64, tf.float32, default_value=np.zeros(values.shape[1], np.float32))
        hashed.insert(keys, values)
        folder = os.path.join(out, table.replace("/", "_"))
        want_keys = np.loadtxt(os.path.join(folder, "metadata.tsv"), dtype=np.int64, ndmin=1)
        want = np.loadtxt(os.path.join(folder, "vectors.tsv"), dtype=np.float32, ndmin=2)
        got = hashed.lookup(tf.constant(want_keys)).numpy()
        info = embeddings.get(table)
        same = (same and len(keys) == len(want_keys) and np.array_equal(got, want) and
                list(info.tensor_shape) == list(values.shape) and
                os.path.join(out, info.tensor_path) == os.path.join(folder, "vectors.tsv") and
                os.path.join(out, info.metadata_path) == os.path.join(folder, "metadata.tsv"))
        details.append("%s: %d rows of %d" % (table, len(keys), values.shape[1]))
    report("embedding tables as TF hash tables' keys and values", same,
           "%s; TF's MutableHashTable gives every row the projector export wrote"
           % ", ".join(details))


def check_onnx_export(build, work):
    runs = []
    for model in ("mnist", "mnist_bn"):
        train_dir = os.path.join(work, model + "_train")
        _, ok = train_local(build, model, FASHION_MNIST, train_dir, "--max_steps=300")
        runs.append((model, FASHION_MNIST, train_dir, ok, []))
    runs.append(("cifar10", fmnist_as_cifar(build, work), os.path.join(work, "cifar10_train"),
                 True, ["--use_moving_averages"]))
    # A graph: residual adds and padded shortcuts.
    train_dir = os.path.join(work, "resnet20_train")
    _, ok = train_local(build, "resnet20", fmnist_as_cifar(build, work), train_dir,
                        "--max_steps=60")
    runs.append(("resnet20", fmnist_as_cifar(build, work), train_dir, ok, []))
    print("onnx %s, onnxruntime %s" % (onnx.__version__, onnxruntime.__version__))
    for model, data, train_dir, trained, flags in runs:
        name = "%s exported to ONNX, run by onnxruntime" % model
        prefix = tf.train.latest_checkpoint(train_dir) if trained else None
        if prefix is None:
            report(name, False, "no checkpoint in " + train_dir)
            continue
        path = os.path.join(work, model + ".onnx")
        subprocess.run([os.path.join(build, "export", "pstrain_export"), "--model=" + model,
                        "--checkpoint=" + prefix, "--format=onnx", "--output=" + path] + flags,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        onnx.checker.check_model(onnx.load(path), full_check=True)
        out = os.path.join(work, model + "_logits")
        os.makedirs(out)
        m = dump(build, out, "--what=logits", "--model=" + model, "--data_dir=" + data,
                 "--checkpoint=" + prefix, *flags)
        images = load(out, "images.f32", shape=[m["count"]] + m["example"])
        ours = load(out, "logits.f32", shape=[m["count"], m["classes"]])
        labels = load(out, "labels.i32", np.int32)
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        theirs = np.concatenate([session.run(["logits"], {"images": images[i:i + 1000]})[0]
                                 for i in range(0, m["count"], 1000)])
        rel = float(np.max(np.max(np.abs(theirs - ours), axis=1) /
                           np.maximum(np.max(np.abs(ours), axis=1), 1e-30)))
        p_ours = float(np.mean(np.argmax(ours, 1) == labels))
        p_theirs = float(np.mean(np.argmax(theirs, 1) == labels))
        report(name, rel <= 1e-5 and p_ours == p_theirs,
               "%s (%s): opset %d, onnx.checker passes; logits relative error %.2e; "
               "precision@1 pstrain %.4f, onnxruntime %.4f" %
               (os.path.basename(prefix), "moving averages" if m["moving_averages"] else
                "variables", onnx.load(path).opset_import[0].version, rel, p_ours, p_theirs))


def check_crashed_saves(build, work):
    out = os.path.join(work, "crash")
    os.makedirs(out)
    m = dump(build, out, "--what=crash")
    bad = []
    for point in m["points"]:
        train_dir = os.path.join(out, "point_%d" % point)
        prefix = tf.train.latest_checkpoint(train_dir)
        try:
            reader = tf.train.load_checkpoint(prefix)
            step = int(reader.get_tensor("global_step"))
            want = {100: 1.0, 200: 2.0}[step]
            whole = all(np.all(reader.get_tensor(n) == want) for n in ("w", "w/Momentum"))
        except Exception as e:  # noqa: BLE001 - any failure to load is the finding
            whole = False
            step = repr(e)[:60]
        if not whole:
            bad.append("%d (%s)" % (point, step))
    report("every crash point of a save leaves a checkpoint TensorFlow loads whole", not bad,
           "%d write points%s" % (len(m["points"]), ", not at: " + ", ".join(bad) if bad else ""))


# 14. Keras models -----------------------------------------------------------

def keras_residual(k, dropout):
    """A Functional model with a residual block, in Keras `k` (Keras 3 or
    tf_keras): most of the layers pstrain reads."""
    inp = k.Input((28, 28, 1), name="image")
    x = k.layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
    x = k.layers.MaxPooling2D(2)(x)
    y = k.layers.Conv2D(8, 3, padding="same", use_bias=False)(x)
    y = k.layers.BatchNormalization()(y)
    y = k.layers.Activation("relu")(y)
    y = k.layers.Conv2D(8, 3, padding="same", use_bias=False, kernel_initializer="he_normal")(y)
    y = k.layers.BatchNormalization(momentum=0.9, epsilon=1e-5)(y)
    z = k.layers.ReLU()(k.layers.Add()([x, y]))
    z = k.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(z)
    z = k.layers.AveragePooling2D(2, padding="same")(z)
    z = k.layers.Dropout(dropout)(k.layers.Flatten()(z))
    a = k.layers.Dense(32, activation="tanh",
                       kernel_regularizer=k.regularizers.L2(1e-3))(z)
    b = k.layers.Dense(32, activation="sigmoid")(z)
    c = k.layers.Concatenate()([a, k.layers.Multiply()([a, b])])
    logits = k.layers.Dense(10)(c)
    return k.Model(inp, k.layers.Softmax()(logits), name="residual"), logits


def keras_name(model, v):
    """A Keras variable's name as pstrain gives it: Keras 3's path or Keras
    2's name ("conv2d/kernel:0"), without the model's own scope."""
    name = v.path if hasattr(v, "path") else v.name.split(":")[0]
    return name[len(model.name) + 1:] if name.startswith(model.name + "/") else name


def keras_model_dir(work, check, label, k, dropout):
    """A fresh directory for one check of one Keras version, the residual
    model built in it, and the model's JSON written there: (directory,
    model, its logits tensor, the JSON's path)."""
    out = os.path.join(work, check + "_" + label.split()[0])
    os.makedirs(out)
    model, logits = keras_residual(k, dropout)
    json_path = os.path.join(out, "model.json")
    with open(json_path, "w") as f:
        f.write(model.to_json())
    return out, model, logits, json_path


def keras_versions():
    import keras
    versions = [("Keras " + keras.__version__, keras)]
    try:
        import tf_keras
        versions.append(("tf_keras " + tf_keras.__version__, tf_keras))
    except ImportError:
        print("     tf_keras is not installed: Keras 2's JSON is not checked")
    return versions


def check_keras_logits(build, work, label, k):
    """The model trained by Keras (200 steps of Adam on the training images,
    as pstrain prepares them: pixel / 255 - 0.5), its JSON and a
    tf.train.Checkpoint of it: pstrain's logits on the 10,000 test images
    against Keras's own."""
    out, model, logits, json_path = keras_model_dir(work, "keras_logits", label, k, 0.2)
    images = read_idx(os.path.join(FASHION_MNIST, "train-images-idx3-ubyte.gz"))[:25600]
    labels = read_idx(os.path.join(FASHION_MNIST, "train-labels-idx1-ubyte.gz"))[:25600]
    model.compile(optimizer=k.optimizers.Adam(0.001), loss="sparse_categorical_crossentropy")
    model.fit(images.reshape(-1, 28, 28, 1).astype(np.float32) / 255.0 - 0.5,
              labels.astype(np.int64), batch_size=128, epochs=1, verbose=0)
    prefix = tf.train.Checkpoint(model=model).write(os.path.join(out, "ckpt"))
    m = dump(build, out, "--what=logits", "--model=keras:" + json_path,
             "--data_dir=" + FASHION_MNIST, "--warm_start_from=" + prefix)
    images = load(out, "images.f32", shape=[m["count"]] + m["example"])
    ours = load(out, "logits.f32", shape=[m["count"], m["classes"]])
    labels = load(out, "labels.i32", np.int32)
    logit_model = k.Model(model.input, logits)
    theirs = np.concatenate([logit_model(images[i:i + 1000], training=False).numpy()
                             for i in range(0, m["count"], 1000)])
    rel = float(np.max(np.max(np.abs(theirs - ours), axis=1) /
                       np.maximum(np.max(np.abs(theirs), axis=1), 1e-30)))
    report("%s residual model from its JSON, warm-started from its checkpoint" % label,
           rel <= 1e-5 and np.array_equal(np.argmax(ours, 1), np.argmax(theirs, 1)),
           "%d variables; logits on %d test images, relative error %.2e; precision@1 "
           "pstrain %.4f, Keras %.4f" % (len(model.weights), m["count"], rel,
                                         np.mean(np.argmax(ours, 1) == labels),
                                         np.mean(np.argmax(theirs, 1) == labels)))


def check_keras_gradients(build, work, label, k):
    """pstrain's initial values of the model and a random batch: Keras, given
    the same values by variable name, gives the same loss (its L2
    regularizer included), logits and gradients (batch norm in training)."""
    out, model, logits, json_path = keras_model_dir(work, "keras_grads", label, k, 0.0)
    m = dump(build, out, "--what=model", "--model=keras:" + json_path, "--batch=16",
             "--seed=3")
    ours = {var["name"]: var for var in m["variables"]}
    trainable = []
    for v in model.weights:
        name = keras_name(model, v)
        v.assign(load(out, ours[name]["value"], shape=ours[name]["shape"]))
        if v.trainable:
            trainable.append((name, v))
    images = tf.constant(load(out, m["images"]["file"], shape=m["images"]["shape"]))
    labels = tf.constant(load(out, m["labels"], np.int32))
    logit_model = k.Model(model.input, logits)
    # The dump's logits are inference's; taken first, as a training call
    # moves Keras's batch norm statistics.
    inference = logit_model(images, training=False).numpy()
    with tf.GradientTape() as tape:
        y = logit_model(images, training=True)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=y)) + tf.add_n(logit_model.losses)
    grads = tape.gradient(loss, [v for _, v in trainable])
    worst = rel_error(load(out, m["logits"]["file"], shape=m["logits"]["shape"]), inference)
    loss_err = rel_error(m["loss"], loss.numpy())
    worst_name = "the logits"
    for (name, _), g in zip(trainable, grads):
        err = rel_error(load(out, ours[name]["grad"], shape=ours[name]["shape"]), g.numpy())
        if err > worst:
            worst, worst_name = err, name
    report("%s residual model's loss and gradients" % label, loss_err <= 1e-5 and worst <= 1e-4,
           "loss pstrain %.7f, Keras %.7f; worst relative error of the logits and %d "
           "gradients %.2e (%s)" % (m["loss"], loss.numpy(), len(trainable), worst, worst_name))


def check_keras_trained(build, work, label, k):
    """Trained by pstrain from the JSON alone (--checkpoint_format=tensorflow),
    read back into the Keras model by Keras's variable names: Keras's own
    precision@1 on the test images is pstrain's final one."""
    out, model, logits, json_path = keras_model_dir(work, "keras_trained", label, k, 0.2)
    train_dir = os.path.join(out, "train")
    accuracy, ok = train_local(build, "keras:" + json_path, FASHION_MNIST, train_dir,
                               "--max_steps=300", "--checkpoint_format=tensorflow",
                               "--optimizer=Adam", "--learning_rate=0.001")
    prefix = tf.train.latest_checkpoint(train_dir) if ok else None
    if prefix is None:
        report("%s residual model trained by pstrain" % label, False, "no checkpoint")
        return
    reader = tf.train.load_checkpoint(prefix)
    for v in model.weights:
        v.assign(reader.get_tensor(keras_name(model, v)))
    # The test images as pstrain's evaluation prepares them.
    m = dump(build, out, "--what=logits", "--model=keras:" + json_path,
             "--data_dir=" + FASHION_MNIST, "--checkpoint=" + prefix)
    images = load(out, "images.f32", shape=[m["count"]] + m["example"])
    labels = load(out, "labels.i32", np.int32)
    predicted = np.concatenate([np.argmax(model(images[i:i + 1000], training=False), 1)
                                for i in range(0, len(images), 1000)])
    theirs = float(np.mean(predicted == labels))
    report("%s residual model trained by pstrain, evaluated by Keras" % label,
           accuracy != "none" and abs(float(accuracy) - theirs) < 1e-4,
           "300 steps; precision@1 pstrain %s, Keras on pstrain's %s %.4f" %
           (accuracy, os.path.basename(prefix), theirs))


def check_keras(build, work):
    for label, k in keras_versions():
        check_keras_logits(build, work, label, k)
        check_keras_gradients(build, work, label, k)
    label, k = keras_versions()[0]
    check_keras_trained(build, work, label, k)


# 15. layers of several inputs --------------------------------------------

GRAPH_LAYERS = """
name: "graph_layers" input_shape: [4, 4, 2] num_classes: 3
layer { name: "pad" channel_pad { before: 1 after: 2 } }
layer { name: "flat" flatten {} }
layer { name: "a" dense { units: 6 weights_initializer { truncated_normal_stddev: 0.2 } biases_initializer { constant: 0.1 } } }
layer { name: "b" dense { units: 6 weights_initializer { truncated_normal_stddev: 0.2 } biases_initializer { constant: -0.1 } } inputs: "flat" }
layer { name: "c" dense { units: 6 relu: true weights_initializer { truncated_normal_stddev: 0.2 } biases_initializer { constant: 0.05 } } inputs: "flat" }
layer { name: "ta" activation { function: TANH } inputs: "a" }
layer { name: "sb" activation { function: SIGMOID } inputs: "b" }
layer { name: "sum" add {} inputs: ["ta", "sb", "c"] }
layer { name: "prod" multiply {} inputs: ["ta", "c"] }
layer { name: "dots" dot_interaction {} inputs: ["sum", "prod", "c"] }
layer { name: "fm" fm { dim: 6 } inputs: ["sum", "prod", "c"] }
layer { name: "cat" concat {} inputs: ["dots", "fm", "sum"] }
layer { name: "cross1" cross {} inputs: ["cat"] }
layer { name: "cross2" cross {} inputs: ["cat", "cross1"] }
layer { name: "logits" dense { units: 3 weights_initializer { truncated_normal_stddev: 0.2 } biases_initializer { constant: 0 } } }
"""


def tf_graph_layers(v, images):
    """GRAPH_LAYERS in TensorFlow ops, on the weights `v` (name -> tensor)."""
    def dense(x, name):
        return tf.matmul(x, v[name + "/weights"]) + v[name + "/biases"]

    padded = tf.pad(images, [[0, 0], [0, 0], [0, 0], [1, 2]])
    flat = tf.reshape(padded, [-1, 4 * 4 * 5])
    ta = tf.tanh(dense(flat, "a"))
    sb = tf.sigmoid(dense(flat, "b"))
    c = tf.nn.relu(dense(flat, "c"))
    total = ta + sb + c
    prod = ta * c
    fields = [total, prod, c]
    dots = [tf.reduce_sum(fields[i] * fields[j], 1, keepdims=True)
            for i in range(1, 3) for j in range(i)]
    interaction = tf.concat([total] + dots, 1)
    stacked = tf.stack(fields, 1)
    fm = 0.5 * tf.reduce_sum(tf.square(tf.reduce_sum(stacked, 1)) -
                             tf.reduce_sum(tf.square(stacked), 1), 1, keepdims=True)
    cat = tf.concat([interaction, fm, total], 1)
    cross1 = cat * (tf.matmul(cat, v["cross1/kernel"]) + v["cross1/bias"]) + cat
    cross2 = cat * (tf.matmul(cross1, v["cross2/kernel"]) + v["cross2/bias"]) + cross1
    return dense(cross2, "logits")


def check_graph_layers(build, work):
    out = os.path.join(work, "graph_layers")
    os.makedirs(out)
    spec = os.path.join(out, "graph_layers.pbtxt")
    with open(spec, "w") as f:
        f.write(GRAPH_LAYERS)
    m = dump(build, out, "--what=model", "--model=" + spec, "--batch=8", "--seed=9")
    images = tf.constant(load(out, m["images"]["file"], shape=m["images"]["shape"]))
    labels = tf.constant(load(out, m["labels"], np.int32))
    v = {var["name"]: tf.Variable(load(out, var["value"], shape=var["shape"]))
         for var in m["variables"]}
    names = [var["name"] for var in m["variables"]]
    with tf.GradientTape() as tape:
        logits = tf_graph_layers(v, images)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
    grads = tape.gradient(loss, [v[n] for n in names])
    worst = rel_error(load(out, m["logits"]["file"], shape=m["logits"]["shape"]), logits.numpy())
    for var, g in zip(m["variables"], grads):
        worst = max(worst, rel_error(load(out, var["grad"], shape=var["shape"]), g.numpy()))
    loss_err = rel_error(m["loss"], loss.numpy())
    report("channel_pad, sigmoid, tanh, add, multiply, dot_interaction, fm, concat and cross",
           loss_err <= 1e-5 and worst <= 1e-4,
           "loss pstrain %.7f, TensorFlow %.7f; worst relative error of the logits and %d "
           "gradients %.2e" % (m["loss"], loss.numpy(), len(names), worst))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build", help="pstrain's build directory")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    print("TensorFlow %s" % tf.__version__)
    with tempfile.TemporaryDirectory(prefix="pstrain-crosscheck-") as work:
        check_cifar10(build, work)
        check_distortions(build, work)
        check_tfrecord(build, work)
        check_events(build, work)
        check_sparse_optimizers(build, work)
        check_embedding_bag(build, work)
        check_data_tool_tfrecords(work)
        check_tf_checkpoints(build, work)
        check_cifar10_checkpoint(build, work)
        check_tf_trained_cifar10(build, work)
        check_crashed_saves(build, work)
        check_table_tensors(build, work)
        check_onnx_export(build, work)
        check_keras(build, work)
        check_graph_layers(build, work)
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
