/*
 * backward.c - the exported LayerNorm and softmax backwards run from C, without Python
 * (docs/aot.md). The program owns the CUDA context, the stream and every buffer, as a framework
 * would; tad only launches the kernels `tad export` compiled.
 *
 *   backward KERNELS_DIR CASE_DIR [CALLS]
 *
 * KERNELS_DIR: what `tad export examples/layernorm.py -o KERNELS_DIR` (or softmax.py) wrote.
 * CASE_DIR: one case written by bench/aot_proof.py: meta.txt (example, dtype, sizes, the forward
 * launch's constexprs and num_warps), the forward launch's tensors (x.bin, ...), the incoming
 * gradient dy.bin, and the Python module's gradients (dx.mod, ...; dx.ref, ...: see aot_proof.py).
 * It copies the tensors to the GPU, runs the backward of the forward launch with
 * tad_launch_backward, copies the gradients back and compares them byte for byte with *.ref, then
 * times CALLS (default 1000) launches. Prints one JSON line; exits 0 when every gradient matches.
 *
 * libcuda is opened with dlopen here too, so that the program builds without the CUDA toolkit.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tad.h"

/* ---- the few driver entry points the program itself calls */
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;
typedef void *CUstream;
static struct {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDeviceGet)(int *, int);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, int);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuStreamCreate)(CUstream *, unsigned);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
    CUresult (*cuMemFree_v2)(CUdeviceptr);
    CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
    CUresult (*cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
} cu;

static void die(const char *what, const char *detail) {
    fprintf(stderr, "backward: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(2);
}

static void check(CUresult r, const char *call) {
    char code[32];
    if (r == 0) return;
    snprintf(code, sizeof code, "CUresult %d", r);
    die(call, code);
}

static void check_tad(int status) {
    if (status != TAD_OK) die(tad_error_last(), NULL); /* the message names `call` */
}

/* libcuda, or the library $TAD_LIBCUDA names (as libtad opens it: tests run this program on a fake). */
static void open_driver(void) {
    const char *path = getenv("TAD_LIBCUDA") && *getenv("TAD_LIBCUDA") ? getenv("TAD_LIBCUDA") : "libcuda.so.1";
    void *lib = dlopen(path, RTLD_NOW);
    if (!lib) die("cannot open the CUDA driver", dlerror());
#define RESOLVE(name)                                      \
    do {                                                   \
        *(void **)(&cu.name) = dlsym(lib, #name);          \
        if (!cu.name) die("the CUDA driver lacks", #name); \
    } while (0)
    RESOLVE(cuInit);
    RESOLVE(cuDeviceGet);
    RESOLVE(cuDevicePrimaryCtxRetain);
    RESOLVE(cuCtxSetCurrent);
    RESOLVE(cuStreamCreate);
    RESOLVE(cuStreamSynchronize);
    RESOLVE(cuMemAlloc_v2);
    RESOLVE(cuMemFree_v2);
    RESOLVE(cuMemcpyHtoD_v2);
    RESOLVE(cuMemcpyDtoH_v2);
#undef RESOLVE
}

/* ---- a case on disk */
typedef struct {
    char example[64], dtype[64];
    long long m, n, block, num_warps;
    double eps;
    const char *dir;
} Case;

static void read_meta(Case *c) {
    char path[4096], key[64], value[64];
    FILE *f;
    snprintf(path, sizeof path, "%s/meta.txt", c->dir);
    if (!(f = fopen(path, "r"))) die("cannot read", path);
    while (fscanf(f, "%63s %63s", key, value) == 2) {
        if (!strcmp(key, "example")) snprintf(c->example, sizeof c->example, "%s", value);
        if (!strcmp(key, "dtype")) snprintf(c->dtype, sizeof c->dtype, "%s", value);
        if (!strcmp(key, "M")) c->m = atoll(value);
        if (!strcmp(key, "N")) c->n = atoll(value);
        if (!strcmp(key, "block")) c->block = atoll(value);
        if (!strcmp(key, "num_warps")) c->num_warps = atoll(value);
        if (!strcmp(key, "eps")) c->eps = strtod(value, NULL);
    }
    fclose(f);
}

static void *read_file(const Case *c, const char *name, size_t bytes) {
    char path[4096];
    void *data = malloc(bytes ? bytes : 1);
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", c->dir, name);
    if (!(f = fopen(path, "rb")) || fread(data, 1, bytes, f) != bytes) die("cannot read", path);
    fclose(f);
    return data;
}

/* A device buffer holding the file `name` (NULL: zeros) of `bytes` bytes. */
static CUdeviceptr upload(const Case *c, const char *name, size_t bytes) {
    CUdeviceptr p;
    void *host = name ? read_file(c, name, bytes) : calloc(1, bytes);
    check(cu.cuMemAlloc_v2(&p, bytes), "cuMemAlloc_v2");
    check(cu.cuMemcpyHtoD_v2(p, host, bytes), "cuMemcpyHtoD_v2");
    free(host);
    return p;
}

/* A value of a 16- or 32-bit float element as a double. */
static double element(const unsigned char *p, const char *dtype) {
    uint32_t bits = 0;
    float f;
    if (!strcmp(dtype, "float32")) {
        memcpy(&f, p, 4);
        return f;
    }
    memcpy(&bits, p, 2);
    if (!strcmp(dtype, "bfloat16")) {
        bits <<= 16;
    } else { /* float16 */
        uint32_t sign = (bits & 0x8000u) << 16, exp = (bits >> 10) & 0x1f, man = bits & 0x3ff;
        if (exp == 0) return (sign ? -1 : 1) * ldexp((double)man, -24);
        bits = exp == 31 ? sign | 0x7f800000u | (man << 13) : sign | ((exp + 112) << 23) | (man << 13);
    }
    memcpy(&f, &bits, 4);
    return f;
}

typedef struct {
    long long mismatches; /* elements whose bytes differ from *.ref */
    double max_abs_vs_module; /* against *.mod */
} Compare;

/* Compares the gradient in device buffer `dev` with <name>.ref and <name>.mod. */
static void compare(const Case *c, CUdeviceptr dev, const char *name, size_t count, int size, Compare *out) {
    char ref[64], mod[64];
    size_t bytes = count * (size_t)size, i;
    unsigned char *got = malloc(bytes), *r, *m;
    snprintf(ref, sizeof ref, "%s.ref", name);
    snprintf(mod, sizeof mod, "%s.mod", name);
    r = read_file(c, ref, bytes);
    m = read_file(c, mod, bytes);
    check(cu.cuMemcpyDtoH_v2(got, dev, bytes), "cuMemcpyDtoH_v2");
    for (i = 0; i < count; ++i) {
        double d = fabs(element(got + i * size, c->dtype) - element(m + i * size, c->dtype));
        if (memcmp(got + i * size, r + i * size, (size_t)size)) ++out->mismatches;
        if (d > out->max_abs_vs_module || d != d) out->max_abs_vs_module = d;
    }
    free(got);
    free(r);
    free(m);
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    Case c;
    CUcontext ctx;
    CUstream stream;
    tad_kernels *kernels = NULL;
    tad_launch_options opts = TAD_LAUNCH_OPTIONS_INIT;
    tad_tensor_arg tensors[6];
    tad_value_arg values[4];
    Compare cmp = {0, 0.0};
    long long rows[2], vec[1], row_strides[2], unit[1] = {1}, calls = argc > 3 ? atoll(argv[3]) : 1000, i;
    int size, device = 0, layernorm, nt = 0, nv = 0;
    size_t mn, n;
    CUdeviceptr x, y, dx, dy, w = 0, b = 0, dw = 0, db = 0, mean = 0, rstd = 0;
    double start, enqueued, total;

    if (argc < 3) die("usage: backward KERNELS_DIR CASE_DIR [CALLS]", NULL);
    memset(&c, 0, sizeof c);
    c.dir = argv[2];
    read_meta(&c);
    layernorm = !strcmp(c.example, "layernorm");
    size = !strcmp(c.dtype, "float32") ? 4 : 2;
    mn = (size_t)(c.m * c.n);
    n = (size_t)c.n;

    open_driver();
    check(cu.cuInit(0), "cuInit");
    check(cu.cuDeviceGet(&device, 0), "cuDeviceGet");
    check(cu.cuDevicePrimaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain");
    check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    check(cu.cuStreamCreate(&stream, 0), "cuStreamCreate");
    check_tad(tad_kernels_load(argv[1], NULL, &kernels));

    x = upload(&c, "x.bin", mn * size);
    y = upload(&c, "y.bin", mn * size);
    dy = upload(&c, "dy.bin", mn * size);
    dx = upload(&c, NULL, mn * size);
    rows[0] = c.m;
    rows[1] = c.n;
    row_strides[0] = c.n;
    row_strides[1] = 1;
    vec[0] = c.n;

    /* The forward launch, described as the stub made it: every pointer argument (with the
     * gradient buffers), every other argument, the grid and num_warps. */
    tensors[nt++] = (tad_tensor_arg){"X", x, dx, 0, c.dtype, 2, rows, row_strides};
    tensors[nt++] = (tad_tensor_arg){"Y", y, dy, 0, c.dtype, 2, rows, row_strides};
    if (layernorm) {
        long long *m_rows = &rows[0];
        w = upload(&c, "w.bin", n * size);
        b = upload(&c, "b.bin", n * size);
        mean = upload(&c, "mean.bin", (size_t)c.m * 4);
        rstd = upload(&c, "rstd.bin", (size_t)c.m * 4);
        dw = upload(&c, NULL, n * size);
        db = upload(&c, NULL, n * size);
        tensors[nt++] = (tad_tensor_arg){"W", w, dw, 0, c.dtype, 1, vec, unit};
        tensors[nt++] = (tad_tensor_arg){"B", b, db, 0, c.dtype, 1, vec, unit};
        tensors[nt++] = (tad_tensor_arg){"Mean", mean, 0, 0, "float32", 1, m_rows, unit};
        tensors[nt++] = (tad_tensor_arg){"Rstd", rstd, 0, 0, "float32", 1, m_rows, unit};
        values[nv++] = (tad_value_arg){"stride", TAD_VALUE_INT, c.n, 0.0, NULL};
        values[nv++] = (tad_value_arg){"N", TAD_VALUE_INT, c.n, 0.0, NULL};
        values[nv++] = (tad_value_arg){"eps", TAD_VALUE_FLOAT, 0, c.eps, NULL};
    } else {
        values[nv++] = (tad_value_arg){"stride_x", TAD_VALUE_INT, c.n, 0.0, NULL};
        values[nv++] = (tad_value_arg){"stride_y", TAD_VALUE_INT, c.n, 0.0, NULL};
        values[nv++] = (tad_value_arg){"n_cols", TAD_VALUE_INT, c.n, 0.0, NULL};
    }
    values[nv++] = (tad_value_arg){"BLOCK_SIZE", TAD_VALUE_INT, c.block, 0.0, NULL};
    opts.stream = stream;
    opts.grid_x = c.m;
    opts.num_warps = (int)c.num_warps;
    opts.tensors = tensors;
    opts.num_tensors = nt;
    opts.values = values;
    opts.num_values = nv;

    check_tad(tad_launch_backward(kernels, &opts));
    check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
    compare(&c, dx, "dx", mn, size, &cmp);
    if (layernorm) {
        compare(&c, dw, "dw", n, size, &cmp);
        compare(&c, db, "db", n, size, &cmp);
    }

    /* Launch overhead: enqueueing alone, then with the GPU's work (the stream drained at the end). */
    for (i = 0; i < 50; ++i) check_tad(tad_launch_backward(kernels, &opts));
    check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
    start = now_us();
    for (i = 0; i < calls; ++i) check_tad(tad_launch_backward(kernels, &opts));
    enqueued = now_us() - start;
    check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
    total = now_us() - start;

    printf(
        "{\"program\": \"c\", \"case\": \"%s\", \"example\": \"%s\", \"dtype\": \"%s\", \"M\": %lld, \"N\": %lld, "
        "\"mismatches\": %lld, \"max_abs_vs_module\": %.9g, \"enqueue_us\": %.3f, \"per_call_us\": %.3f}\n",
        strrchr(c.dir, '/') ? strrchr(c.dir, '/') + 1 : c.dir, c.example, c.dtype, c.m, c.n, cmp.mismatches,
        cmp.max_abs_vs_module, enqueued / calls, total / calls);
    tad_kernels_free(kernels);
    return cmp.mismatches == 0 ? 0 : 1;
}
