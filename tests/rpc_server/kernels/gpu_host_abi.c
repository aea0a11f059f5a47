// Library candidates with the GPU host ABI (int32_t entry(float*..., void* stream)), for the
// gemm of TUNE_TEST_GPU_M x TUNE_TEST_GPU_N x TUNE_TEST_GPU_K:
//   gpu_entry_fails: fails the way a library does: it returns the library's error code;
//   gpu_entry_gemm: queues a naive gemm kernel on the caller's stream through the CUDA driver
//     API (opened with dlopen, no toolkit needed), as a library call does;
//   gpu_entry_gemm_synchronizes: the same, then waits for the stream, as a library call that
//     synchronises does: it cannot be captured into a graph.
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

int32_t gpu_entry_fails(float* a, float* b, float* c, void* stream) {
  (void)a;
  (void)b;
  (void)c;
  (void)stream;
  return 7;
}

// C[m][n] = sum_k A[m][k] * B[k][n], one thread per output element, block (16, 16).
static const char kGemmPtx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry host_abi_gemm(.param .u64 pa, .param .u64 pb, .param .u64 pc,\n"
    "    .param .u32 pm, .param .u32 pn, .param .u32 pk)\n"
    "{\n"
    "    .reg .pred %p<3>;\n"
    "    .reg .b32 %r<16>;\n"
    "    .reg .b64 %rd<8>;\n"
    "    .reg .f32 %f<4>;\n"
    "    ld.param.u64 %rd1, [pa];\n"
    "    ld.param.u64 %rd2, [pb];\n"
    "    ld.param.u64 %rd3, [pc];\n"
    "    ld.param.u32 %r12, [pm];\n"
    "    ld.param.u32 %r13, [pn];\n"
    "    ld.param.u32 %r14, [pk];\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    mad.lo.u32 %r4, %r1, %r2, %r3;\n"
    "    mov.u32 %r5, %ctaid.y;\n"
    "    mov.u32 %r6, %ntid.y;\n"
    "    mov.u32 %r7, %tid.y;\n"
    "    mad.lo.u32 %r8, %r5, %r6, %r7;\n"
    "    setp.ge.u32 %p1, %r4, %r13;\n"
    "    @%p1 bra $L_end;\n"
    "    setp.ge.u32 %p1, %r8, %r12;\n"
    "    @%p1 bra $L_end;\n"
    "    mul.lo.u32 %r9, %r8, %r14;\n"
    "    mul.wide.u32 %rd4, %r9, 4;\n"
    "    add.u64 %rd4, %rd1, %rd4;\n"
    "    mul.wide.u32 %rd5, %r4, 4;\n"
    "    add.u64 %rd5, %rd2, %rd5;\n"
    "    mul.wide.u32 %rd7, %r13, 4;\n"
    "    mov.f32 %f1, 0f00000000;\n"
    "    mov.u32 %r10, 0;\n"
    "$L_k:\n"
    "    ld.global.f32 %f2, [%rd4];\n"
    "    ld.global.f32 %f3, [%rd5];\n"
    "    fma.rn.f32 %f1, %f2, %f3, %f1;\n"
    "    add.u64 %rd4, %rd4, 4;\n"
    "    add.u64 %rd5, %rd5, %rd7;\n"
    "    add.u32 %r10, %r10, 1;\n"
    "    setp.lt.u32 %p2, %r10, %r14;\n"
    "    @%p2 bra $L_k;\n"
    "    mad.lo.u32 %r11, %r8, %r13, %r4;\n"
    "    mul.wide.u32 %rd6, %r11, 4;\n"
    "    add.u64 %rd6, %rd3, %rd6;\n"
    "    st.global.f32 [%rd6], %f1;\n"
    "$L_end:\n"
    "    ret;\n"
    "}\n";

typedef int (*ModuleLoadDataFn)(void** module, const void* image);
typedef int (*ModuleGetFunctionFn)(void** function, void* module, const char* name);
typedef int (*LaunchKernelFn)(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shared, void* stream,
                              void** params, void** extra);
typedef int (*StreamSynchronizeFn)(void* stream);

static LaunchKernelFn launch_kernel;
static StreamSynchronizeFn stream_synchronize;
static void* gemm_kernel;

// Opens the driver and loads the kernel into the current context once (in the warm-up call,
// as a library creates its handles). 0 on success.
static int Setup(void) {
  if (gemm_kernel != NULL) {
    return 0;
  }
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == NULL) {
    return -1;
  }
  ModuleLoadDataFn load = (ModuleLoadDataFn)dlsym(cuda, "cuModuleLoadData");
  ModuleGetFunctionFn get = (ModuleGetFunctionFn)dlsym(cuda, "cuModuleGetFunction");
  launch_kernel = (LaunchKernelFn)dlsym(cuda, "cuLaunchKernel");
  stream_synchronize = (StreamSynchronizeFn)dlsym(cuda, "cuStreamSynchronize");
  void* module = NULL;
  if (load == NULL || get == NULL || launch_kernel == NULL || stream_synchronize == NULL ||
      load(&module, kGemmPtx) != 0 || get(&gemm_kernel, module, "host_abi_gemm") != 0) {
    gemm_kernel = NULL;
    return -1;
  }
  return 0;
}

static int32_t Gemm(float* a, float* b, float* c, void* stream) {
  if (Setup() != 0) {
    return -1;
  }
  unsigned m = TUNE_TEST_GPU_M, n = TUNE_TEST_GPU_N, k = TUNE_TEST_GPU_K;
  void* params[] = {&a, &b, &c, &m, &n, &k};
  return launch_kernel(gemm_kernel, (n + 15) / 16, (m + 15) / 16, 1, 16, 16, 1, 0, stream, params,
                       NULL) == 0
             ? 0
             : 3;
}

int32_t gpu_entry_gemm(float* a, float* b, float* c, void* stream) { return Gemm(a, b, c, stream); }

int32_t gpu_entry_gemm_synchronizes(float* a, float* b, float* c, void* stream) {
  int32_t rc = Gemm(a, b, c, stream);
  if (rc != 0) {
    return rc;
  }
  return stream_synchronize(stream) == 0 ? 0 : 4;
}
