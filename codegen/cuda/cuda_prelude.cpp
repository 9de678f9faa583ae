// The text every emitted .cu file starts with (types and the loop IR's
// arithmetic helpers), and the host emulation the tests compile it with.
#include "codegen/cuda/cuda_c.h"

namespace fuselens {

std::string cudaPrelude() {
  return R"(
typedef float fl_f32_t;
typedef unsigned short fl_f16;
typedef unsigned short fl_bf16;
typedef unsigned char fl_bool;
typedef signed char fl_i8;
typedef unsigned char fl_u8;
typedef short fl_i16;
typedef int fl_i32;
typedef long long fl_i64;

__device__ __forceinline__ float fl_bits_f(unsigned u) { union { unsigned u; float f; } x; x.u = u; return x.f; }
__device__ __forceinline__ unsigned fl_f_bits(float f) { union { unsigned u; float f; } x; x.f = f; return x.u; }
__device__ __forceinline__ float fl_inff() { return fl_bits_f(0x7f800000u); }
__device__ __forceinline__ float fl_nanf() { return fl_bits_f(0x7fc00000u); }

// f16 <-> f32, round to nearest even (what ONNX Runtime's MLFloat16 does).
// On the device a conversion to or from f16 (and to bf16 from sm_80) is one
// cvt instruction (cvt.rn rounds to nearest even); the bit-level forms are
// the host emulation's and give the same values (a NaN's payload aside).
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ float fl_h2f(fl_f16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ fl_f16 fl_f2h(float f) { fl_f16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
#else
__device__ __forceinline__ float fl_h2f(fl_f16 h) {
  unsigned s = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float r = (float)m * 5.9604644775390625e-08f;
    return s ? -r : r;
  }
  if (e == 31) return fl_bits_f(s | 0x7f800000u | (m << 13));
  return fl_bits_f(s | ((e + 112u) << 23) | (m << 13));
}
__device__ __forceinline__ fl_f16 fl_f2h(float f) {
  unsigned u = fl_f_bits(f), s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (fl_f16)(s | 0x7e00u);
  if (a >= 0x477ff000u) return (fl_f16)(s | 0x7c00u);
  if (a < 0x38800000u) return (fl_f16)(s | (unsigned)rintf(fl_bits_f(a) * 16777216.0f));
  unsigned r = a - 0x38000000u;
  return (fl_f16)(s | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
}
#endif
__device__ __forceinline__ float fl_b2f(fl_bf16 b) { return fl_bits_f((unsigned)b << 16); }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ __forceinline__ fl_bf16 fl_f2b(float f) { fl_bf16 b; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f)); return b; }
#else
__device__ __forceinline__ fl_bf16 fl_f2b(float f) {
  unsigned u = fl_f_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (fl_bf16)((u >> 16) | 0x40u);
  return (fl_bf16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
#endif

// float -> integer as ONNX Cast: truncate toward zero through i64, NaN -> 0, saturating.
__device__ __forceinline__ fl_i64 fl_f2i(double v) {
  if (v >= 9223372036854775808.0) return 9223372036854775807LL;
  if (v <= -9223372036854775808.0) return -9223372036854775807LL - 1;
  if (!(v == v)) return 0;
  return (fl_i64)v;
}

// The loop IR's definitions: max(a, b) = a > b ? a : b; integer x / 0 = x and
// x % 0 = 0, x / -1 = -x; shifts by the width or more give 0.
template <class T> __device__ __forceinline__ T fl_max(T a, T b) { return a > b ? a : b; }
template <class T> __device__ __forceinline__ T fl_min(T a, T b) { return a < b ? a : b; }
template <class T> __device__ __forceinline__ T fl_idiv(T a, T b) {
  if (b == 0) return a;
  if ((T)-1 < 0 && b == (T)-1) return (T)(-a);
  return (T)(a / b);
}
template <class T> __device__ __forceinline__ T fl_imod(T a, T b) {
  if (b == 0 || ((T)-1 < 0 && b == (T)-1)) return 0;
  return (T)(a % b);
}
template <class T> __device__ __forceinline__ T fl_iabs(T a) { return a < 0 ? (T)(-a) : a; }
template <class T> __device__ __forceinline__ T fl_shl(T a, T b) {
  return (unsigned long long)b >= 8 * sizeof(T) ? (T)0 : (T)(a << b);
}
template <class T> __device__ __forceinline__ T fl_shr(T a, T b) {
  return (unsigned long long)b >= 8 * sizeof(T) ? (T)0 : (T)(a >> b);
}

// Block-wide reductions for one-block-per-row stages: a tree of warp shuffles
// in each warp, then thread 0 combines the warps' results through shared
// memory; every thread gets the result. Blocks are whole warps, and every
// thread of the block calls them the same number of times.
template <class T, class Op> __device__ __forceinline__ T fl_block_reduce(T v, Op op) {
  __shared__ T fl_red[33];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const unsigned warps = (blockDim.x + 31u) >> 5;
  for (unsigned o = 16; o > 0; o >>= 1) {
    T other = __shfl_down_sync(0xffffffffu, v, o);
    if (lane + o < 32u && threadIdx.x + o < blockDim.x) v = op(v, other);
  }
  if (lane == 0) fl_red[warp] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    T r = fl_red[0];
    for (unsigned w = 1; w < warps; ++w) r = op(r, fl_red[w]);
    fl_red[32] = r;
  }
  __syncthreads();
  v = fl_red[32];
  __syncthreads();  // the next reduction reuses fl_red
  return v;
}
struct fl_op_add { template <class T> __device__ T operator()(T a, T b) const { return a + b; } };
struct fl_op_max { template <class T> __device__ T operator()(T a, T b) const { return fl_max(a, b); } };
struct fl_op_min { template <class T> __device__ T operator()(T a, T b) const { return fl_min(a, b); } };
template <class T> __device__ __forceinline__ T fl_block_sum(T v) { return fl_block_reduce(v, fl_op_add()); }
template <class T> __device__ __forceinline__ T fl_block_max(T v) { return fl_block_reduce(v, fl_op_max()); }
template <class T> __device__ __forceinline__ T fl_block_min(T v) { return fl_block_reduce(v, fl_op_min()); }

// 128-bit accesses of vectorized stages: 16 bytes of consecutive elements
// between registers and a 16-byte aligned address (ld/st.global.v4).
__device__ __forceinline__ void fl_vload(float* d, const float* p) {
  const float4 v = *(const float4*)p;
  d[0] = v.x; d[1] = v.y; d[2] = v.z; d[3] = v.w;
}
__device__ __forceinline__ void fl_vstore(float* p, const float* s) {
  float4 v; v.x = s[0]; v.y = s[1]; v.z = s[2]; v.w = s[3];
  *(float4*)p = v;
}
__device__ __forceinline__ void fl_vload(fl_i32* d, const fl_i32* p) {
  const int4 v = *(const int4*)p;
  d[0] = v.x; d[1] = v.y; d[2] = v.z; d[3] = v.w;
}
__device__ __forceinline__ void fl_vstore(fl_i32* p, const fl_i32* s) {
  int4 v; v.x = s[0]; v.y = s[1]; v.z = s[2]; v.w = s[3];
  *(int4*)p = v;
}
// 16-bit elements (f16, bf16, i16) travel two to a 32-bit word, low half first.
__device__ __forceinline__ void fl_vload(unsigned short* d, const unsigned short* p) {
  const uint4 v = *(const uint4*)p;
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
  for (int k = 0; k < 8; ++k) d[k] = (unsigned short)(w[k >> 1] >> ((k & 1) * 16));
}
__device__ __forceinline__ void fl_vstore(unsigned short* p, const unsigned short* s) {
  uint4 v;
  v.x = s[0] | ((unsigned)s[1] << 16); v.y = s[2] | ((unsigned)s[3] << 16);
  v.z = s[4] | ((unsigned)s[5] << 16); v.w = s[6] | ((unsigned)s[7] << 16);
  *(uint4*)p = v;
}
__device__ __forceinline__ void fl_vload(fl_i16* d, const fl_i16* p) {
  fl_vload((unsigned short*)d, (const unsigned short*)p);
}
__device__ __forceinline__ void fl_vstore(fl_i16* p, const fl_i16* s) {
  fl_vstore((unsigned short*)p, (const unsigned short*)s);
}

)";
}

std::string cudaHostEmulationPrelude() {
  return R"(// Host emulation of the CUDA built-ins the emitted code uses (C++20, -pthread):
// fl_emu_launch (fl_emu_launch3: a 3-D grid) runs a stage block by block, each block's threads as real
// threads, so __syncthreads is a barrier, __shared__ is one static per
// function, and a warp shuffle passes values through a slot per thread.
#include <math.h>
#include <barrier>
#include <cstring>
#include <thread>
#include <vector>
struct fl_dim3 { unsigned x = 0, y = 0, z = 0; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
static fl_dim3 blockIdx, blockDim, gridDim;
static thread_local fl_dim3 threadIdx;
static std::barrier<>* fl_emu_barrier = nullptr;
static unsigned char fl_emu_slots[1024][8];
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
static inline void __syncthreads() { fl_emu_barrier->arrive_and_wait(); }
template <class T> T __shfl_down_sync(unsigned, T v, unsigned delta) {
  std::memcpy(fl_emu_slots[threadIdx.x], &v, sizeof(T));
  __syncthreads();
  T r = v;
  if (threadIdx.x + delta < blockDim.x) std::memcpy(&r, fl_emu_slots[threadIdx.x + delta], sizeof(T));
  __syncthreads();
  return r;
}
template <class F> void fl_emu_launch3(unsigned gx, unsigned gy, unsigned gz, unsigned block, F stage) {
  gridDim.x = gx; gridDim.y = gy; gridDim.z = gz;
  blockDim.x = block; blockDim.y = blockDim.z = 1;
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned y = 0; y < gy; ++y)
      for (unsigned b = 0; b < gx; ++b) {
        blockIdx.x = b; blockIdx.y = y; blockIdx.z = z;
        std::barrier<> bar((std::ptrdiff_t)block);
        fl_emu_barrier = &bar;
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < block; ++t) threads.emplace_back([&stage, t] { threadIdx.x = t; stage(); });
        for (std::thread& th : threads) th.join();
      }
}
template <class F> void fl_emu_launch(unsigned grid, unsigned block, F stage) {
  fl_emu_launch3(grid, 1, 1, block, stage);
}
)";
}

}  // namespace fuselens
