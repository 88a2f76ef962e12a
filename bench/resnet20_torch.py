#!/usr/bin/env python3
"""PyTorch's ResNet-20, built and trained as pstrain's resnet20 recipe
(nn/models/resnet20.pbtxt): the peer of bench/resnet20_bench.sh.

The same network (tf_cnn_benchmarks' CIFAR ResNet-20, version 1: 3x3
convolutions without bias before batch norm, option-A shortcuts, TF's SAME
padding, which pads a stride-2 convolution after rather than around), the
same initialization (He-normal truncated at two stddevs, widened to keep
the variance), batch norm with momentum 0.997 and epsilon 1e-5, momentum
0.9 at 0.1 with weight decay 2e-4 on the convolutions' and the dense
layer's weights, batches of 128, and the same input: CIFAR-10 binaries,
each training image flipped left-right at random, its brightness moved by
up to 63 and its contrast by a factor in [0.2, 1.8], then standardized per
image (cifar10_input.py); test images standardized only.

  resnet20_torch.py --data_dir=DIR --epochs=N [--threads=2] [--seed=1]

Prints each epoch's training time and examples per second, the mean time
of a step, and the test accuracy at the end.
"""
import argparse
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_cifar(path):
    raw = np.fromfile(path, dtype=np.uint8).reshape(-1, 3073)
    labels = raw[:, 0].astype(np.int64)
    images = raw[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)  # HWC
    return images, labels


def standardize(x):
    n = x[0].size
    mean = x.reshape(len(x), -1).mean(axis=1)
    std = x.reshape(len(x), -1).std(axis=1)
    adjusted = np.maximum(std, 1.0 / math.sqrt(n))
    return (x - mean[:, None, None, None]) / adjusted[:, None, None, None]


def distort(images, rng):
    x = images.astype(np.float32)
    flip = rng.random(len(x)) < 0.5
    x[flip] = x[flip][:, :, ::-1, :]
    x += rng.uniform(-63, 63, size=(len(x), 1, 1, 1)).astype(np.float32)
    factor = rng.uniform(0.2, 1.8, size=(len(x), 1, 1, 1)).astype(np.float32)
    mean = x.mean(axis=(1, 2), keepdims=True)
    x = (x - mean) * factor + mean
    return standardize(x)


def he_normal(conv):
    fan_in = conv.weight[0].numel()
    std = math.sqrt(2.0 / fan_in) / 0.87962566
    nn.init.trunc_normal_(conv.weight, std=std, a=-2 * std, b=2 * std)


class SamePadConv(nn.Conv2d):
    """A 3x3 convolution with TF's SAME padding: stride 2 pads one row and
    column after the input, none before."""

    def __init__(self, cin, cout, stride):
        super().__init__(cin, cout, 3, stride=stride, padding=1 if stride == 1 else 0,
                         bias=False)
        he_normal(self)

    def forward(self, x):
        if self.stride[0] == 2:
            x = F.pad(x, (0, 1, 0, 1))
        return super().forward(x)


def bn(c):
    return nn.BatchNorm2d(c, eps=1e-5, momentum=0.003)  # TF's decay 0.997


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1, self.bn1 = SamePadConv(cin, cout, stride), bn(cout)
        self.conv2, self.bn2 = SamePadConv(cout, cout, 1), bn(cout)
        self.stride, self.pad = stride, (cout - cin) // 2

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        short = x
        if self.stride == 2:
            short = x[:, :, ::2, ::2]
            short = F.pad(short, (0, 0, 0, 0, self.pad, self.pad))
        return F.relu(y + short)


class ResNet20(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv0, self.bn0 = SamePadConv(3, 16, 1), bn(16)
        blocks, cin = [], 16
        for depth in (16, 32, 64):
            for b in range(3):
                blocks.append(Block(cin, depth, 2 if b == 0 and depth > 16 else 1))
                cin = depth
        self.blocks = nn.Sequential(*blocks)
        self.logits = nn.Linear(64, 10)
        std = math.sqrt(1.0 / 64) / 0.87962566
        nn.init.trunc_normal_(self.logits.weight, std=std, a=-2 * std, b=2 * std)
        nn.init.zeros_(self.logits.bias)

    def forward(self, x):
        x = F.relu(self.bn0(self.conv0(x)))
        x = self.blocks(x)
        return self.logits(x.mean(dim=(2, 3)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data_dir", required=True, help="holds cifar-10-batches-bin/")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    folder = os.path.join(args.data_dir, "cifar-10-batches-bin")
    parts = [read_cifar(os.path.join(folder, "data_batch_%d.bin" % i)) for i in range(1, 6)]
    train_x = np.concatenate([p[0] for p in parts])
    train_y = np.concatenate([p[1] for p in parts])
    test_x, test_y = read_cifar(os.path.join(folder, "test_batch.bin"))
    model = ResNet20()
    decayed = [m.weight for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    others = [p for p in model.parameters() if all(p is not d for d in decayed)]
    optimizer = torch.optim.SGD([{"params": decayed, "weight_decay": 2e-4},
                                 {"params": others, "weight_decay": 0.0}], lr=0.1, momentum=0.9)
    batch = 128
    step_times = []
    for epoch in range(args.epochs):
        model.train()
        order = rng.permutation(len(train_x))
        start = time.time()
        for first in range(0, len(order) - batch + 1, batch):
            at = order[first:first + batch]
            x = torch.from_numpy(distort(train_x[at], rng).transpose(0, 3, 1, 2).copy())
            y = torch.from_numpy(train_y[at])
            t = time.time()
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            step_times.append(time.time() - t)
        seconds = time.time() - start
        steps = len(order) // batch
        print("epoch %d: %.1f s, %.1f examples/s, loss %.3f" %
              (epoch + 1, seconds, steps * batch / seconds, loss.item()), flush=True)
    model.eval()
    correct = 0
    with torch.no_grad():
        for first in range(0, len(test_x), 500):
            x = standardize(test_x[first:first + 500].astype(np.float32))
            logits = model(torch.from_numpy(x.transpose(0, 3, 1, 2).copy()))
            correct += int((logits.argmax(dim=1).numpy() == test_y[first:first + 500]).sum())
    print("pytorch %s: step %.3f s (model only, mean of %d), test accuracy %.4f (%d examples)" %
          (torch.__version__, sum(step_times) / len(step_times), len(step_times),
           correct / len(test_x), len(test_x)))


if __name__ == "__main__":
    main()
