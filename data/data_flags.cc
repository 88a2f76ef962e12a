#include "data/data_flags.h"

DEFINE_string(data_dir, "/usr/share/datasets/fashion-mnist",
              "Directory of the data set: MNIST IDX files (train-images-idx3-ubyte[.gz], ...), "
              "the CIFAR-10 binaries (the folder holding cifar-10-batches-bin/, or that folder) "
              "or TFRecord files of tf.train.Example (train.tfrecords[.gz], "
              "test.tfrecords[.gz]); the default is where Debian's dataset-fashion-mnist "
              "package installs Fashion-MNIST");
DEFINE_string(data_format, "auto",
              "idx, cifar or tfrecord; auto: recognised from the files in --data_dir");
