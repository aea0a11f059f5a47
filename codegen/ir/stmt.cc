#include "codegen/ir/stmt.h"

#include <algorithm>

#include "codegen/ir/ir.h"
#include "codegen/ir/node_util.h"
#include "common/status.h"

namespace tune::ir {

// --- statements -----------------------------------------------------------------------------

namespace {

Stmt MakeStore(Buffer buffer, Expr index, Expr value, bool atomic_add, bool async_copy = false,
               Expr valid = Expr()) {
  TUNE_CHECK(buffer.defined()) << "Store: undefined buffer";
  TUNE_CHECK(index.defined() && index.type().is_int())
      << "Store " << buffer.name() << ": index must be an integer";
  TUNE_CHECK(value.defined()) << "Store " << buffer.name() << ": undefined value";
  int lanes = std::max(index.type().lanes(), value.type().lanes());
  CoerceTo(&value, buffer.element_type(), lanes);
  if (index.type().is_scalar() && lanes > 1) {
    index = Ramp::Make(index, 1, lanes);
  }
  TUNE_CHECK(value.type() == buffer.element_type().WithLanes(lanes) &&
             index.type().lanes() == lanes)
      << "Store " << buffer.name() << ": value type " << value.type().ToString()
      << " does not match " << buffer.element_type().WithLanes(lanes).ToString()
      << " through an index of " << index.type().lanes() << " lanes";
  auto node = std::make_shared<Store>();
  node->buffer = std::move(buffer);
  node->index = std::move(index);
  node->value = std::move(value);
  node->atomic_add = atomic_add;
  node->async_copy = async_copy;
  TUNE_CHECK(!valid.defined() || (async_copy && valid.type() == Type::Bool()))
      << "Store " << node->buffer.name() << ": a validity is a scalar bool of an async copy";
  node->valid = std::move(valid);
  return WrapStmt(std::move(node));
}

}  // namespace

Stmt Store::Make(Buffer buffer, Expr index, Expr value) {
  return MakeStore(std::move(buffer), std::move(index), std::move(value), false);
}

Stmt Store::MakeAtomicAdd(Buffer buffer, Expr index, Expr value) {
  TUNE_CHECK(buffer.defined() && buffer.scope() == MemoryScope::kGlobal &&
             buffer.element_type() == Type::Float32())
      << "Store " << (buffer.defined() ? buffer.name() : "?")
      << ": atomic adds go to global float32 buffers only";
  return MakeStore(std::move(buffer), std::move(index), std::move(value), true);
}

Stmt Store::MakeAsyncCopy(Buffer dst, Expr dst_index, Buffer src, Expr src_index, int lanes,
                          Expr valid) {
  TUNE_CHECK(dst.defined() && dst.scope() == MemoryScope::kGpuShared && src.defined() &&
             src.scope() == MemoryScope::kGlobal && dst.element_type() == src.element_type())
      << "Store: asynchronous copies go from a global buffer to a gpu_shared one of the same "
         "element type";
  const int64_t bytes = int64_t{lanes} * dst.element_type().Bytes();
  TUNE_CHECK(bytes == 4 || bytes == 8 || bytes == 16)
      << "Store " << dst.name() << ": an asynchronous copy moves 4, 8 or 16 bytes, not " << lanes
      << " elements of " << dst.element_type().ToString();
  TUNE_CHECK(dst_index.defined() && dst_index.type().is_scalar() && src_index.defined() &&
             src_index.type().is_scalar())
      << "Store " << dst.name() << ": an asynchronous copy takes scalar base indexes";
  Expr value = Load::Make(std::move(src), std::move(src_index), lanes);
  return MakeStore(std::move(dst), std::move(dst_index), std::move(value), false, true,
                   std::move(valid));
}

Stmt Store::MakeLike(const Store* like, Expr index, Expr value, Expr valid) {
  TUNE_CHECK(like != nullptr);
  return MakeStore(like->buffer, std::move(index), std::move(value), like->atomic_add,
                   like->async_copy, std::move(valid));
}

Stmt For::Make(Var var, Expr min, Expr extent, LoopKind kind, Stmt body, int thread_axis) {
  TUNE_CHECK(var.defined() && var.type().is_int() && var.type().is_scalar())
      << "For: loop variable must be a scalar integer";
  TUNE_CHECK(min.defined() && extent.defined()) << "For " << var.name() << ": undefined bounds";
  CoerceTo(&min, var.type(), 1);
  CoerceTo(&extent, var.type(), 1);
  TUNE_CHECK(min.type() == var.type() && extent.type() == var.type())
      << "For " << var.name() << ": min/extent must be " << var.type().ToString() << ", got "
      << min.type().ToString() << "/" << extent.type().ToString();
  TUNE_CHECK(body.defined()) << "For " << var.name() << ": undefined body";
  TUNE_CHECK(thread_axis >= 0 && thread_axis <= 2)
      << "For " << var.name() << ": thread_axis must be 0..2, got " << thread_axis;
  TUNE_CHECK(IsGpuLoop(kind) || thread_axis == 0)
      << "For " << var.name() << ": thread_axis is only for GPU loops";
  auto node = std::make_shared<For>();
  node->var = std::move(var);
  node->min = std::move(min);
  node->extent = std::move(extent);
  node->loop_kind = kind;
  node->thread_axis = thread_axis;
  node->body = std::move(body);
  return WrapStmt(std::move(node));
}

Stmt Block::Make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  flat.reserve(stmts.size());
  for (Stmt& s : stmts) {
    if (!s.defined()) {
      continue;
    }
    if (const auto* inner = s.As<Block>()) {
      flat.insert(flat.end(), inner->stmts.begin(), inner->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) {
    return flat[0];
  }
  auto node = std::make_shared<Block>();
  node->stmts = std::move(flat);
  return WrapStmt(std::move(node));
}

Stmt IfThenElse::Make(Expr condition, Stmt then_case, Stmt else_case) {
  TUNE_CHECK(condition.defined() && condition.type() == Type::Bool())
      << "IfThenElse: condition must be a scalar bool";
  TUNE_CHECK(then_case.defined()) << "IfThenElse: undefined then_case";
  auto node = std::make_shared<IfThenElse>();
  node->condition = std::move(condition);
  node->then_case = std::move(then_case);
  node->else_case = std::move(else_case);
  return WrapStmt(std::move(node));
}

Stmt LetStmt::Make(Var var, Expr value, Stmt body) {
  TUNE_CHECK(var.defined() && value.defined() && body.defined())
      << "LetStmt: undefined var, value or body";
  CoerceTo(&value, var.type().Element(), var.type().lanes());
  TUNE_CHECK(value.type() == var.type())
      << "LetStmt " << var.name() << ": value type " << value.type().ToString()
      << " does not match " << var.type().ToString();
  auto node = std::make_shared<LetStmt>();
  node->var = std::move(var);
  node->value = std::move(value);
  node->body = std::move(body);
  return WrapStmt(std::move(node));
}

Stmt Allocate::Make(Buffer buffer, int64_t size, Stmt body) {
  TUNE_CHECK(buffer.defined() && body.defined()) << "Allocate: undefined buffer or body";
  TUNE_CHECK(size >= 1) << "Allocate " << buffer.name() << ": size must be >= 1, got " << size;
  auto node = std::make_shared<Allocate>();
  node->buffer = std::move(buffer);
  node->size = size;
  node->body = std::move(body);
  return WrapStmt(std::move(node));
}

Stmt Evaluate::Make(Expr value, bool return_on_error) {
  TUNE_CHECK(value.defined()) << "Evaluate: undefined value";
  TUNE_CHECK(!return_on_error || value.type() == Type::Int32())
      << "Evaluate: a status returned on error must be int32, not " << value.type().ToString();
  auto node = std::make_shared<Evaluate>();
  node->value = std::move(value);
  node->return_on_error = return_on_error;
  return WrapStmt(std::move(node));
}

int64_t WarpMmaK(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF16:
    case Dtype::kBf16:
      return 16;
    case Dtype::kTf32:
      return 8;
    case Dtype::kI8:
    case Dtype::kU8I8:
    case Dtype::kFp8E4m3:
    case Dtype::kFp8E5m2:
      return 32;
    case Dtype::kF32:
    case Dtype::kFp8E4m3Fnuz:
    case Dtype::kFp8E5m2Fnuz:
      return 0;
  }
  return 0;
}

Stmt WarpMma::Make(Dtype dtype, Buffer a, Expr a_index, int64_t a_stride, Buffer b, Expr b_index,
                   int64_t b_stride, bool b_k_contiguous, Buffer acc, int64_t acc_offset,
                   int m_tiles, int n_tiles) {
  const int64_t k = WarpMmaK(dtype);
  TUNE_CHECK(k > 0) << "WarpMma: no tensor-core instruction for dtype " << DtypeName(dtype);
  TUNE_CHECK(a.defined() && b.defined() && acc.defined()) << "WarpMma: undefined buffer";
  TUNE_CHECK(a.scope() == MemoryScope::kGpuShared && b.scope() == MemoryScope::kGpuShared)
      << "WarpMma: A and B must be gpu_shared, got " << MemoryScopeName(a.scope()) << " and "
      << MemoryScopeName(b.scope());
  TUNE_CHECK(a.element_type() == Type::Of(ActivationType(dtype)) &&
             b.element_type() == Type::Of(WeightType(dtype)))
      << "WarpMma " << DtypeName(dtype) << ": A and B hold " << a.element_type().ToString()
      << " and " << b.element_type().ToString() << ", not the dtype's storage types";
  TUNE_CHECK(acc.scope() == MemoryScope::kGpuLocal &&
             acc.element_type() == Type::Of(AccumulatorType(dtype)))
      << "WarpMma: the accumulators must be gpu_local "
      << Type::Of(AccumulatorType(dtype)).ToString();
  TUNE_CHECK(b_k_contiguous || ElementBytes(WeightType(dtype)) == 2)
      << "WarpMma " << DtypeName(dtype) << ": B stored [k][n] needs a 16-bit dtype";
  TUNE_CHECK(a_index.defined() && a_index.type().is_int() && a_index.type().is_scalar() &&
             b_index.defined() && b_index.type().is_int() && b_index.type().is_scalar())
      << "WarpMma: indexes must be scalar integers";
  TUNE_CHECK(m_tiles >= 1 && n_tiles >= 1 && a_stride >= k && acc_offset >= 0 &&
             b_stride >= (b_k_contiguous ? k : 8 * n_tiles))
      << "WarpMma: tiles " << m_tiles << "x" << n_tiles << ", strides " << a_stride << "/"
      << b_stride << " or accumulator offset " << acc_offset << " out of range";
  auto node = std::make_shared<WarpMma>();
  node->dtype = dtype;
  node->a = std::move(a);
  node->b = std::move(b);
  node->acc = std::move(acc);
  node->a_index = std::move(a_index);
  node->b_index = std::move(b_index);
  node->a_stride = a_stride;
  node->b_stride = b_stride;
  node->b_k_contiguous = b_k_contiguous;
  node->m_tiles = m_tiles;
  node->n_tiles = n_tiles;
  node->acc_offset = acc_offset;
  return WrapStmt(std::move(node));
}

std::string_view WaveMmaShapeName(WaveMmaShape shape) {
  switch (shape) {
    case WaveMmaShape::kMfma32x32:
      return "mfma32x32";
    case WaveMmaShape::kMfma16x16:
      return "mfma16x16";
    case WaveMmaShape::kWmma16x16:
      return "wmma16x16";
  }
  return "?";
}

int WaveMmaLanes(WaveMmaShape shape) { return shape == WaveMmaShape::kWmma16x16 ? 32 : 64; }

int WaveMmaTile(WaveMmaShape shape) { return shape == WaveMmaShape::kMfma32x32 ? 32 : 16; }

int WaveMmaAccumulators(WaveMmaShape shape) {
  switch (shape) {
    case WaveMmaShape::kMfma32x32:
      return 16;
    case WaveMmaShape::kMfma16x16:
      return 4;
    case WaveMmaShape::kWmma16x16:
      return 8;
  }
  return 0;
}

bool WaveMmaTakes(WaveMmaShape shape, Dtype dtype, int k) {
  // The instructions' reduction depths by dtype, one row per shape (see stmt.h).
  const int f16 = shape == WaveMmaShape::kMfma32x32 ? 8 : 16;
  switch (dtype) {
    case Dtype::kF16:
    case Dtype::kBf16:
      return k == f16;
    case Dtype::kI8:
      return shape == WaveMmaShape::kWmma16x16 ? k == 16 : (k == f16 || k == 2 * f16);
    case Dtype::kU8I8:
      return shape == WaveMmaShape::kWmma16x16 && k == 16;
    case Dtype::kFp8E4m3Fnuz:
    case Dtype::kFp8E5m2Fnuz:
      return shape != WaveMmaShape::kWmma16x16 && k == 2 * f16;
    case Dtype::kF32:
    case Dtype::kTf32:
    case Dtype::kFp8E4m3:
    case Dtype::kFp8E5m2:
      return false;
  }
  return false;
}

int WaveMmaKPerLane(WaveMmaShape shape, int k) {
  return shape == WaveMmaShape::kWmma16x16 ? k : k / (64 / WaveMmaTile(shape));
}

Stmt WaveMma::Make(Dtype dtype, WaveMmaShape shape, int k, Buffer a, Expr a_index, int64_t a_stride,
                   Buffer b, Expr b_index, int64_t b_stride, bool b_k_contiguous, Buffer acc,
                   int64_t acc_offset, int m_tiles, int n_tiles) {
  TUNE_CHECK(WaveMmaTakes(shape, dtype, k))
      << "WaveMma: " << WaveMmaShapeName(shape) << " has no instruction of k " << k << " for dtype "
      << DtypeName(dtype);
  TUNE_CHECK(a.defined() && b.defined() && acc.defined()) << "WaveMma: undefined buffer";
  TUNE_CHECK(a.scope() == MemoryScope::kGpuShared && b.scope() == MemoryScope::kGpuShared)
      << "WaveMma: A and B must be gpu_shared, got " << MemoryScopeName(a.scope()) << " and "
      << MemoryScopeName(b.scope());
  TUNE_CHECK(a.element_type() == Type::Of(ActivationType(dtype)) &&
             b.element_type() == Type::Of(WeightType(dtype)))
      << "WaveMma " << DtypeName(dtype) << ": A and B hold " << a.element_type().ToString()
      << " and " << b.element_type().ToString() << ", not the dtype's storage types";
  TUNE_CHECK(acc.scope() == MemoryScope::kGpuLocal &&
             acc.element_type() == Type::Of(AccumulatorType(dtype)))
      << "WaveMma: the accumulators must be gpu_local "
      << Type::Of(AccumulatorType(dtype)).ToString();
  TUNE_CHECK(a_index.defined() && a_index.type().is_int() && a_index.type().is_scalar() &&
             b_index.defined() && b_index.type().is_int() && b_index.type().is_scalar())
      << "WaveMma: indexes must be scalar integers";
  const int64_t tile = WaveMmaTile(shape);
  TUNE_CHECK(m_tiles >= 1 && n_tiles >= 1 && a_stride >= k && acc_offset >= 0 &&
             b_stride >= (b_k_contiguous ? k : tile * n_tiles))
      << "WaveMma: tiles " << m_tiles << "x" << n_tiles << ", strides " << a_stride << "/"
      << b_stride << " or accumulator offset " << acc_offset << " out of range";
  auto node = std::make_shared<WaveMma>();
  node->dtype = dtype;
  node->shape = shape;
  node->k = k;
  node->a = std::move(a);
  node->b = std::move(b);
  node->acc = std::move(acc);
  node->a_index = std::move(a_index);
  node->b_index = std::move(b_index);
  node->a_stride = a_stride;
  node->b_stride = b_stride;
  node->b_k_contiguous = b_k_contiguous;
  node->m_tiles = m_tiles;
  node->n_tiles = n_tiles;
  node->acc_offset = acc_offset;
  return WrapStmt(std::move(node));
}

bool WarpGroupMmaTakesN(Dtype dtype, int n) {
  if (WarpMmaK(dtype) == 0 || n < 8 || n > 256 || n % 8 != 0) {
    return false;
  }
  const bool integer = dtype == Dtype::kI8 || dtype == Dtype::kU8I8;
  return !integer || n <= 32 || n % 16 == 0;
}

Stmt WarpGroupMma::Make(Dtype dtype, Buffer a, Expr a_index, Buffer b, Expr b_index, int n,
                        int k_steps, Buffer acc, int64_t acc_offset, int pending,
                        int64_t b_mn_atom_stride, bool overwrite) {
  TUNE_CHECK(WarpMmaK(dtype) > 0) << "WarpGroupMma: no tensor-core instruction for dtype "
                                  << DtypeName(dtype);
  TUNE_CHECK(WarpGroupMmaTakesN(dtype, n))
      << "WarpGroupMma " << DtypeName(dtype) << ": no m64n" << n << " shape";
  TUNE_CHECK(a.defined() && b.defined() && acc.defined()) << "WarpGroupMma: undefined buffer";
  TUNE_CHECK(a.scope() == MemoryScope::kGpuShared && b.scope() == MemoryScope::kGpuShared)
      << "WarpGroupMma: A and B must be gpu_shared, got " << MemoryScopeName(a.scope()) << " and "
      << MemoryScopeName(b.scope());
  TUNE_CHECK(a.element_type() == Type::Of(ActivationType(dtype)) &&
             b.element_type() == Type::Of(WeightType(dtype)))
      << "WarpGroupMma " << DtypeName(dtype) << ": A and B hold " << a.element_type().ToString()
      << " and " << b.element_type().ToString() << ", not the dtype's storage types";
  TUNE_CHECK(acc.scope() == MemoryScope::kGpuLocal &&
             acc.element_type() == Type::Of(AccumulatorType(dtype)))
      << "WarpGroupMma: the accumulators must be gpu_local "
      << Type::Of(AccumulatorType(dtype)).ToString();
  TUNE_CHECK(a_index.defined() && a_index.type().is_int() && a_index.type().is_scalar() &&
             b_index.defined() && b_index.type().is_int() && b_index.type().is_scalar())
      << "WarpGroupMma: indexes must be scalar integers";
  TUNE_CHECK(k_steps >= 1 && k_steps <= 4 && pending >= 0 && pending <= 7 && acc_offset >= 0)
      << "WarpGroupMma: k_steps " << k_steps << ", pending " << pending << " or accumulator offset "
      << acc_offset << " out of range";
  TUNE_CHECK(b_mn_atom_stride == 0 || (ElementBytes(WeightType(dtype)) == 2 && n % 64 == 0 &&
                                       b_mn_atom_stride > 0 && b_mn_atom_stride % 1024 == 0))
      << "WarpGroupMma " << DtypeName(dtype) << ": B stored N-major needs a 16-bit dtype, n a "
      << "multiple of 64 and an atom stride a positive multiple of 1024, got n " << n << ", stride "
      << b_mn_atom_stride;
  auto node = std::make_shared<WarpGroupMma>();
  node->dtype = dtype;
  node->b_mn_atom_stride = b_mn_atom_stride;
  node->overwrite = overwrite;
  node->a = std::move(a);
  node->b = std::move(b);
  node->acc = std::move(acc);
  node->a_index = std::move(a_index);
  node->b_index = std::move(b_index);
  node->n = n;
  node->k_steps = k_steps;
  node->pending = pending;
  node->acc_offset = acc_offset;
  return WrapStmt(std::move(node));
}

Stmt Barrier::Make() { return WrapStmt(std::make_shared<Barrier>()); }

Stmt Barrier::MakeCluster() {
  auto node = std::make_shared<Barrier>();
  node->cluster = true;
  return WrapStmt(std::move(node));
}

Stmt Barrier::MakeAfterAsyncCopies(bool commit, int wait_pending) {
  TUNE_CHECK(wait_pending >= -1) << "Barrier: wait_pending " << wait_pending << " < -1";
  auto node = std::make_shared<Barrier>();
  node->commit_async = commit;
  node->wait_async = wait_pending;
  return WrapStmt(std::move(node));
}

Stmt Barrier::MakeNamed(int id, int64_t threads) {
  TUNE_CHECK(id >= 1 && id <= 15)
      << "Barrier: a named barrier's id must be in [1, 15] (0 is the whole block's), not " << id;
  TUNE_CHECK(threads > 0 && threads % 32 == 0)
      << "Barrier: a named barrier's threads must be a positive multiple of 32 (whole warps), not "
      << threads;
  auto node = std::make_shared<Barrier>();
  node->id = id;
  node->threads = threads;
  return WrapStmt(std::move(node));
}

Stmt FetchAdd::Make(Buffer buffer, Expr index, Expr value, Buffer result, Expr result_index) {
  TUNE_CHECK(buffer.defined() && buffer.scope() == MemoryScope::kGlobal &&
             buffer.element_type() == Type::Int32())
      << "FetchAdd: the counter must be a global int32 buffer";
  TUNE_CHECK(
      result.defined() &&
      (result.scope() == MemoryScope::kGpuShared || result.scope() == MemoryScope::kGpuLocal) &&
      result.element_type() == Type::Int32())
      << "FetchAdd: the result must be a gpu_shared or gpu_local int32 buffer";
  for (const Expr* e : {&index, &result_index}) {
    TUNE_CHECK(e->defined() && e->type().is_int() && e->type().is_scalar())
        << "FetchAdd: indexes must be scalar integers";
  }
  TUNE_CHECK(value.defined() && value.type() == Type::Int32())
      << "FetchAdd: the value must be a scalar int32";
  auto node = std::make_shared<FetchAdd>();
  node->buffer = std::move(buffer);
  node->index = std::move(index);
  node->value = std::move(value);
  node->result = std::move(result);
  node->result_index = std::move(result_index);
  return WrapStmt(std::move(node));
}

}  // namespace tune::ir
