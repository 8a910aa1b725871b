// gpukit prelude: the helpers that give the generated code Rust's semantics. Each section is
// guarded, so a translation unit can hold it more than once (from the kernel and its helpers).
// Only the sections a kernel uses are included.

// @section bounds
// Bounds errors. The record has 16 slots: [0] flag, [1] array id, [2] index, [3] len, [4] axis,
// [5..8] threadIdx, [8..11] blockIdx. The first failing thread fills it; every failing thread
// stops (as a Rust thread would return). `__gk_oob` never returns (PTX `exit`), and says so: a
// check is then one branch to a cold block that leaves the thread, so the checked accesses stay in
// one straight line that the compiler schedules like unchecked code (loads issued back to back,
// checks of loop-invariant indices merged). A check that could return would end a basic block
// before every access and serialise the loads.
__device__ __noinline__ __attribute__((noreturn)) void __gk_oob(unsigned long long* err, unsigned long long id,
                                      unsigned long long index, unsigned long long len,
                                      unsigned long long axis) {
    if (atomicCAS(err, 0ull, 1ull) == 0ull) {
        err[1] = id; err[2] = index; err[3] = len; err[4] = axis;
        err[5] = threadIdx.x; err[6] = threadIdx.y; err[7] = threadIdx.z;
        err[8] = blockIdx.x; err[9] = blockIdx.y; err[10] = blockIdx.z;
        __threadfence_system();
    }
    asm volatile("exit;" ::: "memory");
    __builtin_unreachable();
}

// A `&[T]` / `&mut [T]` parameter or a shared array, bounds checked.
template <class T> struct __gk_slice {
    T* ptr; unsigned long long n; unsigned long long id; unsigned long long* err;
    __device__ __forceinline__ unsigned long long len() const { return n; }
    __device__ __forceinline__ T& operator[](unsigned long long i) const {
        if (__builtin_expect(i >= n, 0)) __gk_oob(err, id, i, n, 0);
        return ptr[i];
    }
    // An access the translator proved in range (the comment beside it says why): no check.
    __device__ __forceinline__ T& at(unsigned long long i) const { return ptr[i]; }
};
// A `&View2<T>` / `&View3<T>` parameter (C order), bounds checked per axis: one branch per access
// on all axes at once (`|`, not `||`), the failing axis found on the cold path.
template <class T, int N> struct __gk_view {
    T* ptr; unsigned long long d[N]; unsigned long long id; unsigned long long* err;
    __device__ __forceinline__ unsigned long long shape(int a) const { return d[a]; }
    __device__ __forceinline__ unsigned long long len() const {
        unsigned long long n = 1; for (int a = 0; a < N; a++) n *= d[a]; return n;
    }
    __device__ __forceinline__ T& operator()(unsigned long long i, unsigned long long j) const {
        if (__builtin_expect((i >= d[0]) | (j >= d[1]), 0)) {
            if (i >= d[0]) __gk_oob(err, id, i, d[0], 0);
            __gk_oob(err, id, j, d[1], 1);
        }
        return ptr[i * d[1] + j];
    }
    __device__ __forceinline__ T& operator()(unsigned long long i, unsigned long long j, unsigned long long k) const {
        if (__builtin_expect((i >= d[0]) | (j >= d[1]) | (k >= d[2]), 0)) {
            if (i >= d[0]) __gk_oob(err, id, i, d[0], 0);
            if (j >= d[1]) __gk_oob(err, id, j, d[1], 1);
            __gk_oob(err, id, k, d[2], 2);
        }
        return ptr[(i * d[1] + j) * d[2] + k];
    }
    // Accesses the translator proved in range on every axis (the comment beside them says why).
    __device__ __forceinline__ T& at(unsigned long long i, unsigned long long j) const { return ptr[i * d[1] + j]; }
    __device__ __forceinline__ T& at(unsigned long long i, unsigned long long j, unsigned long long k) const {
        return ptr[(i * d[1] + j) * d[2] + k];
    }
};

// @section unchecked
// Arrays without bounds checks (#[kernel(unchecked)]).
template <class T> struct __gk_uslice {
    T* ptr; unsigned long long n;
    __device__ __forceinline__ unsigned long long len() const { return n; }
    __device__ __forceinline__ T& operator[](unsigned long long i) const { return ptr[i]; }
};
template <class T, int N> struct __gk_uview {
    T* ptr; unsigned long long d[N];
    __device__ __forceinline__ unsigned long long shape(int a) const { return d[a]; }
    __device__ __forceinline__ unsigned long long len() const {
        unsigned long long n = 1; for (int a = 0; a < N; a++) n *= d[a]; return n;
    }
    __device__ __forceinline__ T& operator()(unsigned long long i, unsigned long long j) const { return ptr[i * d[1] + j]; }
    __device__ __forceinline__ T& operator()(unsigned long long i, unsigned long long j, unsigned long long k) const {
        return ptr[(i * d[1] + j) * d[2] + k];
    }
};

// @section opaque
// Types of #[device] functions declared elsewhere (their Rust signatures are not visible).
template <int N, class... A> struct __gk_nth;
template <class A0, class... A> struct __gk_nth<0, A0, A...> { typedef A0 type; };
template <int N, class A0, class... A> struct __gk_nth<N, A0, A...> { typedef typename __gk_nth<N - 1, A...>::type type; };
template <class F> struct __gk_fn;
template <class R, class... A> struct __gk_fn<R (*)(A...)> {
    typedef R ret;
    template <int N> struct arg { typedef typename __gk_nth<N, A...>::type type; };
};
template <class F> using __gk_ret = typename __gk_fn<F>::ret;
template <int N, class F> using __gk_arg = typename __gk_fn<F>::template arg<N>::type;

// `!` of a value whose type only a #[device] signature knows: logical for bool, bitwise otherwise.
template <class T> __device__ __forceinline__ T __gk_not(T x) { return (T)~x; }
template <> __device__ __forceinline__ bool __gk_not<bool>(bool x) { return !x; }

// @section int
// Integer arithmetic wraps as in Rust (release); division by zero gives 0.
#define GK_INT_HELPERS(T, U, BITS, SIGNED)                                                       \
__device__ __forceinline__ T __gk_wadd(T a, T b) { return (T)((U)a + (U)b); }                     \
__device__ __forceinline__ T __gk_wsub(T a, T b) { return (T)((U)a - (U)b); }                     \
__device__ __forceinline__ T __gk_wmul(T a, T b) { return (T)((U)a * (U)b); }                     \
__device__ __forceinline__ T __gk_wneg(T a) { return (T)((U)0 - (U)a); }                          \
__device__ __forceinline__ T __gk_div(T a, T b) {                                                \
    return b == 0 ? (T)0 : (SIGNED && b == (T)-1) ? __gk_wneg(a) : (T)(a / b); }                 \
__device__ __forceinline__ T __gk_rem(T a, T b) {                                                \
    return b == 0 ? (T)0 : (SIGNED && b == (T)-1) ? (T)0 : (T)(a % b); }                          \
__device__ __forceinline__ T __gk_shl(T a, unsigned long long s) { return (T)((U)a << (s & (BITS - 1))); } \
__device__ __forceinline__ T __gk_shr(T a, unsigned long long s) { return (T)(a >> (s & (BITS - 1))); } \
__device__ __forceinline__ T __gk_min(T a, T b) { return a < b ? a : b; }                         \
__device__ __forceinline__ T __gk_max(T a, T b) { return a > b ? a : b; }                         \
__device__ __forceinline__ T __gk_clamp(T a, T lo, T hi) { return a < lo ? lo : (a > hi ? hi : a); } \
__device__ __forceinline__ T __gk_abs(T a) { return (SIGNED && a < (T)0) ? __gk_wneg(a) : a; }    \
__device__ __forceinline__ T __gk_signum(T a) { return a > (T)0 ? (T)1 : (a < (T)0 ? (T)-1 : (T)0); } \
__device__ __forceinline__ T __gk_pow(T a, unsigned int e) {                                      \
    U r = 1, b = (U)a; while (e) { if (e & 1u) r = (U)(r * b); b = (U)(b * b); e >>= 1; } return (T)r; } \
__device__ __forceinline__ unsigned int __gk_count_ones(T a) { return __popcll((unsigned long long)(U)a); } \
__device__ __forceinline__ unsigned int __gk_leading_zeros(T a) {                                 \
    return (unsigned int)__clzll((long long)(unsigned long long)(U)a) - (64u - BITS); }          \
__device__ __forceinline__ unsigned int __gk_trailing_zeros(T a) {                                \
    return (U)a == 0 ? BITS : (unsigned int)(__ffsll((long long)(unsigned long long)(U)a) - 1); }
GK_INT_HELPERS(signed char, unsigned char, 8, true)
GK_INT_HELPERS(short, unsigned short, 16, true)
GK_INT_HELPERS(int, unsigned int, 32, true)
GK_INT_HELPERS(long long, unsigned long long, 64, true)
GK_INT_HELPERS(unsigned char, unsigned char, 8, false)
GK_INT_HELPERS(unsigned short, unsigned short, 16, false)
GK_INT_HELPERS(unsigned int, unsigned int, 32, false)
GK_INT_HELPERS(unsigned long long, unsigned long long, 64, false)
#undef GK_INT_HELPERS

// @section float_to
// Float -> integer `as`: saturating, NaN -> 0 (Rust semantics; C++ leaves these undefined).
#define GK_FLOAT_TO(NAME, T, LO, HI)                                                             \
__device__ __forceinline__ T __gk_float_to_##NAME(float x) {                                     \
    return x != x ? (T)0 : x <= (float)(LO) ? (T)(LO) : x >= (float)(HI) ? (T)(HI) : (T)x; }      \
__device__ __forceinline__ T __gk_float_to_##NAME(double x) {                                    \
    return x != x ? (T)0 : x <= (double)(LO) ? (T)(LO) : x >= (double)(HI) ? (T)(HI) : (T)x; }
GK_FLOAT_TO(i8, signed char, -128, 127)
GK_FLOAT_TO(i16, short, -32768, 32767)
GK_FLOAT_TO(i32, int, (-2147483647 - 1), 2147483647)
GK_FLOAT_TO(i64, long long, (-9223372036854775807ll - 1), 9223372036854775807ll)
GK_FLOAT_TO(u8, unsigned char, 0, 255)
GK_FLOAT_TO(u16, unsigned short, 0, 65535)
GK_FLOAT_TO(u32, unsigned int, 0u, 4294967295u)
GK_FLOAT_TO(u64, unsigned long long, 0ull, 18446744073709551615ull)
#undef GK_FLOAT_TO

// @section float
// Float methods that CUDA has no single function for. Every multiplication is a `_rn` intrinsic,
// which the compiler never contracts into an FMA with a neighbouring addition (Rust never fuses
// either); the degree/radian factors are Rust's own constants, bit for bit.
#define GK_FLOAT_HELPERS(T, SUF, MUL, DIV, DEG, RAD)                                           \
__device__ __forceinline__ T __gk_fract(T x) { return x - trunc##SUF(x); }                       \
__device__ __forceinline__ T __gk_recip(T x) { return DIV((T)1, x); }                            \
__device__ __forceinline__ T __gk_signum(T x) { return x != x ? x : copysign##SUF((T)1, x); }   \
__device__ __forceinline__ T __gk_to_degrees(T x) { return MUL(x, DEG); }                        \
__device__ __forceinline__ T __gk_to_radians(T x) { return MUL(x, RAD); }                        \
__device__ __forceinline__ T __gk_log(T x, T base) { return DIV(log##SUF(x), log##SUF(base)); }  \
__device__ __forceinline__ T __gk_clamp(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); } \
__device__ __forceinline__ bool __gk_is_sign_positive(T x) { return !signbit(x); }               \
__device__ __forceinline__ T __gk_powi(T x, int n) {                                             \
    unsigned int e = n < 0 ? 0u - (unsigned int)n : (unsigned int)n; T r = (T)1, b = x;           \
    while (e) { if (e & 1u) r = MUL(r, b); e >>= 1; if (e) b = MUL(b, b); }                       \
    return n < 0 ? DIV((T)1, r) : r; }
GK_FLOAT_HELPERS(float, f, __fmul_rn, __fdiv_rn, __int_as_float(0x42652ee1), __int_as_float(0x3c8efa35))
GK_FLOAT_HELPERS(double, , __dmul_rn, __ddiv_rn, __longlong_as_double(0x404ca5dc1a63c1f8ll),
                 __longlong_as_double(0x3f91df46a2529d39ll))
#undef GK_FLOAT_HELPERS

// @section atomics
// Atomics with Rust's element types (CUDA lacks some of these overloads).
__device__ __forceinline__ int __gk_atomic_add(int* p, int v) { return atomicAdd(p, v); }
__device__ __forceinline__ unsigned int __gk_atomic_add(unsigned int* p, unsigned int v) { return atomicAdd(p, v); }
__device__ __forceinline__ unsigned long long __gk_atomic_add(unsigned long long* p, unsigned long long v) { return atomicAdd(p, v); }
__device__ __forceinline__ long long __gk_atomic_add(long long* p, long long v) {
    return (long long)atomicAdd((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ float __gk_atomic_add(float* p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ double __gk_atomic_add(double* p, double v) { return atomicAdd(p, v); }
__device__ __forceinline__ int __gk_atomic_sub(int* p, int v) { return atomicSub(p, v); }
__device__ __forceinline__ unsigned int __gk_atomic_sub(unsigned int* p, unsigned int v) { return atomicSub(p, v); }
__device__ __forceinline__ unsigned long long __gk_atomic_sub(unsigned long long* p, unsigned long long v) { return atomicAdd(p, 0ull - v); }
__device__ __forceinline__ long long __gk_atomic_sub(long long* p, long long v) {
    return (long long)atomicAdd((unsigned long long*)p, 0ull - (unsigned long long)v); }
__device__ __forceinline__ float __gk_atomic_sub(float* p, float v) { return atomicAdd(p, -v); }
__device__ __forceinline__ double __gk_atomic_sub(double* p, double v) { return atomicAdd(p, -v); }
__device__ __forceinline__ int __gk_atomic_max(int* p, int v) { return atomicMax(p, v); }
__device__ __forceinline__ unsigned int __gk_atomic_max(unsigned int* p, unsigned int v) { return atomicMax(p, v); }
__device__ __forceinline__ long long __gk_atomic_max(long long* p, long long v) { return atomicMax(p, v); }
__device__ __forceinline__ unsigned long long __gk_atomic_max(unsigned long long* p, unsigned long long v) { return atomicMax(p, v); }
__device__ __forceinline__ int __gk_atomic_min(int* p, int v) { return atomicMin(p, v); }
__device__ __forceinline__ unsigned int __gk_atomic_min(unsigned int* p, unsigned int v) { return atomicMin(p, v); }
__device__ __forceinline__ long long __gk_atomic_min(long long* p, long long v) { return atomicMin(p, v); }
__device__ __forceinline__ unsigned long long __gk_atomic_min(unsigned long long* p, unsigned long long v) { return atomicMin(p, v); }
// Float max/min by compare-and-swap on the bits (Rust's f32::max: NaN loses).
__device__ __forceinline__ float __gk_atomic_max(float* p, float v) {
    unsigned int* a = (unsigned int*)p; unsigned int old = *a, seen;
    do { seen = old; float cur = __uint_as_float(seen); float m = fmaxf(cur, v);
         if (__float_as_uint(m) == seen) break; old = atomicCAS(a, seen, __float_as_uint(m)); } while (old != seen);
    return __uint_as_float(old); }
__device__ __forceinline__ float __gk_atomic_min(float* p, float v) {
    unsigned int* a = (unsigned int*)p; unsigned int old = *a, seen;
    do { seen = old; float cur = __uint_as_float(seen); float m = fminf(cur, v);
         if (__float_as_uint(m) == seen) break; old = atomicCAS(a, seen, __float_as_uint(m)); } while (old != seen);
    return __uint_as_float(old); }
__device__ __forceinline__ double __gk_atomic_max(double* p, double v) {
    unsigned long long* a = (unsigned long long*)p; unsigned long long old = *a, seen;
    do { seen = old; double cur = __longlong_as_double((long long)seen); double m = fmax(cur, v);
         unsigned long long mb = (unsigned long long)__double_as_longlong(m);
         if (mb == seen) break; old = atomicCAS(a, seen, mb); } while (old != seen);
    return __longlong_as_double((long long)old); }
__device__ __forceinline__ double __gk_atomic_min(double* p, double v) {
    unsigned long long* a = (unsigned long long*)p; unsigned long long old = *a, seen;
    do { seen = old; double cur = __longlong_as_double((long long)seen); double m = fmin(cur, v);
         unsigned long long mb = (unsigned long long)__double_as_longlong(m);
         if (mb == seen) break; old = atomicCAS(a, seen, mb); } while (old != seen);
    return __longlong_as_double((long long)old); }
__device__ __forceinline__ int __gk_atomic_exch(int* p, int v) { return atomicExch(p, v); }
__device__ __forceinline__ unsigned int __gk_atomic_exch(unsigned int* p, unsigned int v) { return atomicExch(p, v); }
__device__ __forceinline__ unsigned long long __gk_atomic_exch(unsigned long long* p, unsigned long long v) { return atomicExch(p, v); }
__device__ __forceinline__ long long __gk_atomic_exch(long long* p, long long v) {
    return (long long)atomicExch((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ float __gk_atomic_exch(float* p, float v) { return atomicExch(p, v); }
__device__ __forceinline__ double __gk_atomic_exch(double* p, double v) {
    return __longlong_as_double((long long)atomicExch((unsigned long long*)p, (unsigned long long)__double_as_longlong(v))); }
__device__ __forceinline__ int __gk_atomic_cas(int* p, int c, int v) { return atomicCAS(p, c, v); }
__device__ __forceinline__ unsigned int __gk_atomic_cas(unsigned int* p, unsigned int c, unsigned int v) { return atomicCAS(p, c, v); }
__device__ __forceinline__ unsigned long long __gk_atomic_cas(unsigned long long* p, unsigned long long c, unsigned long long v) { return atomicCAS(p, c, v); }
__device__ __forceinline__ long long __gk_atomic_cas(long long* p, long long c, long long v) {
    return (long long)atomicCAS((unsigned long long*)p, (unsigned long long)c, (unsigned long long)v); }
__device__ __forceinline__ float __gk_atomic_cas(float* p, float c, float v) {
    return __uint_as_float(atomicCAS((unsigned int*)p, __float_as_uint(c), __float_as_uint(v))); }
__device__ __forceinline__ double __gk_atomic_cas(double* p, double c, double v) {
    return __longlong_as_double((long long)atomicCAS((unsigned long long*)p,
        (unsigned long long)__double_as_longlong(c), (unsigned long long)__double_as_longlong(v))); }
