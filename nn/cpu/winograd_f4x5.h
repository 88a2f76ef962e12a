// Winograd's minimal filtering F(4x4, 5x5) (Lavin and Gray, "Fast Algorithms
// for Convolutional Neural Networks", 2016), with the interpolation points
// 0, 1, -1, 2, -2, 1/2, -1/2 and infinity: a 4x4 tile of a 5x5 correlation's
// output is
//
//   Y = A^T [ (G g G^T) (.) (B^T d B) ] A
//
// for an 8x8 input tile d and 5x5 filter g, where (.) multiplies element-wise:
// 64 multiplications per pair of channels where the direct method needs 400.
// Summed over input channels, each of the 64 points becomes one small matrix
// product (nn/cpu/winograd_conv.cc); these functions are the transforms
// around them. The adjoints give the gradients: dd = B [U (.) (A dY A^T)] B^T
// and dg = G^T [(A dY A^T) (.) V] G.
//
// In float32 the result differs from a direct sum by a few parts in a
// million of the largest output (F(2x2, 5x5), with 6x6 tiles, by about half
// as much): the half points keep the transforms' coefficients small.
//
// Every function works on whole pixels of `channels` contiguous floats (the
// NHWC layout) and vectorizes across them. A transformed tile is 64 such
// vectors, point p = 8 * row + column at out + p * out_stride.
#ifndef PSTRAIN_NN_CPU_WINOGRAD_F4X5_H_
#define PSTRAIN_NN_CPU_WINOGRAD_F4X5_H_

#include <cstdint>

namespace pstrain {
namespace nn {
namespace cpu {
namespace winograd {

constexpr int kTile = 8;     // input tile side
constexpr int kOutTile = 4;  // output tile side
constexpr int kKernel = 5;
constexpr int kPoints = kTile * kTile;

// A strided view of a tile of pixels: pixel (r, s) at data + r * row_stride
// + s * pixel_stride.
struct PixelTile {
  const float* data;
  int64_t row_stride;
  int64_t pixel_stride;
};

// V = B^T d B for an 8x8 input tile. tmp holds 64 * channels floats.
void InputTransform(const PixelTile& d, int64_t channels, float* tmp, float* v, int64_t v_stride);

// Y = A^T M A (+ bias when not null) for the 64 points of m, written to the
// first `rows` x `cols` pixels of the 4x4 output tile at out (row and pixel
// strides as for PixelTile). tmp holds 35 * channels floats.
void OutputTransform(const float* m, int64_t m_stride, int64_t channels, const float* bias,
                     float* tmp, float* out, int64_t row_stride, int64_t pixel_stride, int rows,
                     int cols);

// Z = A dY A^T for a 4x4 output-gradient tile of which the first `rows` x
// `cols` pixels exist (the rest count as zero). tmp holds 33 * channels
// floats.
void OutputGradTransform(const PixelTile& dy, int rows, int cols, int64_t channels, float* tmp,
                         float* z, int64_t z_stride);

// U = G g G^T for every pair of channels of HWIO weights [5,5,in,out]:
// u[(p * in + i) * out + o]. tmp holds 40 * out floats.
void WeightTransform(const float* w, int64_t in, int64_t out, float* tmp, float* u);

// dW = G^T dU G: the inverse direction of WeightTransform, from du laid out
// as u is to HWIO gradients [5,5,in,out]. tmp holds 40 * out floats.
void WeightGradTransform(const float* du, int64_t in, int64_t out, float* tmp, float* dw);

}  // namespace winograd
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_WINOGRAD_F4X5_H_
