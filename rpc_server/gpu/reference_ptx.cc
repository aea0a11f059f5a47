#include "rpc_server/gpu/reference_ptx.h"

#include <string>

#include "common/strings.h"
#include "rpc_server/gpu/reference_ptx_typed.h"

namespace tune::gpu {
namespace {

constexpr char kPtx[] = R"PTX(
.version 7.0
.target sm_70
.address_size 64

// splitmix64(seed + (index + 1) * 0x9E3779B97F4A7C15): the hash every input is drawn from.
.func (.param .u64 p_value) tune_hash(
    .param .u64 p_index,
    .param .u64 p_seed)
{
    .reg .b64 %rd<5>;

    ld.param.u64 %rd1, [p_index];
    ld.param.u64 %rd2, [p_seed];
    add.u64 %rd3, %rd1, 1;
    mul.lo.u64 %rd3, %rd3, 0x9E3779B97F4A7C15;
    add.u64 %rd3, %rd3, %rd2;
    shr.u64 %rd4, %rd3, 30;
    xor.b64 %rd3, %rd3, %rd4;
    mul.lo.u64 %rd3, %rd3, 0xBF58476D1CE4E5B9;
    shr.u64 %rd4, %rd3, 27;
    xor.b64 %rd3, %rd3, %rd4;
    mul.lo.u64 %rd3, %rd3, 0x94D049BB133111EB;
    shr.u64 %rd4, %rd3, 31;
    xor.b64 %rd3, %rd3, %rd4;
    st.param.u64 [p_value], %rd3;
    ret;
}

.visible .entry tune_fill_uniform(
    .param .u64 p_out,
    .param .u64 p_n,
    .param .u64 p_seed)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<10>;
    .reg .f32 %f<3>;

    ld.param.u64 %rd1, [p_out];
    ld.param.u64 %rd2, [p_n];
    ld.param.u64 %rd3, [p_seed];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.u64 %rd4, %rd4, %rd5;
    setp.ge.u64 %p1, %rd4, %rd2;
    @%p1 bra $L_fill_done;
    {
      .param .u64 h_index;
      .param .u64 h_seed;
      .param .u64 h_value;
      st.param.u64 [h_index], %rd4;
      st.param.u64 [h_seed], %rd3;
      call.uni (h_value), tune_hash, (h_index, h_seed);
      ld.param.u64 %rd6, [h_value];
    }
    shr.u64 %rd7, %rd6, 40;
    cvt.rn.f32.u64 %f1, %rd7;
    fma.rn.f32 %f2, %f1, 0f34000000, 0fBF800000;
    shl.b64 %rd8, %rd4, 2;
    add.u64 %rd9, %rd1, %rd8;
    st.global.f32 [%rd9], %f2;
$L_fill_done:
    ret;
}

.visible .entry tune_ref_gemm(
    .param .u64 p_a,
    .param .u64 p_b,
    .param .u64 p_bias,
    .param .u64 p_c,
    .param .u32 p_m,
    .param .u32 p_n,
    .param .u32 p_k,
    .param .u32 p_flags)
{
    .reg .pred %p<4>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<20>;
    .reg .f32 %f<5>;

    ld.param.u64 %rd1, [p_a];
    ld.param.u64 %rd2, [p_b];
    ld.param.u64 %rd3, [p_bias];
    ld.param.u64 %rd4, [p_c];
    ld.param.u32 %r1, [p_m];
    ld.param.u32 %r2, [p_n];
    ld.param.u32 %r3, [p_k];
    ld.param.u32 %r4, [p_flags];
    cvt.u64.u32 %rd5, %r1;
    cvt.u64.u32 %rd6, %r2;
    cvt.u64.u32 %rd7, %r3;
    mov.u32 %r5, %ctaid.x;
    mov.u32 %r6, %ntid.x;
    mov.u32 %r7, %tid.x;
    mul.wide.u32 %rd8, %r5, %r6;
    cvt.u64.u32 %rd9, %r7;
    add.u64 %rd8, %rd8, %rd9;
    mul.lo.u64 %rd9, %rd5, %rd6;
    setp.ge.u64 %p1, %rd8, %rd9;
    @%p1 bra $L_gemm_done;
    div.u64 %rd10, %rd8, %rd6;
    rem.u64 %rd11, %rd8, %rd6;
    mul.lo.u64 %rd12, %rd10, %rd7;
    shl.b64 %rd12, %rd12, 2;
    add.u64 %rd12, %rd1, %rd12;
    shl.b64 %rd13, %rd11, 2;
    add.u64 %rd13, %rd2, %rd13;
    shl.b64 %rd14, %rd6, 2;
    mov.f32 %f1, 0f00000000;
    mov.u64 %rd15, 0;
$L_gemm_loop:
    ld.global.f32 %f2, [%rd12];
    ld.global.f32 %f3, [%rd13];
    fma.rn.f32 %f1, %f2, %f3, %f1;
    add.u64 %rd12, %rd12, 4;
    add.u64 %rd13, %rd13, %rd14;
    add.u64 %rd15, %rd15, 1;
    setp.lt.u64 %p2, %rd15, %rd7;
    @%p2 bra $L_gemm_loop;
    and.b32 %r8, %r4, 1;
    setp.eq.u32 %p3, %r8, 0;
    @%p3 bra $L_gemm_nobias;
    shl.b64 %rd16, %rd11, 2;
    add.u64 %rd16, %rd3, %rd16;
    ld.global.f32 %f4, [%rd16];
    add.rn.f32 %f1, %f1, %f4;
$L_gemm_nobias:
    and.b32 %r9, %r4, 2;
    setp.eq.u32 %p3, %r9, 0;
    @%p3 bra $L_gemm_store;
    max.f32 %f1, %f1, 0f00000000;
$L_gemm_store:
    shl.b64 %rd17, %rd8, 2;
    add.u64 %rd17, %rd4, %rd17;
    st.global.f32 [%rd17], %f1;
$L_gemm_done:
    ret;
}

.visible .entry tune_ref_conv2d(
    .param .u64 p_in,
    .param .u64 p_wt,
    .param .u64 p_bias,
    .param .u64 p_out,
    .param .u32 p_n,
    .param .u32 p_c,
    .param .u32 p_h,
    .param .u32 p_w,
    .param .u32 p_k,
    .param .u32 p_r,
    .param .u32 p_s,
    .param .u32 p_p,
    .param .u32 p_q,
    .param .u32 p_stride,
    .param .u32 p_pad,
    .param .u32 p_dil,
    .param .u32 p_flags)
{
    .reg .pred %p<6>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<30>;
    .reg .f32 %f<6>;

    ld.param.u64 %rd1, [p_in];
    ld.param.u64 %rd2, [p_wt];
    ld.param.u64 %rd3, [p_bias];
    ld.param.u64 %rd4, [p_out];
    ld.param.u32 %r1, [p_n];
    ld.param.u32 %r2, [p_c];
    ld.param.u32 %r3, [p_h];
    ld.param.u32 %r4, [p_w];
    ld.param.u32 %r5, [p_k];
    ld.param.u32 %r6, [p_r];
    ld.param.u32 %r7, [p_s];
    ld.param.u32 %r8, [p_p];
    ld.param.u32 %r9, [p_q];
    ld.param.u32 %r10, [p_stride];
    ld.param.u32 %r11, [p_pad];
    ld.param.u32 %r12, [p_dil];
    ld.param.u32 %r13, [p_flags];

    // idx = ctaid.x * ntid.x + tid.x; total = N*K*P*Q
    mov.u32 %r30, %ctaid.x;
    mov.u32 %r31, %ntid.x;
    mov.u32 %r32, %tid.x;
    mul.wide.u32 %rd5, %r30, %r31;
    cvt.u64.u32 %rd6, %r32;
    add.u64 %rd5, %rd5, %rd6;
    cvt.u64.u32 %rd6, %r1;
    cvt.u64.u32 %rd7, %r5;
    mul.lo.u64 %rd6, %rd6, %rd7;
    cvt.u64.u32 %rd7, %r8;
    mul.lo.u64 %rd6, %rd6, %rd7;
    cvt.u64.u32 %rd7, %r9;
    mul.lo.u64 %rd6, %rd6, %rd7;
    setp.ge.u64 %p1, %rd5, %rd6;
    @%p1 bra $L_conv_done;

    // q, p, k, n from idx
    cvt.u64.u32 %rd7, %r9;
    rem.u64 %rd8, %rd5, %rd7;
    cvt.u32.u64 %r14, %rd8;
    div.u64 %rd9, %rd5, %rd7;
    cvt.u64.u32 %rd7, %r8;
    rem.u64 %rd8, %rd9, %rd7;
    cvt.u32.u64 %r15, %rd8;
    div.u64 %rd9, %rd9, %rd7;
    cvt.u64.u32 %rd7, %r5;
    rem.u64 %rd8, %rd9, %rd7;
    cvt.u32.u64 %r16, %rd8;
    div.u64 %rd9, %rd9, %rd7;
    cvt.u32.u64 %r17, %rd9;

    // h0 = p*stride - pad, w0 = q*stride - pad
    mul.lo.s32 %r18, %r15, %r10;
    sub.s32 %r18, %r18, %r11;
    mul.lo.s32 %r19, %r14, %r10;
    sub.s32 %r19, %r19, %r11;

    cvt.u64.u32 %rd20, %r4;
    cvt.u64.u32 %rd21, %r7;
    mov.f32 %f1, 0f00000000;
    mov.u32 %r20, 0;
$L_conv_c:
    // in_c = input + ((n*C + c) * H * W) * 4
    mad.lo.u32 %r21, %r17, %r2, %r20;
    mul.wide.u32 %rd10, %r21, %r3;
    mul.lo.u64 %rd10, %rd10, %rd20;
    shl.b64 %rd10, %rd10, 2;
    add.u64 %rd11, %rd1, %rd10;
    // wt_c = weight + ((k*C + c) * R * S) * 4
    mad.lo.u32 %r22, %r16, %r2, %r20;
    mul.wide.u32 %rd12, %r22, %r6;
    mul.lo.u64 %rd12, %rd12, %rd21;
    shl.b64 %rd12, %rd12, 2;
    add.u64 %rd13, %rd2, %rd12;
    mov.u32 %r23, 0;
$L_conv_r:
    mad.lo.s32 %r24, %r23, %r12, %r18;
    setp.lt.s32 %p2, %r24, 0;
    @%p2 bra $L_conv_r_next;
    setp.ge.s32 %p2, %r24, %r3;
    @%p2 bra $L_conv_r_next;
    // row = in_c + h * W * 4; wrow = wt_c + r * S * 4
    mul.wide.s32 %rd14, %r24, %r4;
    shl.b64 %rd14, %rd14, 2;
    add.u64 %rd15, %rd11, %rd14;
    mul.wide.u32 %rd16, %r23, %r7;
    shl.b64 %rd16, %rd16, 2;
    add.u64 %rd17, %rd13, %rd16;
    mov.u32 %r25, 0;
$L_conv_s:
    mad.lo.s32 %r26, %r25, %r12, %r19;
    setp.lt.s32 %p3, %r26, 0;
    @%p3 bra $L_conv_s_next;
    setp.ge.s32 %p3, %r26, %r4;
    @%p3 bra $L_conv_s_next;
    mul.wide.s32 %rd18, %r26, 4;
    add.u64 %rd18, %rd15, %rd18;
    ld.global.f32 %f2, [%rd18];
    mul.wide.u32 %rd19, %r25, 4;
    add.u64 %rd19, %rd17, %rd19;
    ld.global.f32 %f3, [%rd19];
    fma.rn.f32 %f1, %f3, %f2, %f1;
$L_conv_s_next:
    add.u32 %r25, %r25, 1;
    setp.lt.u32 %p4, %r25, %r7;
    @%p4 bra $L_conv_s;
$L_conv_r_next:
    add.u32 %r23, %r23, 1;
    setp.lt.u32 %p4, %r23, %r6;
    @%p4 bra $L_conv_r;
    add.u32 %r20, %r20, 1;
    setp.lt.u32 %p4, %r20, %r2;
    @%p4 bra $L_conv_c;

    and.b32 %r27, %r13, 1;
    setp.eq.u32 %p5, %r27, 0;
    @%p5 bra $L_conv_nobias;
    mul.wide.u32 %rd22, %r16, 4;
    add.u64 %rd22, %rd3, %rd22;
    ld.global.f32 %f4, [%rd22];
    add.rn.f32 %f1, %f1, %f4;
$L_conv_nobias:
    and.b32 %r28, %r13, 2;
    setp.eq.u32 %p5, %r28, 0;
    @%p5 bra $L_conv_store;
    max.f32 %f1, %f1, 0f00000000;
$L_conv_store:
    shl.b64 %rd23, %rd5, 2;
    add.u64 %rd23, %rd4, %rd23;
    st.global.f32 [%rd23], %f1;
$L_conv_done:
    ret;
}
)PTX";

}  // namespace

std::string_view ReferencePtx() {
  // One module: the f32 kernels above (and tune_hash, which the typed fill calls), then the
  // typed ones.
  static const std::string* text = new std::string(StrCat(kPtx, internal::TypedReferencePtx()));
  return *text;
}

}  // namespace tune::gpu
