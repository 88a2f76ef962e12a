// Winograd's minimal filtering F(2x2, 5x5) (Lavin and Gray, "Fast Algorithms
// for Convolutional Neural Networks", 2016), with the interpolation points
// 0, 1, -1, 2, -2 and infinity: a 2x2 tile of a 5x5 correlation's output is
//
//   Y = A^T [ (G g G^T) (.) (B^T d B) ] A
//
// for a 6x6 input tile d and 5x5 filter g, where (.) multiplies element-wise:
// 36 multiplications per pair of channels where the direct method needs 100.
// Summed over input channels, each of the 36 points becomes one small matrix
// product (nn/cpu/winograd_conv.cc); these functions are the transforms
// around them. The adjoints give the gradients: dd = B [U (.) (A dY A^T)] B^T
// and dg = G^T [(A dY A^T) (.) V] G.
//
// Every function works on whole pixels of `channels` contiguous floats (the
// NHWC layout) and vectorizes across them. A transformed tile is 36 such
// vectors, point p = 6 * row + column at out + p * out_stride.
#ifndef PSTRAIN_NN_CPU_WINOGRAD_F2X5_H_
#define PSTRAIN_NN_CPU_WINOGRAD_F2X5_H_

#include <cstdint>

namespace pstrain {
namespace nn {
namespace cpu {
namespace winograd {

constexpr int kTile = 6;     // input tile side
constexpr int kOutTile = 2;  // output tile side
constexpr int kKernel = 5;
constexpr int kPoints = kTile * kTile;

// A strided view of a tile of pixels: pixel (r, s) at data + r * row_stride
// + s * pixel_stride.
struct PixelTile {
  const float* data;
  int64_t row_stride;
  int64_t pixel_stride;
};

// V = B^T d B for a 6x6 input tile. tmp holds 36 * channels floats.
void InputTransform(const PixelTile& d, int64_t channels, float* tmp, float* v,
                    int64_t v_stride);

// Y = A^T M A (+ bias when not null) for the 36 points of m, written to the
// first `rows` x `cols` pixels of the 2x2 output tile at out (row and pixel
// strides as for PixelTile). tmp holds 12 * channels floats.
void OutputTransform(const float* m, int64_t m_stride, int64_t channels, const float* bias,
                     float* tmp, float* out, int64_t row_stride, int64_t pixel_stride, int rows,
                     int cols);

// Z = A dY A^T for a 2x2 output-gradient tile of which the first `rows` x
// `cols` pixels exist (the rest count as zero). tmp holds 13 * channels
// floats.
void OutputGradTransform(const PixelTile& dy, int rows, int cols, int64_t channels, float* tmp,
                         float* z, int64_t z_stride);

// U = G g G^T for every pair of channels of HWIO weights [5,5,in,out]:
// u[(p * in + i) * out + o]. tmp holds 30 * out floats.
void WeightTransform(const float* w, int64_t in, int64_t out, float* tmp, float* u);

// dW = G^T dU G: the inverse direction of WeightTransform, from du laid out
// as u is to HWIO gradients [5,5,in,out]. tmp holds 30 * out floats.
void WeightGradTransform(const float* du, int64_t in, int64_t out, float* tmp, float* dw);

}  // namespace winograd
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_WINOGRAD_F2X5_H_
