#!/usr/bin/env bash
# install_cuda_packages.sh build|runtime: NVIDIA's CUDA 13 packages for
# Debian 12 from NVIDIA's apt repository, for the GPU image
# (deploy/docker/Dockerfile with --build-arg CUDA=1):
#   build    the toolkit (nvcc, the runtime, cuBLAS), cuDNN 9 and NCCL with
#            their headers, for building the CUDA backend;
#   runtime  the shared libraries the binaries link: the CUDA runtime,
#            cuBLAS, cuDNN 9, NCCL. The driver (libcuda) is not installed:
#            the NVIDIA container toolkit brings the host's into the container.
# Development machines here have the toolkit at /usr/local/cuda already and
# do not run this.
set -euo pipefail
kind="${1:?build or runtime}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends ca-certificates curl
curl -fsSL -o /tmp/cuda-keyring.deb \
  https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb
dpkg -i /tmp/cuda-keyring.deb
rm /tmp/cuda-keyring.deb
apt-get update -qq
case "$kind" in
  build)
    apt-get install -y -qq --no-install-recommends \
      cuda-toolkit-13-0 libcudnn9-dev-cuda-13 libnccl-dev ;;
  runtime)
    apt-get install -y -qq --no-install-recommends \
      cuda-cudart-13-0 libcublas-13-0 libcudnn9-cuda-13 libnccl2 ;;
  *)
    echo "install_cuda_packages.sh: build or runtime, not $kind" >&2
    exit 2 ;;
esac
rm -rf /var/lib/apt/lists/*
