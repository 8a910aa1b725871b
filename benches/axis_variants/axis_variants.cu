// Variants of the axis reductions of a (10000, 5000) float64 array, timed and checked side by
// side in one process on the device (issue 16: sum along axis 0 and 1 and std along axis 1 at
// 90% of the read ceiling). Not a workload of the benchmark: a lab for choosing the kernels that
// crates/gpukit/src/array/kernels/axes.rs then carries.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o axis_variants axis_variants.cu && ./axis_variants
//
// Every variant's output is compared in full with a host reference (sums exact: the inputs are
// multiples of 2^-8; std to 1e-12 relative). Each time is device time of one call (CUDA events
// around the call's launches, one pair per call), the median of REPS calls after warm-ups, the
// same way the read ceiling beside them is timed at 400 MB and at 2 GiB.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>
#include <cuda_runtime.h>

typedef unsigned long long u64;

#define CK(x)                                                                                    \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));           \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

static const int REPS = 30;
static int g_sms = 132;

// ---------------------------------------------------------------- read ceiling (as the bench)
template <int U>
__global__ void read_v4(const uint4* __restrict__ src, u64 n4, unsigned* sink) {
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    unsigned x = 0;
    for (; i + (U - 1) * stride < n4; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = src[i + u * stride];
#pragma unroll
        for (int u = 0; u < U; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n4; i += stride) { uint4 v = src[i]; x ^= v.x ^ v.y ^ v.z ^ v.w; }
    if (x == 0x9e3779b9u) atomicXor(sink, x);
}

// ---------------------------------------------------------------- block combine
template <int T>
__device__ __forceinline__ double block_sum(double acc) {
    __shared__ double sv[32];
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) sv[warp] = acc;
    __syncthreads();
    acc = 0;
    if (warp == 0) {
        acc = lane < T / 32 ? sv[lane] : 0.0;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    }
    __syncthreads();
    return acc;  // valid in thread 0
}

// ---------------------------------------------------------------- axis 1 (rows)
// R0: today's kernel: one block of 256 per row, four 8-byte loads in flight per thread.
__global__ void r0(const double* in, u64 len, double* out) {
    const double* p = in + (u64)blockIdx.x * len;
    double acc = 0;
    for (u64 j = threadIdx.x; j < len; j += 256 * 4) {
        double x[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) { u64 jj = j + 256 * u; x[u] = jj < len ? p[jj] : 0.0; }
#pragma unroll
        for (int u = 0; u < 4; ++u) acc += x[u];
    }
    acc = block_sum<256>(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

// RV<T, U>: one block of T per row, 16-byte loads (double2), U in flight (even len).
template <int T, int U>
__global__ void __launch_bounds__(T) rv(const double* in, u64 len, double* out) {
    const double2* p = reinterpret_cast<const double2*>(in + (u64)blockIdx.x * len);
    const u64 n2 = len / 2;
    double acc = 0;
    for (u64 j = threadIdx.x; j < n2; j += (u64)T * U) {
        double2 x[U];
#pragma unroll
        for (int u = 0; u < U; ++u) { u64 jj = j + (u64)T * u; x[u] = jj < n2 ? p[jj] : make_double2(0, 0); }
#pragma unroll
        for (int u = 0; u < U; ++u) acc += x[u].x + x[u].y;
    }
    acc = block_sum<T>(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

// RW<U>: one warp per row, double2 loads, U in flight; 8 warps (rows) per block.
template <int U>
__global__ void rw(const double* in, u64 rows, u64 len, double* out) {
    const u64 row = (u64)blockIdx.x * 8 + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (row >= rows) return;
    const double2* p = reinterpret_cast<const double2*>(in + row * len);
    const u64 n2 = len / 2;
    double acc = 0;
    for (u64 j = lane; j < n2; j += 32 * U) {
        double2 x[U];
#pragma unroll
        for (int u = 0; u < U; ++u) { u64 jj = j + 32 * u; x[u] = jj < n2 ? p[jj] : make_double2(0, 0); }
#pragma unroll
        for (int u = 0; u < U; ++u) acc += x[u].x + x[u].y;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) out[row] = acc;
}

// RP<T>: a persistent grid of blocks of T; each block takes rows b, b + grid, ... (double2, 4 in
// flight), so no block starts or ends per row.
template <int T>
__global__ void __launch_bounds__(T) rp(const double* in, u64 rows, u64 len, double* out) {
    const u64 n2 = len / 2;
    for (u64 row = blockIdx.x; row < rows; row += gridDim.x) {
        const double2* p = reinterpret_cast<const double2*>(in + row * len);
        double acc = 0;
        for (u64 j = threadIdx.x; j < n2; j += (u64)T * 4) {
            double2 x[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) { u64 jj = j + (u64)T * u; x[u] = jj < n2 ? p[jj] : make_double2(0, 0); }
#pragma unroll
            for (int u = 0; u < 4; ++u) acc += x[u].x + x[u].y;
        }
        acc = block_sum<T>(acc);
        if (threadIdx.x == 0) out[row] = acc;
    }
}

// ---------------------------------------------------------------- axis 0 (columns)
// C0 first pass (today's): one column per thread, blocks of 128, U = 16 rows in flight, the rows
// cut into `chunks` segments (grid y); partials (chunks, inner).
__global__ void c0(const double* in, u64 len, u64 inner, u64 chunk, double* part) {
    const u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= inner) return;
    const u64 j0 = blockIdx.y * chunk, j1 = min(j0 + chunk, len);
    const double* p = in + k;
    double acc = 0;
    for (u64 j = j0; j < j1; j += 16) {
        double x[16];
#pragma unroll
        for (int u = 0; u < 16; ++u) { u64 jj = j + u; x[u] = jj < j1 ? p[jj * inner] : 0.0; }
#pragma unroll
        for (int u = 0; u < 16; ++u) acc += x[u];
    }
    part[blockIdx.y * inner + k] = acc;
}
// The second pass: each column folds its `chunks` partials in order.
__global__ void c_fold(const double* part, u64 chunks, u64 inner, double* out) {
    const u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= inner) return;
    double acc = 0;
    for (u64 c = 0; c < chunks; ++c) acc += part[c * inner + k];
    out[k] = acc;
}

// CS<T, A>: row-chunk streaming: block (x: column tile of 2 A T columns, y: segment of rows)
// reads whole row stretches, thread t owning the column pairs t + T a (a < A), A double2
// accumulators in registers; partials (chunks, inner).
template <int T, int A>
__global__ void __launch_bounds__(T) cs(const double* in, u64 len, u64 inner, u64 chunk, double* part) {
    const u64 w2 = inner / 2;
    const u64 base = (u64)blockIdx.x * T * A + threadIdx.x;
    const u64 j0 = blockIdx.y * chunk, j1 = min(j0 + chunk, len);
    const double2* p = reinterpret_cast<const double2*>(in);
    double2 acc[A];
#pragma unroll
    for (int a = 0; a < A; ++a) acc[a] = make_double2(0, 0);
    for (u64 j = j0; j < j1; ++j) {
        double2 x[A];
#pragma unroll
        for (int a = 0; a < A; ++a) { const u64 k = base + (u64)T * a; x[a] = k < w2 ? p[j * w2 + k] : make_double2(0, 0); }
#pragma unroll
        for (int a = 0; a < A; ++a) { acc[a].x += x[a].x; acc[a].y += x[a].y; }
    }
    double2* q = reinterpret_cast<double2*>(part + blockIdx.y * inner);
#pragma unroll
    for (int a = 0; a < A; ++a) { const u64 k = base + (u64)T * a; if (k < w2) q[k] = acc[a]; }
}
// The fold with eight partials in flight per thread.
__global__ void c_fold8(const double* part, u64 chunks, u64 inner, double* out) {
    const u64 k = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= inner) return;
    double acc = 0;
    u64 c = 0;
    for (; c + 8 <= chunks; c += 8) {
        double x[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) x[u] = part[(c + u) * inner + k];
#pragma unroll
        for (int u = 0; u < 8; ++u) acc += x[u];
    }
    for (; c < chunks; ++c) acc += part[c * inner + k];
    out[k] = acc;
}

// CI<U>: interleaved rows: m * (inner / 2) threads, thread i owns column pair i % (inner / 2)
// and rows i / (inner / 2) + m r; at every step the grid reads m consecutive whole rows, as a
// whole-array read does; U rows in flight per thread; partials (m, inner).
template <int U>
__global__ void ci(const double* in, u64 len, u64 inner, u64 m, double* part) {
    const u64 w2 = inner / 2;
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m * w2) return;
    const u64 k = i % w2, r0 = i / w2;
    const double2* p = reinterpret_cast<const double2*>(in) + k;
    double a0 = 0, a1 = 0;
    for (u64 r = r0; r < len; r += m * U) {
        double2 x[U];
#pragma unroll
        for (int u = 0; u < U; ++u) { const u64 rr = r + m * u; x[u] = rr < len ? p[rr * w2] : make_double2(0, 0); }
#pragma unroll
        for (int u = 0; u < U; ++u) { a0 += x[u].x; a1 += x[u].y; }
    }
    reinterpret_cast<double2*>(part + r0 * inner)[k] = make_double2(a0, a1);
}
// The fold by 2-D blocks: 32 columns per block, its 8 warps taking every eighth partial, then
// combined in shared memory in warp order (deterministic).
__global__ void fold_t(const double* part, u64 chunks, u64 inner, double* out) {
    __shared__ double s[8][33];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u64 k = (u64)blockIdx.x * 32 + lane;
    double acc = 0;
    if (k < inner) {
        u64 c = warp;
        for (; c + 8 * 3 < chunks; c += 8 * 4) {
            double x[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) x[u] = part[(c + 8 * u) * inner + k];
#pragma unroll
            for (int u = 0; u < 4; ++u) acc += x[u];
        }
        for (; c < chunks; c += 8) acc += part[c * inner + k];
    }
    s[warp][lane] = acc;
    __syncthreads();
    if (warp == 0 && k < inner) {
        double t = 0;
#pragma unroll
        for (int w = 0; w < 8; ++w) t += s[w][lane];
        out[k] = t;
    }
}

// ---------------------------------------------------------------- std along axis 1
// S0: today's var_rows: one block of 256 per row; the sum, then the row read again (L2) for the
// squared deviations.
__global__ void s0(const double* in, u64 len, double dof, double* out) {
    __shared__ double mean;
    const double* p = in + (u64)blockIdx.x * len;
    double acc = 0;
    for (u64 j = threadIdx.x; j < len; j += 256 * 4) {
        double x[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) { u64 jj = j + 256 * u; x[u] = jj < len ? p[jj] : 0.0; }
#pragma unroll
        for (int u = 0; u < 4; ++u) acc += x[u];
    }
    acc = block_sum<256>(acc);
    if (threadIdx.x == 0) mean = acc / (double)len;
    __syncthreads();
    const double m = mean;
    acc = 0;
    for (u64 j = threadIdx.x; j < len; j += 256 * 4) {
        double x[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) { u64 jj = j + 256 * u; x[u] = jj < len ? p[jj] - m : 0.0; }
#pragma unroll
        for (int u = 0; u < 4; ++u) acc += x[u] * x[u];
    }
    acc = block_sum<256>(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = sqrt(acc / dof);
}

// SR<T, P>: the row held in registers (each thread up to P double2, len <= 2 T P): one read from
// memory, then NumPy's two passes over the registers.
template <int T, int P>
__global__ void __launch_bounds__(T) sr(const double* in, u64 len, double dof, double* out) {
    __shared__ double mean;
    const double2* p = reinterpret_cast<const double2*>(in + (u64)blockIdx.x * len);
    const u64 n2 = len / 2;
    double2 x[P];
#pragma unroll
    for (int u = 0; u < P; ++u) { u64 jj = threadIdx.x + (u64)T * u; x[u] = jj < n2 ? p[jj] : make_double2(0, 0); }
    double acc = 0;
#pragma unroll
    for (int u = 0; u < P; ++u) acc += x[u].x + x[u].y;
    acc = block_sum<T>(acc);
    if (threadIdx.x == 0) mean = acc / (double)len;
    __syncthreads();
    const double m = mean;
    acc = 0;
#pragma unroll
    for (int u = 0; u < P; ++u) {
        u64 jj = threadIdx.x + (u64)T * u;
        if (jj < n2) { double a = x[u].x - m, b = x[u].y - m; acc += a * a + b * b; }
    }
    acc = block_sum<T>(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = sqrt(acc / dof);
}

// ---------------------------------------------------------------- harness
struct Result { std::string name; double ms; double gbs; bool ok; };
static std::vector<Result> results;

static double time_call(const std::function<void()>& call) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; ++i) call();
    CK(cudaDeviceSynchronize());
    std::vector<double> t;
    for (int i = 0; i < REPS; ++i) {
        CK(cudaEventRecord(a));
        call();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    return t[t.size() / 2];
}

static bool check(const double* dev, const std::vector<double>& want, double tol) {
    std::vector<double> got(want.size());
    CK(cudaMemcpy(got.data(), dev, got.size() * 8, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < want.size(); ++i) {
        const double d = std::fabs(got[i] - want[i]);
        if (!(d <= tol * std::fabs(want[i]))) {
            printf("  mismatch at %zu: got %.17g want %.17g\n", i, got[i], want[i]);
            return false;
        }
    }
    return true;
}

static void row(const std::string& name, double bytes, const std::function<void()>& call,
                const double* out, const std::vector<double>& want, double tol) {
    CK(cudaMemset((void*)out, 0xff, want.size() * 8));  // NaN poison
    const double ms = time_call(call);
    CK(cudaMemset((void*)out, 0xff, want.size() * 8));
    call();
    CK(cudaDeviceSynchronize());
    const bool ok = check(out, want, tol);
    results.push_back({name, ms, bytes / ms / 1e6, ok});
    printf("%-44s %9.4f ms %8.1f GB/s %s\n", name.c_str(), ms, bytes / ms / 1e6, ok ? "ok" : "FAIL");
    fflush(stdout);
}

#ifndef AXIS_LAB_NO_MAIN
int main() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    printf("device: %s, %d SMs\n", prop.name, g_sms);
    const u64 rows = 10000, cols = 5000, n = rows * cols;
    const double bytes = n * 8.0;
    std::vector<double> h(n);
    for (u64 i = 0; i < n; ++i) h[i] = (double)(i % 251) / 256.0 + (double)((i * 7) % 13) / 8.0;
    double* d_in; CK(cudaMalloc(&d_in, n * 8));
    CK(cudaMemcpy(d_in, h.data(), n * 8, cudaMemcpyHostToDevice));
    double* d_out; CK(cudaMalloc(&d_out, rows * 8 + cols * 8));
    double* d_part; CK(cudaMalloc(&d_part, 1024 * cols * 8));
    unsigned* d_count; CK(cudaMalloc(&d_count, 65536 * 4)); CK(cudaMemset(d_count, 0, 65536 * 4));
    unsigned* d_sink; CK(cudaMalloc(&d_sink, 4));

    // references
    std::vector<double> sum1(rows, 0.0), sum0(cols, 0.0), std1(rows, 0.0);
    for (u64 r = 0; r < rows; ++r) {
        double s = 0;
        for (u64 c = 0; c < cols; ++c) { s += h[r * cols + c]; sum0[c] += h[r * cols + c]; }
        sum1[r] = s;
        const double m = s / cols;
        long double q = 0;
        for (u64 c = 0; c < cols; ++c) { long double d = h[r * cols + c] - m; q += d * d; }
        std1[r] = std::sqrt((double)(q / cols));
    }

    // read ceilings: 400 MB (this array) and 2 GiB
    {
        const u64 n4 = n * 8 / 16;
        std::vector<double> none;
        cudaEvent_t a; (void)a;
        for (int blocks_per_sm : {2, 4}) {
            const unsigned grid = g_sms * blocks_per_sm;
            const double ms = time_call([&] { read_v4<4><<<grid, 1024>>>((const uint4*)d_in, n4, d_sink); });
            printf("%-44s %9.4f ms %8.1f GB/s\n", ("read ceiling 400 MB, " + std::to_string(blocks_per_sm) + " blocks/SM").c_str(), ms, bytes / ms / 1e6);
            results.push_back({"read ceiling 400 MB x" + std::to_string(blocks_per_sm), ms, bytes / ms / 1e6, true});
        }
        const u64 big = 2ull << 30;
        void* d_big; CK(cudaMalloc(&d_big, big)); CK(cudaMemset(d_big, 1, big));
        const double ms = time_call([&] { read_v4<4><<<g_sms * 2, 1024>>>((const uint4*)d_big, big / 16, d_sink); });
        printf("%-44s %9.4f ms %8.1f GB/s\n", "read ceiling 2 GiB", ms, big / ms / 1e6);
        results.push_back({"read ceiling 2 GiB", ms, big / ms / 1e6, true});
        CK(cudaFree(d_big));
    }

    // axis 1
    row("sum1 R0 block256 4x8B (today)", bytes, [&] { r0<<<rows, 256>>>(d_in, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RV<128,2>", bytes, [&] { rv<128, 2><<<rows, 128>>>(d_in, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RV<128,4>", bytes, [&] { rv<128, 4><<<rows, 128>>>(d_in, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RV<256,2>", bytes, [&] { rv<256, 2><<<rows, 256>>>(d_in, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RV<256,4>", bytes, [&] { rv<256, 4><<<rows, 256>>>(d_in, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RV<512,2>", bytes, [&] { rv<512, 2><<<rows, 512>>>(d_in, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RV<512,1>", bytes, [&] { rv<512, 1><<<rows, 512>>>(d_in, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RV<512,4>", bytes, [&] { rv<512, 4><<<rows, 512>>>(d_in, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RV<1024,1>", bytes, [&] { rv<1024, 1><<<rows, 1024>>>(d_in, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RV<256,10> (all loads at once)", bytes, [&] { rv<256, 10><<<rows, 256>>>(d_in, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RW<4> warp/row", bytes, [&] { rw<4><<<(rows + 7) / 8, 256>>>(d_in, rows, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RW<8> warp/row", bytes, [&] { rw<8><<<(rows + 7) / 8, 256>>>(d_in, rows, cols, d_out); }, d_out, sum1, 0);
    row("sum1 RW<16> warp/row", bytes, [&] { rw<16><<<(rows + 7) / 8, 256>>>(d_in, rows, cols, d_out); }, d_out, sum1, 0);
    for (int per_sm : {4, 8, 16}) {
        row("sum1 RP<256> persistent x" + std::to_string(per_sm), bytes,
            [&] { rp<256><<<g_sms * per_sm, 256>>>(d_in, rows, cols, d_out); }, d_out, sum1, 0);
    }
    row("sum1 RP<128> persistent x16", bytes, [&] { rp<128><<<g_sms * 16, 128>>>(d_in, rows, cols, d_out); }, d_out, sum1, 0);

    // axis 0
    auto chunks_for = [&](u64 threads_per_segment, u64 min_rows) {
        const u64 target = (u64)g_sms * 2048;
        u64 chunks = std::max<u64>(1, target / threads_per_segment);
        chunks = std::min<u64>(chunks, (rows + min_rows - 1) / min_rows);
        const u64 chunk = (rows + chunks - 1) / chunks;
        return std::make_pair((rows + chunk - 1) / chunk, chunk);
    };
    {
        const auto seg = chunks_for((cols + 127) / 128 * 128, 128); const u64 ch = seg.first, chunk = seg.second;
        const unsigned tiles = (cols + 127) / 128;
        row("sum0 C0 col/thread U16 + fold (today), " + std::to_string(ch) + " seg", bytes, [&] {
            c0<<<dim3(tiles, ch), 128>>>(d_in, rows, cols, chunk, d_part);
            c_fold<<<(cols + 127) / 128, 128>>>(d_part, ch, cols, d_out);
        }, d_out, sum0, 0);
    }
    {
        const unsigned tiles = (cols + 127) / 128;
        for (u64 ch : {26ull, 40ull, 52ull, 80ull}) {
            const u64 chunk = (rows + ch - 1) / ch;
            const u64 chn = (rows + chunk - 1) / chunk;
            row("sum0 C0 + fold8, " + std::to_string(chn) + " seg", bytes, [&, chunk, chn, tiles] {
                c0<<<dim3(tiles, chn), 128>>>(d_in, rows, cols, chunk, d_part);
                c_fold8<<<(cols + 63) / 64, 64>>>(d_part, chn, cols, d_out);
            }, d_out, sum0, 0);
        }
        for (u64 ch : {132ull, 264ull, 396ull, 528ull}) {
            const u64 chunk = (rows + ch - 1) / ch;
            const u64 chn = (rows + chunk - 1) / chunk;
            row("sum0 CS<256,10> stream, " + std::to_string(chn) + " seg", bytes, [&, chunk, chn] {
                cs<256, 10><<<dim3(1, chn), 256>>>(d_in, rows, cols, chunk, d_part);
                c_fold8<<<(cols + 63) / 64, 64>>>(d_part, chn, cols, d_out);
            }, d_out, sum0, 0);
            row("sum0 CS<512,5> stream, " + std::to_string(chn) + " seg", bytes, [&, chunk, chn] {
                cs<512, 5><<<dim3(1, chn), 512>>>(d_in, rows, cols, chunk, d_part);
                c_fold8<<<(cols + 63) / 64, 64>>>(d_part, chn, cols, d_out);
            }, d_out, sum0, 0);
            row("sum0 CS<128,4> tiles, " + std::to_string(chn) + " seg", bytes, [&, chunk, chn] {
                cs<128, 4><<<dim3((cols / 2 + 511) / 512, chn), 128>>>(d_in, rows, cols, chunk, d_part);
                c_fold8<<<(cols + 63) / 64, 64>>>(d_part, chn, cols, d_out);
            }, d_out, sum0, 0);
        }
    }

    {
        const u64 w2 = cols / 2;
        const unsigned ftiles = (cols + 31) / 32;
        for (u64 m : {26ull, 52ull, 108ull, 216ull}) {
            const unsigned blocks = (m * w2 + 255) / 256;
            row("sum0 CI<4> interleaved m=" + std::to_string(m) + " + fold_t", bytes, [&, m, blocks] {
                ci<4><<<blocks, 256>>>(d_in, rows, cols, m, d_part);
                fold_t<<<ftiles, 256>>>(d_part, m, cols, d_out);
            }, d_out, sum0, 0);
            row("sum0 CI<8> interleaved m=" + std::to_string(m) + " + fold_t", bytes, [&, m, blocks] {
                ci<8><<<blocks, 256>>>(d_in, rows, cols, m, d_part);
                fold_t<<<ftiles, 256>>>(d_part, m, cols, d_out);
            }, d_out, sum0, 0);
        }
        for (u64 ch : {26ull, 52ull, 132ull}) {
            const u64 chunk = (rows + ch - 1) / ch;
            const u64 chn = (rows + chunk - 1) / chunk;
            if (ch != 132) {
                row("sum0 C0 + fold_t, " + std::to_string(chn) + " seg", bytes, [&, chunk, chn] {
                    c0<<<dim3((cols + 127) / 128, chn), 128>>>(d_in, rows, cols, chunk, d_part);
                    fold_t<<<ftiles, 256>>>(d_part, chn, cols, d_out);
                }, d_out, sum0, 0);
            } else {
                row("sum0 CS<512,5> + fold_t, 132 seg", bytes, [&, chunk, chn] {
                    cs<512, 5><<<dim3(1, chn), 512>>>(d_in, rows, cols, chunk, d_part);
                    fold_t<<<ftiles, 256>>>(d_part, chn, cols, d_out);
                }, d_out, sum0, 0);
            }
        }
        // pass 1 alone (not checked: the fold is what writes the result), for the split
        {
            std::vector<double> none;
            const double t1 = time_call([&] { ci<4><<<(108 * w2 + 255) / 256, 256>>>(d_in, rows, cols, 108, d_part); });
            const double t2 = time_call([&] { fold_t<<<ftiles, 256>>>(d_part, 108, cols, d_out); });
            const double t3 = time_call([&] { c0<<<dim3((cols + 127) / 128, 26), 128>>>(d_in, rows, cols, (rows + 25) / 26, d_part); });
            printf("split: CI<4> m=108 pass1 %.4f ms, fold_t(108) %.4f ms; C0 26 seg pass1 %.4f ms\n", t1, t2, t3);
        }
    }

    // std along axis 1
    row("std1 S0 two passes, L2 (today)", bytes, [&] { s0<<<rows, 256>>>(d_in, cols, (double)cols, d_out); }, d_out, std1, 1e-12);
    row("std1 SR<256,10> registers", bytes, [&] { sr<256, 10><<<rows, 256>>>(d_in, cols, (double)cols, d_out); }, d_out, std1, 1e-12);
    row("std1 SR<512,5> registers", bytes, [&] { sr<512, 5><<<rows, 512>>>(d_in, cols, (double)cols, d_out); }, d_out, std1, 1e-12);
    row("std1 SR<128,20> registers", bytes, [&] { sr<128, 20><<<rows, 128>>>(d_in, cols, (double)cols, d_out); }, d_out, std1, 1e-12);
    row("std1 SR<1024,3> registers", bytes, [&] { sr<1024, 3><<<rows, 1024>>>(d_in, cols, (double)cols, d_out); }, d_out, std1, 1e-12);

    FILE* f = fopen(getenv("OUT") ? (std::string(getenv("OUT")) + "/axis_variants.tsv").c_str() : "axis_variants.tsv", "w");
    if (f) {
        for (auto& r : results) fprintf(f, "%s\t%.5f\t%.1f\t%s\n", r.name.c_str(), r.ms, r.gbs, r.ok ? "ok" : "FAIL");
        fclose(f);
    }
    return 0;
}
#endif
