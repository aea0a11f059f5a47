#include "bench/openblas_baseline.h"

#include <cblas.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "bench/im2col.h"
#include "bench/library_epilogue.h"
#include "common/runtime_libs.h"

extern "C" char* openblas_get_corename(void);

namespace tune::bench {

std::string OpenblasCoreName() { return openblas_get_corename(); }

void SetOpenblasThreads(int threads) { openblas_set_num_threads(threads); }

void RestartForBestOpenblasCoretype(const char* program, char** argv) {
  // TUNE_BENCH_OPENBLAS_CORETYPE marks a type that this function chose.
  const char* chosen = std::getenv("TUNE_BENCH_OPENBLAS_CORETYPE");
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  if (chosen != nullptr && coretype != nullptr && std::string(chosen) == coretype) {
    return;
  }
  if (coretype != nullptr) {
    std::fprintf(stderr,
                 "%s: OPENBLAS_CORETYPE=%s is set; restarting without it so that OpenBLAS runs "
                 "at its best\n",
                 program, coretype);
    unsetenv("OPENBLAS_CORETYPE");
  } else if (std::optional<std::string> better = BetterOpenblasCoretype(OpenblasCoreName())) {
    std::fprintf(stderr,
                 "%s: OpenBLAS detected core '%s', without this CPU's widest vectors; "
                 "restarting with OPENBLAS_CORETYPE=%s\n",
                 program, OpenblasCoreName().c_str(), better->c_str());
    setenv("OPENBLAS_CORETYPE", better->c_str(), 1);
    setenv("TUNE_BENCH_OPENBLAS_CORETYPE", better->c_str(), 1);
  } else {
    return;
  }
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "%s: restart failed (%s); OpenBLAS keeps core '%s'\n", program,
               std::strerror(errno), OpenblasCoreName().c_str());
}

OpenblasKernel::OpenblasKernel(const Workload& workload) : workload_(workload) {
  if (workload.op() == OpKind::kConv2d) {
    const Conv2dShape& s = workload.conv2d();
    if (!Im2colIsIdentity(s)) {
      columns_.resize(s.c * s.r * s.s * s.p() * s.q());
    }
  }
}

int OpenblasKernel::Run(const std::vector<const float*>& inputs, float* output) {
  const bool has_bias = EpilogueHasBias(workload_.epilogue());
  const float* bias = has_bias ? inputs[2] : nullptr;
  switch (workload_.op()) {
    case OpKind::kGemm: {
      const GemmShape& g = workload_.gemm();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g.m, g.n, g.k, 1.0f, inputs[0], g.k,
                  inputs[1], g.n, 0.0f, output, g.n);
      ApplyEpilogue(workload_.epilogue(), bias, output, g.m, g.n, /*bias_per_row=*/false);
      return 0;
    }
    case OpKind::kConv2d: {
      const Conv2dShape& s = workload_.conv2d();
      const int64_t p_size = s.p(), q_size = s.q(), pq = p_size * q_size;
      for (int64_t n = 0; n < s.n; ++n) {
        const float* in = inputs[0] + n * s.c * s.h * s.w;
        // The im2col matrix (C*R*S x P*Q): the image itself for a 1x1 layer at stride 1.
        const float* columns = in;
        if (!Im2colIsIdentity(s)) {
          Im2col(s, in, columns_.data());
          columns = columns_.data();
        }
        float* out = output + n * s.k * pq;
        const int64_t crs = s.c * s.r * s.s;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.k, pq, crs, 1.0f, inputs[1], crs,
                    columns, pq, 0.0f, out, pq);
        ApplyEpilogue(workload_.epilogue(), bias, out, s.k, pq, /*bias_per_row=*/true);
      }
      return 0;
    }
  }
  return 1;
}

}  // namespace tune::bench
