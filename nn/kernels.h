// Kernels: the compute of the layers, one interface per kind of operation.
// A Backend (nn/backend.h) makes them; the layers (nn/layers/) hold them and
// do no arithmetic of their own, so that a backend for other hardware is a
// folder beside nn/cpu/ and changes no layer.
//
// Every kernel takes whole batches in TensorFlow's layouts: activations NHWC
// (the batch first), convolution weights HWIO, dense weights [in, out].
// Outputs are resized by the kernel. A shape that does not fit is
// InvalidArgument; a failure of the library underneath is Internal, naming
// the call.
//
// Thread safety: a kernel may keep state between Forward and Backward (a
// plan per input shape, an argmax workspace, a dropout mask); one thread at a
// time per kernel.
#ifndef PSTRAIN_NN_KERNELS_H_
#define PSTRAIN_NN_KERNELS_H_

#include <cstdint>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/padding.h"

namespace pstrain {
namespace nn {

struct Conv2DConfig {
  int64_t kernel_h;
  int64_t kernel_w;
  int64_t in_channels;
  int64_t out_channels;
  int64_t stride;  // the same along height and width
  Padding padding;
};

// Max and average pooling: a square window.
struct PoolConfig {
  int64_t window;
  int64_t stride;  // the same along height and width
  Padding padding;
};

// tf.nn.lrn's parameters, with its defaults.
struct LrnConfig {
  int64_t depth_radius = 5;
  float bias = 1.0f;
  float alpha = 1.0f;
  float beta = 0.5f;
};

struct BatchNormConfig {
  int64_t channels;
  float epsilon = 1e-3f;   // tf.layers.batch_normalization's default
  float momentum = 0.99f;  // the moving averages' decay, TF's default
};

// y = op(x, w) + b with op linear in x and w: tf.nn.conv2d (TF SAME padding
// is asymmetric, the smaller half before) or a dense layer's x w over x
// flattened to [N, in] in its own row-major order.
class AffineKernel {
 public:
  virtual ~AffineKernel() = default;
  virtual Status Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) = 0;
  // From dy = d(loss)/dy: dx (skipped when null, as for the input images;
  // shaped like x), dw and db.
  virtual Status Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx,
                          Tensor* dw, Tensor* db) = 0;
};

// tf.nn.max_pool (padded cells never win) or tf.nn.avg_pool (padded cells
// are not counted).
class PoolKernel {
 public:
  virtual ~PoolKernel() = default;
  virtual Status Forward(const Tensor& x, Tensor* y) = 0;
  // The same y where no Backward follows (evaluation): the CPU's max
  // pooling keeps no winners for one.
  virtual Status Infer(const Tensor& x, Tensor* y) { return Forward(x, y); }
  // dx for the input of the latest Forward of shape x_shape; max pooling
  // answers FailedPrecondition when no Forward of that shape ran.
  virtual Status Backward(const Shape& x_shape, const Tensor& dy, Tensor* dx) = 0;
};

// tf.nn.lrn over the channels (docs/MODELS.md).
class LrnKernel {
 public:
  virtual ~LrnKernel() = default;
  virtual Status Forward(const Tensor& x, Tensor* y) = 0;
  virtual Status Backward(const Tensor& x, const Tensor& dy, Tensor* dx) = 0;
};

// tf.nn.dropout in training: a fresh mask per Forward; Backward applies the
// latest one (FailedPrecondition when dy's shape is not its).
class DropoutKernel {
 public:
  virtual ~DropoutKernel() = default;
  virtual Status Forward(const Tensor& x, Tensor* y) = 0;
  virtual Status Backward(const Tensor& dy, Tensor* dx) = 0;
};

// tf.layers.batch_normalization over the last axis.
class BatchNormKernel {
 public:
  virtual ~BatchNormKernel() = default;
  // With the batch's statistics, kept for Backward and the moving averages.
  virtual Status ForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 Tensor* y) = 0;
  // With the moving statistics.
  virtual Status ForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                  const Tensor& moving_mean, const Tensor& moving_variance,
                                  Tensor* y) = 0;
  // dx, dgamma and dbeta after ForwardTraining; dx may be dy.
  virtual Status Backward(const Tensor& gamma, const Tensor& dy, Tensor* dx, Tensor* dgamma,
                          Tensor* dbeta) = 0;
  // The assign_sub deltas (1 - momentum) * (moving - batch) that move the
  // moving statistics toward the latest training batch's.
  virtual Status MovingAverageDeltas(const Tensor& moving_mean, const Tensor& moving_variance,
                                     Tensor* mean_delta, Tensor* variance_delta) = 0;
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_KERNELS_H_
