#include "data/data_flags.h"

DEFINE_string(data_dir, "/usr/share/datasets/fashion-mnist",
              "Directory of the MNIST-format dataset (train-images-idx3-ubyte.gz, ...); the "
              "default is where Debian's dataset-fashion-mnist package installs it.");
