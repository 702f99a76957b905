/* unison.ops._dropmask: dropout's keep mask from a counter-based generator, in C, without the GIL.
 *
 * fill(out, rate_threshold, key, scale) writes into `out` (a writable C-contiguous float32
 * buffer, e.g. a CPU tensor's .numpy()) one draw per element: `scale` where the element is kept,
 * 0 where it is dropped. Element i is kept when the 32-bit word i of the stream is >= the
 * threshold (rate * 2**32, rounded up), so each element is kept with probability 1 - rate to
 * within 2**-32. The stream is Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random
 * numbers: as easy as 1, 2, 3", SC 2011; also TensorFlow's and cuRAND's generator) under the
 * 64-bit `key`, counters 0, 1, 2, ...: word i is output i % 4 of counter i / 4.
 *
 * Why: torch draws CPU uniforms one Mersenne Twister step at a time (2.3 ms for 800k floats
 * here) and the comparison and scaling were three more passes; a Philox block is four
 * independent words from arithmetic alone, which the compiler vectorises, and the mask is
 * written in the same pass. The caller (keras/layers/dropout_mask.py) draws the key from torch's
 * generator, so tf.random.set_seed / keras.utils.set_random_seed still make runs repeatable.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

/* The four words of counter (c0, c1, c2, c3) under key (k0, k1): ten rounds, the key bumped between them. */
static inline void philox4(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1, uint32_t out[4]) {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 10
#endif
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* One block at a time: any compiler, any CPU. `start` is a multiple of 4. */
static void fill_scalar(float *out, Py_ssize_t start, Py_ssize_t n, uint32_t threshold, uint32_t k0, uint32_t k1,
                        float scale) {
    uint64_t first = (uint64_t)start / 4, full = (uint64_t)n / 4;
    for (uint64_t b = first; b < full; b++) {
        uint32_t r[4];
        philox4((uint32_t)b, (uint32_t)(b >> 32), 0, 0, k0, k1, r);
        float *o = out + 4 * b;
        o[0] = r[0] >= threshold ? scale : 0.0f;
        o[1] = r[1] >= threshold ? scale : 0.0f;
        o[2] = r[2] >= threshold ? scale : 0.0f;
        o[3] = r[3] >= threshold ? scale : 0.0f;
    }
    if ((uint64_t)n % 4 && (uint64_t)n / 4 >= first) { /* the last, partial block */
        uint32_t r[4];
        philox4((uint32_t)full, (uint32_t)(full >> 32), 0, 0, k0, k1, r);
        for (Py_ssize_t j = 0; j < n % 4; j++) out[4 * full + (uint64_t)j] = r[j] >= threshold ? scale : 0.0f;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX2_PATH 1

/* hi and lo 32 bits of a * c in each of the 8 lanes (the multiply takes the even lanes only). */
__attribute__((target("avx2"))) static inline void mulhilo8(__m256i a, __m256i c, __m256i *hi, __m256i *lo) {
    __m256i even = _mm256_mul_epu32(a, c);
    __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(c, 32));
    *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

/* Eight blocks per vector lane set (blocks 8g..8g+7: 32 elements), the same words as philox4;
 * returns how many elements it wrote (whole groups of 32). Blocks below 2**32 only (c1 = 0). */
__attribute__((target("avx2"))) static Py_ssize_t fill_avx2(float *out, Py_ssize_t n, uint32_t threshold, uint32_t key0,
                                                            uint32_t key1, float scale) {
    const __m256i m0 = _mm256_set1_epi32((int)PHILOX_M0), m1 = _mm256_set1_epi32((int)PHILOX_M1);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i sign = _mm256_set1_epi32((int)0x80000000u); /* unsigned compare = signed with sign flipped */
    const __m256i thr = _mm256_xor_si256(_mm256_set1_epi32((int)threshold), sign);
    const __m256 sc = _mm256_set1_ps(scale);
    Py_ssize_t groups = n / 32;
    for (Py_ssize_t g = 0; g < groups; g++) {
        __m256i c0 = _mm256_add_epi32(_mm256_set1_epi32((int)(uint32_t)(g * 8)), lane);
        __m256i c1 = _mm256_setzero_si256(), c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
        uint32_t k0 = key0, k1 = key1;
        for (int round = 0; round < 10; round++) {
            __m256i hi0, lo0, hi1, lo1;
            mulhilo8(m0, c0, &hi0, &lo0);
            mulhilo8(m1, c2, &hi1, &lo1);
            __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32((int)k0));
            __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32((int)k1));
            c1 = lo1;
            c3 = lo0;
            c0 = n0;
            c2 = n2;
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        __m256i w[4] = {c0, c1, c2, c3};
        __m256 f[4];
        for (int k = 0; k < 4; k++) { /* scale where word >= threshold, else 0 */
            __m256i below = _mm256_cmpgt_epi32(thr, _mm256_xor_si256(w[k], sign));
            f[k] = _mm256_andnot_ps(_mm256_castsi256_ps(below), sc);
        }
        /* f[k] holds word k of blocks 0..7; the output wants each block's 4 words together */
        __m256 t0 = _mm256_unpacklo_ps(f[0], f[1]), t1 = _mm256_unpackhi_ps(f[0], f[1]);
        __m256 t2 = _mm256_unpacklo_ps(f[2], f[3]), t3 = _mm256_unpackhi_ps(f[2], f[3]);
        __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        float *o = out + g * 32;
        _mm256_storeu_ps(o + 0, _mm256_permute2f128_ps(u0, u1, 0x20));
        _mm256_storeu_ps(o + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
        _mm256_storeu_ps(o + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
        _mm256_storeu_ps(o + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
    }
    return groups * 32;
}
#endif

static int use_avx2 = -1; /* -1: not asked yet; the tests switch it off to check the scalar path */

static void fill_mask(float *out, Py_ssize_t n, uint32_t threshold, uint64_t key, float scale) {
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    Py_ssize_t done = 0;
#ifdef HAVE_AVX2_PATH
    if (use_avx2 < 0) use_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (use_avx2 && (uint64_t)n / 4 < ((uint64_t)1 << 32)) done = fill_avx2(out, n, threshold, k0, k1, scale);
#endif
    fill_scalar(out, done, n, threshold, k0, k1, scale);
}

static PyObject *py_set_vector(PyObject *self, PyObject *args) {
    int on;
    (void)self;
    if (!PyArg_ParseTuple(args, "p", &on)) return NULL;
#ifdef HAVE_AVX2_PATH
    use_avx2 = on ? (__builtin_cpu_supports("avx2") ? 1 : 0) : 0;
    return PyBool_FromLong(use_avx2);
#else
    Py_RETURN_FALSE;
#endif
}

/* philox(c0, c1, c2, c3, k0, k1) -> the four words: the tests hold them to published vectors. */
static PyObject *py_philox(PyObject *self, PyObject *args) {
    unsigned long c0, c1, c2, c3, k0, k1;
    (void)self;
    if (!PyArg_ParseTuple(args, "kkkkkk", &c0, &c1, &c2, &c3, &k0, &k1)) return NULL;
    uint32_t r[4];
    philox4((uint32_t)c0, (uint32_t)c1, (uint32_t)c2, (uint32_t)c3, (uint32_t)k0, (uint32_t)k1, r);
    return Py_BuildValue("(kkkk)", (unsigned long)r[0], (unsigned long)r[1], (unsigned long)r[2], (unsigned long)r[3]);
}

static PyObject *py_fill(PyObject *self, PyObject *args) {
    Py_buffer view;
    unsigned long threshold;
    unsigned long long key;
    float scale;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*kKf", &view, &threshold, &key, &scale)) return NULL;
    if (view.itemsize != 4 || view.len % 4 || !PyBuffer_IsContiguous(&view, 'C') ||
        (view.format != NULL && strcmp(view.format, "f") != 0)) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_TypeError, "_dropmask.fill writes into a C-contiguous float32 buffer");
        return NULL;
    }
    if (threshold > 0xFFFFFFFFul) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "_dropmask.fill: the threshold is a 32-bit word");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    fill_mask((float *)view.buf, view.len / 4, (uint32_t)threshold, (uint64_t)key, scale);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"fill", py_fill, METH_VARARGS, "fill(out, threshold, key, scale): dropout's keep mask (scale or 0) into out."},
    {"set_vector", py_set_vector, METH_VARARGS, "set_vector(on) -> whether the AVX2 path is now used (tests)."},
    {"philox", py_philox, METH_VARARGS, "philox(c0, c1, c2, c3, k0, k1) -> the four 32-bit words of Philox4x32-10."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dropmask", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__dropmask(void) { return PyModule_Create(&module); }
