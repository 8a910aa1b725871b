// Kernels of the benchmark harness itself, shared by both sides: gpukit-bench compiles this file
// with gpukit (Module::from_cuda) and with raw cudarc (NVRTC), benches/cupy_twin.py with CuPy
// (RawModule). None of them is a workload: they check results, close the timed span and measure
// the memory ceilings.
//
//   bench_check_{f64,f32,i32,i64}(out, ref, n, tol, res) every element of out against ref
//   bench_check_const_f64(out, n, value, res)          every element of out against one value
//   bench_mark(flag, value)                            writes value to *flag (end of a timed span)
//   bench_spin_until(flag, value)                      waits until *flag >= value (fallback of
//                                                      cuStreamWaitValue32)
//   bench_copy_v4_u{1,2,4,8}, bench_write_v4_u*, bench_read_v4_u*   128-bit memory ceilings
//
// The checkers' rule (the same as benches/gpukit-bench/src/verify.rs and cupy_twin.py's
// host_compare): an element passes when out == ref, or when |out - ref| <= tol * |ref|; NaN never
// passes, so a poisoned (NaN-filled or -1-filled) output that a kernel forgot to write fails.
// res[0] counts the elements visited (must equal n: proof that the checker ran over all of them),
// res[1] the mismatches, res[2] the lowest mismatching index (initialised to ~0), res[3] the bits
// of the largest relative error as a non-negative double (NaN counts as infinity).
// The checkers need blockDim.x to be a multiple of 32 (warp reductions).

template <typename T>
__device__ __forceinline__ void bench_check_impl(const T* out, const T* ref, bool has_ref, T value,
                                                 unsigned long long n, double tol,
                                                 unsigned long long* res) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long seen = 0, bad = 0, first = ~0ull;
    double worst = 0.0;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        double o = (double)out[i];
        double r = has_ref ? (double)ref[i] : (double)value;
        seen++;
        if (o == r) continue;
        double err = fabs(o - r) / fabs(r);  // r == 0: inf; o NaN: NaN
        if (!(err <= tol)) {
            bad++;
            if (i < first) first = i;
        }
        if (err != err) err = __longlong_as_double(0x7ff0000000000000ll);  // NaN -> inf
        if (err > worst) worst = err;
    }
    for (int off = 16; off > 0; off >>= 1) {
        seen += __shfl_down_sync(0xffffffffu, seen, off);
        bad += __shfl_down_sync(0xffffffffu, bad, off);
        unsigned long long f = __shfl_down_sync(0xffffffffu, first, off);
        if (f < first) first = f;
        double w = __shfl_down_sync(0xffffffffu, worst, off);
        if (w > worst) worst = w;
    }
    if ((threadIdx.x & 31) == 0) {
        if (seen) atomicAdd(&res[0], seen);
        if (bad) atomicAdd(&res[1], bad);
        if (first != ~0ull) atomicMin(&res[2], first);
        if (worst > 0.0) atomicMax(&res[3], (unsigned long long)__double_as_longlong(worst));
    }
}

extern "C" __global__ void bench_check_f64(const double* out, const double* ref, unsigned long long n,
                                           double tol, unsigned long long* res) {
    bench_check_impl<double>(out, ref, true, 0.0, n, tol, res);
}

extern "C" __global__ void bench_check_f32(const float* out, const float* ref, unsigned long long n,
                                           double tol, unsigned long long* res) {
    bench_check_impl<float>(out, ref, true, 0.0f, n, tol, res);
}

extern "C" __global__ void bench_check_i32(const int* out, const int* ref, unsigned long long n,
                                           double tol, unsigned long long* res) {
    bench_check_impl<int>(out, ref, true, 0, n, tol, res);
}

// int64 (indices, such as argsort's): compared as doubles, exact below 2^53
extern "C" __global__ void bench_check_i64(const long long* out, const long long* ref, unsigned long long n,
                                           double tol, unsigned long long* res) {
    bench_check_impl<long long>(out, ref, true, 0, n, tol, res);
}

extern "C" __global__ void bench_check_const_f64(const double* out, unsigned long long n, double value,
                                                 unsigned long long* res) {
    bench_check_impl<double>(out, out, false, value, n, 0.0, res);
}

// The end of a timed span: queued on the measured library's stream right after the operation, it
// runs when everything before it has; the harness's own stream waits for the flag, then records
// the span's end event.
extern "C" __global__ void bench_mark(unsigned long long flag, unsigned int value) {
    *(volatile unsigned int*)flag = value;
    __threadfence_system();
}

extern "C" __global__ void bench_spin_until(unsigned long long flag, unsigned int value) {
    while ((int)(*(volatile unsigned int*)flag - value) < 0) {
    }
}

// Memory ceilings, 16 bytes per load and store. U = 1: one uint4 per thread, no loop (launch
// n4 / blockDim.x blocks); U > 1: grid-stride, U independent uint4 loads in flight per thread.
// The read kernel XORs every 32-bit word it reads into *sink (one atomic per thread), so the
// loads cannot be dropped and the result proves that every word was read.

template <int U>
__device__ __forceinline__ void bench_copy_impl(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                unsigned long long n4) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    if constexpr (U == 1) {
        if (i < n4) dst[i] = src[i];
    } else {
        for (; i + (U - 1) * stride < n4; i += U * stride) {
            uint4 v[U];
#pragma unroll
            for (int k = 0; k < U; k++) v[k] = src[i + k * stride];
#pragma unroll
            for (int k = 0; k < U; k++) dst[i + k * stride] = v[k];
        }
        for (; i < n4; i += stride) dst[i] = src[i];
    }
}

template <int U>
__device__ __forceinline__ void bench_write_impl(uint4* __restrict__ dst, unsigned long long n4, uint4 v) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    if constexpr (U == 1) {
        if (i < n4) dst[i] = v;
    } else {
        for (; i + (U - 1) * stride < n4; i += U * stride) {
#pragma unroll
            for (int k = 0; k < U; k++) dst[i + k * stride] = v;
        }
        for (; i < n4; i += stride) dst[i] = v;
    }
}

template <int U>
__device__ __forceinline__ void bench_read_impl(const uint4* __restrict__ src, unsigned long long n4,
                                                unsigned int* sink) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned int acc = 0;
    if constexpr (U == 1) {
        if (i < n4) {
            uint4 a = src[i];
            acc = a.x ^ a.y ^ a.z ^ a.w;
        }
    } else {
        for (; i + (U - 1) * stride < n4; i += U * stride) {
            uint4 v[U];
#pragma unroll
            for (int k = 0; k < U; k++) v[k] = src[i + k * stride];
#pragma unroll
            for (int k = 0; k < U; k++) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
        }
        for (; i < n4; i += stride) {
            uint4 a = src[i];
            acc ^= a.x ^ a.y ^ a.z ^ a.w;
        }
    }
    if (acc) atomicXor(sink, acc);
}

#define BENCH_CEILING_KERNELS(U)                                                                     \
    extern "C" __global__ void bench_copy_v4_u##U(const uint4* src, uint4* dst, unsigned long long n4) { \
        bench_copy_impl<U>(src, dst, n4);                                                            \
    }                                                                                                \
    extern "C" __global__ void bench_write_v4_u##U(uint4* dst, unsigned long long n4, unsigned int x,  \
                                                   unsigned int y, unsigned int z, unsigned int w) {   \
        bench_write_impl<U>(dst, n4, make_uint4(x, y, z, w));                                        \
    }                                                                                                \
    extern "C" __global__ void bench_read_v4_u##U(const uint4* src, unsigned long long n4,            \
                                                  unsigned int* sink) {                              \
        bench_read_impl<U>(src, n4, sink);                                                           \
    }

BENCH_CEILING_KERNELS(1)
BENCH_CEILING_KERNELS(2)
BENCH_CEILING_KERNELS(4)
BENCH_CEILING_KERNELS(8)
