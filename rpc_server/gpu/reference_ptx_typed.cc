// The typed inputs and GEMM reference of the CUDA measurement child (reference_ptx.h documents
// the kernels): element kinds, loads that decode them exactly, f32 accumulation, and the im2col
// that makes a typed NHWC convolution a GEMM for them.
#include "rpc_server/gpu/reference_ptx_typed.h"

#include "rpc_server/gpu/reference_ptx.h"

namespace tune::gpu {
namespace internal {
namespace {

constexpr char kTypedPtx[] =
    R"PTX(// Typed inputs: element kinds 0 f32, 1 tf32 (f32 rounded to 10 mantissa bits), 2 f16, 3 bf16,
// 4 fp8 e4m3, 5 fp8 e5m2, 6 a scale (f32 in [2, 4)), 7 s8 and 9 u8 (a byte of the hash: every
// value of the type), 8 i32 (a bias in [-2^15, 2^15)).
.visible .entry tune_fill_typed(
    .param .u64 p_out,
    .param .u64 p_n,
    .param .u64 p_seed,
    .param .u32 p_kind)
{
    .reg .pred %p<8>;
    .reg .b16 %h<2>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<12>;
    .reg .f32 %f<4>;

    ld.param.u64 %rd1, [p_out];
    ld.param.u64 %rd2, [p_n];
    ld.param.u64 %rd3, [p_seed];
    ld.param.u32 %r9, [p_kind];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.u64 %rd4, %rd4, %rd5;
    setp.ge.u64 %p1, %rd4, %rd2;
    @%p1 bra $L_typed_fill_done;
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
    mov.b32 %r4, %f2;
    cvt.u32.u64 %r5, %rd6;
    setp.eq.u32 %p2, %r9, 2;
    @%p2 bra $L_typed_fill_f16;
    setp.eq.u32 %p2, %r9, 3;
    @%p2 bra $L_typed_fill_bf16;
    setp.eq.u32 %p2, %r9, 4;
    @%p2 bra $L_typed_fill_e4m3;
    setp.eq.u32 %p2, %r9, 5;
    @%p2 bra $L_typed_fill_e5m2;
    setp.eq.u32 %p2, %r9, 6;
    @%p2 bra $L_typed_fill_scale;
    setp.eq.u32 %p2, %r9, 7;
    @%p2 bra $L_typed_fill_int8;
    setp.eq.u32 %p2, %r9, 9;
    @%p2 bra $L_typed_fill_int8;
    setp.eq.u32 %p2, %r9, 8;
    @%p2 bra $L_typed_fill_i32;
    setp.ne.u32 %p2, %r9, 1;
    @%p2 bra $L_typed_fill_f32;
    // tf32: bits + 0xfff + bit 13, the low 13 bits cleared (nearest even)
    shr.u32 %r6, %r4, 13;
    and.b32 %r6, %r6, 1;
    add.u32 %r4, %r4, 0xfff;
    add.u32 %r4, %r4, %r6;
    and.b32 %r4, %r4, 0xffffe000;
$L_typed_fill_f32:
    shl.b64 %rd8, %rd4, 2;
    add.u64 %rd9, %rd1, %rd8;
    st.global.b32 [%rd9], %r4;
    bra $L_typed_fill_done;
$L_typed_fill_scale:
    add.rn.f32 %f3, %f2, 0f40400000;
    shl.b64 %rd8, %rd4, 2;
    add.u64 %rd9, %rd1, %rd8;
    st.global.f32 [%rd9], %f3;
    bra $L_typed_fill_done;
$L_typed_fill_f16:
    cvt.rn.f16.f32 %h1, %f2;
    shl.b64 %rd8, %rd4, 1;
    add.u64 %rd9, %rd1, %rd8;
    st.global.b16 [%rd9], %h1;
    bra $L_typed_fill_done;
$L_typed_fill_bf16:
    // bits + 0x7fff + bit 16, the high half (nearest even; |value| < 1, never NaN)
    shr.u32 %r6, %r4, 16;
    and.b32 %r6, %r6, 1;
    add.u32 %r4, %r4, 0x7fff;
    add.u32 %r4, %r4, %r6;
    shr.u32 %r4, %r4, 16;
    cvt.u16.u32 %h1, %r4;
    shl.b64 %rd8, %rd4, 1;
    add.u64 %rd9, %rd1, %rd8;
    st.global.b16 [%rd9], %h1;
    bra $L_typed_fill_done;
$L_typed_fill_e4m3:
    // A code of magnitude below 1: sign, exponent field 0..6 (bias 7), any mantissa.
    and.b32 %r6, %r5, 7;
    shr.u32 %r7, %r5, 3;
    and.b32 %r7, %r7, 0xffff;
    rem.u32 %r7, %r7, 7;
    shl.b32 %r7, %r7, 3;
    or.b32 %r6, %r6, %r7;
    shr.u32 %r8, %r5, 31;
    shl.b32 %r8, %r8, 7;
    or.b32 %r6, %r6, %r8;
    bra $L_typed_fill_byte;
$L_typed_fill_e5m2:
    // Sign, exponent field 0..14 (bias 15), any mantissa.
    and.b32 %r6, %r5, 3;
    shr.u32 %r7, %r5, 2;
    and.b32 %r7, %r7, 0xffff;
    rem.u32 %r7, %r7, 15;
    shl.b32 %r7, %r7, 2;
    or.b32 %r6, %r6, %r7;
    shr.u32 %r8, %r5, 31;
    shl.b32 %r8, %r8, 7;
    or.b32 %r6, %r6, %r8;
    bra $L_typed_fill_byte;
$L_typed_fill_int8:
    and.b32 %r6, %r5, 255;
    bra $L_typed_fill_byte;
$L_typed_fill_i32:
    and.b32 %r6, %r5, 0xffff;
    sub.s32 %r6, %r6, 32768;
    shl.b64 %rd8, %rd4, 2;
    add.u64 %rd9, %rd1, %rd8;
    st.global.b32 [%rd9], %r6;
    bra $L_typed_fill_done;
$L_typed_fill_byte:
    add.u64 %rd9, %rd1, %rd4;
    st.global.u8 [%rd9], %r6;
$L_typed_fill_done:
    ret;
}

// Element `index` of kind `kind` (0 or 1: f32, 2 f16, 3 bf16, 4 e4m3, 5 e5m2) at `base`, as f32
// (exact: the fp8 codes tune_fill_typed writes are finite).
.func (.param .f32 p_value) tune_load_typed(
    .param .u64 p_base,
    .param .u64 p_index,
    .param .u32 p_kind)
{
    .reg .pred %p<4>;
    .reg .b16 %h<2>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<6>;
    .reg .f32 %f<3>;

    ld.param.u64 %rd1, [p_base];
    ld.param.u64 %rd2, [p_index];
    ld.param.u32 %r1, [p_kind];
    setp.eq.u32 %p1, %r1, 2;
    @%p1 bra $L_load_f16;
    setp.eq.u32 %p1, %r1, 3;
    @%p1 bra $L_load_bf16;
    setp.eq.u32 %p1, %r1, 4;
    @%p1 bra $L_load_e4m3;
    setp.eq.u32 %p1, %r1, 5;
    @%p1 bra $L_load_e5m2;
    shl.b64 %rd3, %rd2, 2;
    add.u64 %rd3, %rd1, %rd3;
    ld.global.f32 %f1, [%rd3];
    bra $L_load_done;
$L_load_f16:
    shl.b64 %rd3, %rd2, 1;
    add.u64 %rd3, %rd1, %rd3;
    ld.global.b16 %h1, [%rd3];
    cvt.f32.f16 %f1, %h1;
    bra $L_load_done;
$L_load_bf16:
    shl.b64 %rd3, %rd2, 1;
    add.u64 %rd3, %rd1, %rd3;
    ld.global.u16 %r2, [%rd3];
    shl.b32 %r2, %r2, 16;
    mov.b32 %f1, %r2;
    bra $L_load_done;
$L_load_e4m3:
    add.u64 %rd3, %rd1, %rd2;
    ld.global.u8 %r2, [%rd3];
    and.b32 %r3, %r2, 0x80;
    shl.b32 %r3, %r3, 24;
    shr.u32 %r4, %r2, 3;
    and.b32 %r4, %r4, 15;
    and.b32 %r5, %r2, 7;
    setp.eq.u32 %p2, %r4, 0;
    @%p2 bra $L_load_e4m3_sub;
    add.u32 %r4, %r4, 120;
    shl.b32 %r4, %r4, 23;
    shl.b32 %r5, %r5, 20;
    or.b32 %r6, %r4, %r5;
    or.b32 %r6, %r6, %r3;
    mov.b32 %f1, %r6;
    bra $L_load_done;
$L_load_e4m3_sub:
    cvt.rn.f32.u32 %f2, %r5;
    mul.rn.f32 %f2, %f2, 0f3B000000;
    mov.b32 %r6, %f2;
    or.b32 %r6, %r6, %r3;
    mov.b32 %f1, %r6;
    bra $L_load_done;
$L_load_e5m2:
    add.u64 %rd3, %rd1, %rd2;
    ld.global.u8 %r2, [%rd3];
    and.b32 %r3, %r2, 0x80;
    shl.b32 %r3, %r3, 24;
    shr.u32 %r4, %r2, 2;
    and.b32 %r4, %r4, 31;
    and.b32 %r5, %r2, 3;
    setp.eq.u32 %p2, %r4, 0;
    @%p2 bra $L_load_e5m2_sub;
    add.u32 %r4, %r4, 112;
    shl.b32 %r4, %r4, 23;
    shl.b32 %r5, %r5, 21;
    or.b32 %r6, %r4, %r5;
    or.b32 %r6, %r6, %r3;
    mov.b32 %f1, %r6;
    bra $L_load_done;
$L_load_e5m2_sub:
    cvt.rn.f32.u32 %f2, %r5;
    mul.rn.f32 %f2, %f2, 0f37800000;
    mov.b32 %r6, %f2;
    or.b32 %r6, %r6, %r3;
    mov.b32 %f1, %r6;
$L_load_done:
    st.param.f32 [p_value], %f1;
    ret;
}

// C[i][j] (f32) = scales * sum_k A[i][k] * B(k, j) + bias[j], relu; operands of the kinds in
// `kinds` (bits 0-3 A, 4-7 B, 8-11 the bias). flags: bit 0 bias, bit 1 relu, bit 2 B is
// [N][K] (layout=NT), bit 3 multiply by *scale_a * *scale_b.
.visible .entry tune_ref_gemm_typed(
    .param .u64 p_a,
    .param .u64 p_b,
    .param .u64 p_bias,
    .param .u64 p_c,
    .param .u64 p_scale_a,
    .param .u64 p_scale_b,
    .param .u32 p_m,
    .param .u32 p_n,
    .param .u32 p_k,
    .param .u32 p_flags,
    .param .u32 p_kinds)
{
    .reg .pred %p<6>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<24>;
    .reg .f32 %f<8>;

    ld.param.u64 %rd1, [p_a];
    ld.param.u64 %rd2, [p_b];
    ld.param.u64 %rd3, [p_bias];
    ld.param.u64 %rd4, [p_c];
    ld.param.u32 %r1, [p_m];
    ld.param.u32 %r2, [p_n];
    ld.param.u32 %r3, [p_k];
    ld.param.u32 %r4, [p_flags];
    ld.param.u32 %r10, [p_kinds];
    and.b32 %r11, %r10, 15;
    shr.u32 %r12, %r10, 4;
    and.b32 %r12, %r12, 15;
    shr.u32 %r13, %r10, 8;
    and.b32 %r13, %r13, 15;
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
    @%p1 bra $L_tgemm_done;
    div.u64 %rd10, %rd8, %rd6;
    rem.u64 %rd11, %rd8, %rd6;
    and.b32 %r8, %r4, 4;
    setp.ne.u32 %p4, %r8, 0;
    // A's index: row * K + kk; B's: kk * N + col (NN) or col * K + kk (NT).
    mul.lo.u64 %rd12, %rd10, %rd7;
    mul.lo.u64 %rd13, %rd11, %rd7;
    mov.f32 %f1, 0f00000000;
    mov.u64 %rd15, 0;
$L_tgemm_loop:
    add.u64 %rd16, %rd12, %rd15;
    {
      .param .u64 a_base;
      .param .u64 a_index;
      .param .u32 a_kind;
      .param .f32 a_value;
      st.param.u64 [a_base], %rd1;
      st.param.u64 [a_index], %rd16;
      st.param.u32 [a_kind], %r11;
      call.uni (a_value), tune_load_typed, (a_base, a_index, a_kind);
      ld.param.f32 %f2, [a_value];
    }
    @%p4 add.u64 %rd17, %rd13, %rd15;
    @!%p4 mad.lo.u64 %rd17, %rd15, %rd6, %rd11;
    {
      .param .u64 b_base;
      .param .u64 b_index;
      .param .u32 b_kind;
      .param .f32 b_value;
      st.param.u64 [b_base], %rd2;
      st.param.u64 [b_index], %rd17;
      st.param.u32 [b_kind], %r12;
      call.uni (b_value), tune_load_typed, (b_base, b_index, b_kind);
      ld.param.f32 %f3, [b_value];
    }
    fma.rn.f32 %f1, %f2, %f3, %f1;
    add.u64 %rd15, %rd15, 1;
    setp.lt.u64 %p2, %rd15, %rd7;
    @%p2 bra $L_tgemm_loop;
    and.b32 %r8, %r4, 8;
    setp.eq.u32 %p3, %r8, 0;
    @%p3 bra $L_tgemm_noscale;
    ld.param.u64 %rd18, [p_scale_a];
    ld.param.u64 %rd19, [p_scale_b];
    ld.global.f32 %f4, [%rd18];
    ld.global.f32 %f5, [%rd19];
    mul.rn.f32 %f4, %f4, %f5;
    mul.rn.f32 %f1, %f1, %f4;
$L_tgemm_noscale:
    and.b32 %r8, %r4, 1;
    setp.eq.u32 %p3, %r8, 0;
    @%p3 bra $L_tgemm_nobias;
    {
      .param .u64 c_base;
      .param .u64 c_index;
      .param .u32 c_kind;
      .param .f32 c_value;
      st.param.u64 [c_base], %rd3;
      st.param.u64 [c_index], %rd11;
      st.param.u32 [c_kind], %r13;
      call.uni (c_value), tune_load_typed, (c_base, c_index, c_kind);
      ld.param.f32 %f6, [c_value];
    }
    add.rn.f32 %f1, %f1, %f6;
$L_tgemm_nobias:
    and.b32 %r8, %r4, 2;
    setp.eq.u32 %p3, %r8, 0;
    @%p3 bra $L_tgemm_store;
    max.f32 %f1, %f1, 0f00000000;
$L_tgemm_store:
    shl.b64 %rd20, %rd8, 2;
    add.u64 %rd20, %rd4, %rd20;
    st.global.f32 [%rd20], %f1;
$L_tgemm_done:
    ret;
}

// C[i][j] = sum_k A[i][k] * B(k, j) in integers, wrapped to 32 bits as the tensor cores' sums
// are; A s8 (kinds bits 0-3: 7) or u8 (9), B s8. An i32 output (kinds bits 8-11: 8) adds the
// i32 bias[j] and applies the ReLU to the integer; an f32 output (0) converts the sum, multiplies
// it by the scales (flag bit 3) and adds the f32 bias. flags as tune_ref_gemm_typed's.
.visible .entry tune_ref_gemm_int(
    .param .u64 p_a,
    .param .u64 p_b,
    .param .u64 p_bias,
    .param .u64 p_c,
    .param .u64 p_scale_a,
    .param .u64 p_scale_b,
    .param .u32 p_m,
    .param .u32 p_n,
    .param .u32 p_k,
    .param .u32 p_flags,
    .param .u32 p_kinds)
{
    .reg .pred %p<6>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<24>;
    .reg .f32 %f<8>;

    ld.param.u64 %rd1, [p_a];
    ld.param.u64 %rd2, [p_b];
    ld.param.u64 %rd3, [p_bias];
    ld.param.u64 %rd4, [p_c];
    ld.param.u32 %r1, [p_m];
    ld.param.u32 %r2, [p_n];
    ld.param.u32 %r3, [p_k];
    ld.param.u32 %r4, [p_flags];
    ld.param.u32 %r10, [p_kinds];
    and.b32 %r11, %r10, 15;
    shr.u32 %r13, %r10, 8;
    and.b32 %r13, %r13, 15;
    setp.eq.u32 %p5, %r11, 9;
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
    @%p1 bra $L_igemm_done;
    div.u64 %rd10, %rd8, %rd6;
    rem.u64 %rd11, %rd8, %rd6;
    and.b32 %r8, %r4, 4;
    setp.ne.u32 %p4, %r8, 0;
    mul.lo.u64 %rd12, %rd10, %rd7;
    mul.lo.u64 %rd13, %rd11, %rd7;
    mov.u32 %r14, 0;
    mov.u64 %rd15, 0;
$L_igemm_loop:
    add.u64 %rd16, %rd12, %rd15;
    add.u64 %rd16, %rd1, %rd16;
    @%p5 ld.global.u8 %r15, [%rd16];
    @!%p5 ld.global.s8 %r15, [%rd16];
    @%p4 add.u64 %rd17, %rd13, %rd15;
    @!%p4 mad.lo.u64 %rd17, %rd15, %rd6, %rd11;
    add.u64 %rd17, %rd2, %rd17;
    ld.global.s8 %r16, [%rd17];
    mad.lo.s32 %r14, %r15, %r16, %r14;
    add.u64 %rd15, %rd15, 1;
    setp.lt.u64 %p2, %rd15, %rd7;
    @%p2 bra $L_igemm_loop;
    shl.b64 %rd20, %rd8, 2;
    add.u64 %rd20, %rd4, %rd20;
    shl.b64 %rd18, %rd11, 2;
    add.u64 %rd18, %rd3, %rd18;
    setp.eq.u32 %p3, %r13, 0;
    @%p3 bra $L_igemm_float;
    and.b32 %r8, %r4, 1;
    setp.eq.u32 %p3, %r8, 0;
    @%p3 bra $L_igemm_int_nobias;
    ld.global.s32 %r17, [%rd18];
    add.s32 %r14, %r14, %r17;
$L_igemm_int_nobias:
    and.b32 %r8, %r4, 2;
    setp.eq.u32 %p3, %r8, 0;
    @%p3 bra $L_igemm_int_store;
    max.s32 %r14, %r14, 0;
$L_igemm_int_store:
    st.global.s32 [%rd20], %r14;
    bra $L_igemm_done;
$L_igemm_float:
    cvt.rn.f32.s32 %f1, %r14;
    and.b32 %r8, %r4, 8;
    setp.eq.u32 %p3, %r8, 0;
    @%p3 bra $L_igemm_noscale;
    ld.param.u64 %rd21, [p_scale_a];
    ld.param.u64 %rd22, [p_scale_b];
    ld.global.f32 %f4, [%rd21];
    ld.global.f32 %f5, [%rd22];
    mul.rn.f32 %f4, %f4, %f5;
    mul.rn.f32 %f1, %f1, %f4;
$L_igemm_noscale:
    and.b32 %r8, %r4, 1;
    setp.eq.u32 %p3, %r8, 0;
    @%p3 bra $L_igemm_nobias;
    ld.global.f32 %f6, [%rd18];
    add.rn.f32 %f1, %f1, %f6;
$L_igemm_nobias:
    and.b32 %r8, %r4, 2;
    setp.eq.u32 %p3, %r8, 0;
    @%p3 bra $L_igemm_store;
    max.f32 %f1, %f1, 0f00000000;
$L_igemm_store:
    st.global.f32 [%rd20], %f1;
$L_igemm_done:
    ret;
}

// im2col of a typed NHWC input: out[m][(r, s, c)] = input[image][y * stride - pad + r * dil]
// [x * stride - pad + s * dil][c] for pixel m = (image, y, x), zero in the padding, elements of
// p_bytes bytes (1, 2 or 4), copied bit for bit: the A operand of the convolution as a GEMM of
// layout=NT with the KRSC weights as B, for tune_ref_gemm_typed and tune_ref_gemm_int.
.visible .entry tune_im2col_typed(
    .param .u64 p_in,
    .param .u64 p_out,
    .param .u32 p_n,
    .param .u32 p_c,
    .param .u32 p_h,
    .param .u32 p_w,
    .param .u32 p_r,
    .param .u32 p_s,
    .param .u32 p_p,
    .param .u32 p_q,
    .param .u32 p_stride,
    .param .u32 p_pad,
    .param .u32 p_dil,
    .param .u32 p_bytes)
{
    .reg .pred %p<6>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<32>;

    ld.param.u64 %rd1, [p_in];
    ld.param.u64 %rd2, [p_out];
    ld.param.u32 %r1, [p_n];
    ld.param.u32 %r2, [p_c];
    ld.param.u32 %r3, [p_h];
    ld.param.u32 %r4, [p_w];
    ld.param.u32 %r5, [p_r];
    ld.param.u32 %r6, [p_s];
    ld.param.u32 %r7, [p_p];
    ld.param.u32 %r8, [p_q];
    ld.param.u32 %r9, [p_stride];
    ld.param.u32 %r10, [p_pad];
    ld.param.u32 %r11, [p_dil];
    ld.param.u32 %r12, [p_bytes];
    mov.u32 %r13, %ctaid.x;
    mov.u32 %r14, %ntid.x;
    mov.u32 %r15, %tid.x;
    mul.wide.u32 %rd3, %r13, %r14;
    cvt.u64.u32 %rd4, %r15;
    add.u64 %rd3, %rd3, %rd4;
    // taps = R * S * C, pixels = N * P * Q; one thread per element of [pixels][taps].
    mul.wide.u32 %rd5, %r5, %r6;
    cvt.u64.u32 %rd6, %r2;
    mul.lo.u64 %rd5, %rd5, %rd6;
    mul.wide.u32 %rd7, %r7, %r8;
    cvt.u64.u32 %rd8, %r1;
    mul.lo.u64 %rd9, %rd8, %rd7;
    mul.lo.u64 %rd9, %rd9, %rd5;
    setp.ge.u64 %p1, %rd3, %rd9;
    @%p1 bra $L_im2col_done;
    div.u64 %rd10, %rd3, %rd5;
    rem.u64 %rd11, %rd3, %rd5;
    div.u64 %rd12, %rd10, %rd7;
    rem.u64 %rd13, %rd10, %rd7;
    cvt.u64.u32 %rd14, %r8;
    div.u64 %rd15, %rd13, %rd14;
    rem.u64 %rd16, %rd13, %rd14;
    mul.wide.u32 %rd17, %r6, %r2;
    div.u64 %rd18, %rd11, %rd17;
    rem.u64 %rd19, %rd11, %rd17;
    div.u64 %rd20, %rd19, %rd6;
    rem.u64 %rd21, %rd19, %rd6;
    // Input row y * stride - pad + r * dil and column x * stride - pad + s * dil (signed).
    cvt.u64.u32 %rd22, %r9;
    cvt.u64.u32 %rd23, %r10;
    cvt.u64.u32 %rd24, %r11;
    mul.lo.s64 %rd25, %rd15, %rd22;
    sub.s64 %rd25, %rd25, %rd23;
    mad.lo.s64 %rd25, %rd18, %rd24, %rd25;
    mul.lo.s64 %rd26, %rd16, %rd22;
    sub.s64 %rd26, %rd26, %rd23;
    mad.lo.s64 %rd26, %rd20, %rd24, %rd26;
    mov.b32 %r16, 0;
    cvt.u64.u32 %rd27, %r3;
    cvt.u64.u32 %rd28, %r4;
    setp.lt.s64 %p2, %rd25, 0;
    setp.ge.s64 %p3, %rd25, %rd27;
    or.pred %p2, %p2, %p3;
    setp.lt.s64 %p3, %rd26, 0;
    or.pred %p2, %p2, %p3;
    setp.ge.s64 %p3, %rd26, %rd28;
    or.pred %p2, %p2, %p3;
    @%p2 bra $L_im2col_store;
    mad.lo.u64 %rd29, %rd12, %rd27, %rd25;
    mad.lo.u64 %rd29, %rd29, %rd28, %rd26;
    mad.lo.u64 %rd29, %rd29, %rd6, %rd21;
    cvt.u64.u32 %rd30, %r12;
    mad.lo.u64 %rd29, %rd29, %rd30, %rd1;
    setp.eq.u32 %p4, %r12, 1;
    @%p4 bra $L_im2col_load1;
    setp.eq.u32 %p4, %r12, 2;
    @%p4 bra $L_im2col_load2;
    ld.global.b32 %r16, [%rd29];
    bra $L_im2col_store;
$L_im2col_load2:
    ld.global.u16 %r16, [%rd29];
    bra $L_im2col_store;
$L_im2col_load1:
    ld.global.u8 %r16, [%rd29];
$L_im2col_store:
    cvt.u64.u32 %rd30, %r12;
    mad.lo.u64 %rd31, %rd3, %rd30, %rd2;
    setp.eq.u32 %p4, %r12, 1;
    @%p4 bra $L_im2col_store1;
    setp.eq.u32 %p4, %r12, 2;
    @%p4 bra $L_im2col_store2;
    st.global.b32 [%rd31], %r16;
    bra $L_im2col_done;
$L_im2col_store2:
    st.global.u16 [%rd31], %r16;
    bra $L_im2col_done;
$L_im2col_store1:
    st.global.u8 [%rd31], %r16;
$L_im2col_done:
    ret;
}
)PTX";

}  // namespace

std::string_view TypedReferencePtx() { return kTypedPtx; }

}  // namespace internal

DtypeSet CudaReferenceDtypes() {
  return DtypeSet{Dtype::kF32, Dtype::kTf32, Dtype::kF16,     Dtype::kBf16,
                  Dtype::kI8,  Dtype::kU8I8, Dtype::kFp8E4m3, Dtype::kFp8E5m2};
}

}  // namespace tune::gpu
