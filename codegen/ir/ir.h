// The loop-nest IR: immutable nodes held by shared handles (Expr, Stmt), in the style of Halide.
//
// Every node is a `final` struct with `static constexpr NodeKind kKind` and a validating
// `static Make(...)` that aborts (TUNE_CHECK) when its invariants do not hold: building bad IR
// is a bug in the code that builds it. Deeper properties (variables in scope, nested parallel
// loops, barriers outside GPU loops, ...) are checked by Verify() in codegen/ir/verifier.h.
//
// Semantics worth knowing:
//   - Integer arithmetic is signed; Div and Mod on integers are floor division and floor modulo
//     (the remainder has the sign of the divisor). Division by zero is undefined.
//   - Index expressions are int64. `Var x("x")` is an int64 variable and integer literals in
//     expressions are int64 immediates.
//   - Select evaluates both of its values; do not use it to guard an out-of-bounds load.
//   - Variables and buffers are identified by their node (pointer identity), not by name; two
//     `Var x("x")` are two different variables that print alike.
//   - A vector Load/Store takes a vector index (lanes = index lanes); a Ramp index of stride 1
//     is a dense vector access, any other vector index a gather/scatter.
//
// Binary Make()s and the operators coerce their operands before validating: an immediate takes
// the element type of the other operand (`x * 2` with float32 x makes 2 a float32), and a
// scalar operand is broadcast to the lanes of a vector operand. Anything else that mismatches
// aborts.
//
// Companion headers: codegen/ir/visitor.h (IrVisitor, IrMutator), codegen/ir/substitute.h
// (Substitute), codegen/ir/printer.h (ToText), codegen/ir/verifier.h (Verify).
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ir/type.h"

namespace tune::ir {

enum class NodeKind : uint8_t {
  // Expressions.
  kIntImm,
  kFloatImm,
  kVar,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kMin,
  kMax,
  kEQ,
  kNE,
  kLT,
  kLE,
  kGT,
  kGE,
  kAnd,
  kOr,
  kNot,
  kSelect,
  kCast,
  kBroadcast,
  kRamp,
  kLoad,
  kFma,
  kCallExtern,
  kAddressOf,
  // Statements.
  kStore,
  kFor,
  kBlock,
  kIfThenElse,
  kLetStmt,
  kAllocate,
  kEvaluate,
  kBarrier,
};

/// "IntImm", "Add", "For", ... (the struct name).
std::string_view NodeKindName(NodeKind kind);
/// True for expression kinds, false for statement kinds.
bool IsExprKind(NodeKind kind);

enum class LoopKind : uint8_t {
  kSerial,
  kParallel,    // iterations are independent and may run on several threads
  kVectorized,  // constant extent; becomes vector operations (VectorizeLoops)
  kUnrolled,    // constant extent; becomes copies of the body (UnrollLoops)
  kGpuBlock,    // one iteration per GPU block along `thread_axis`
  kGpuThread,   // one iteration per GPU thread along `thread_axis`
};

/// "serial", "parallel", "vectorized", "unrolled", "gpu_block", "gpu_thread".
std::string_view LoopKindName(LoopKind kind);
bool IsGpuLoop(LoopKind kind);

enum class MemoryScope : uint8_t {
  kGlobal,     // function parameters (and global device memory)
  kStack,      // CPU local allocation
  kGpuShared,  // GPU block-shared memory
  kGpuLocal,   // GPU thread-private memory (registers / local)
};

/// "global", "stack", "gpu_shared", "gpu_local".
std::string_view MemoryScopeName(MemoryScope scope);

// ---------------------------------------------------------------------------------------------
// Node bases and handles.

struct Node : std::enable_shared_from_this<Node> {
  explicit Node(NodeKind k) : kind(k) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const NodeKind kind;
};

struct ExprNode : Node {
  explicit ExprNode(NodeKind k) : Node(k) {}
  Type type;
};

struct StmtNode : Node {
  explicit StmtNode(NodeKind k) : Node(k) {}
};

struct Variable;

/// A shared handle to an immutable expression node. Integer, bool and floating-point values
/// convert implicitly to immediates (int64, bool, float32).
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  /// Shares ownership of a node already held by a handle (e.g. `op` inside a visitor).
  explicit Expr(const ExprNode* node);
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Expr(T value);  // NOLINT(google-explicit-constructor): int64 immediate
  template <typename T>
    requires std::same_as<T, bool>
  Expr(T value);       // NOLINT(google-explicit-constructor): bool immediate
  Expr(float value);   // NOLINT(google-explicit-constructor): float32 immediate
  Expr(double value);  // NOLINT(google-explicit-constructor): float32 immediate

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const ExprNode>& node() const { return node_; }
  Type type() const { return node_->type; }
  NodeKind kind() const { return node_->kind; }
  /// The node as `T` when its kind is T::kKind, else nullptr.
  template <typename T>
  const T* As() const {
    return node_ != nullptr && node_->kind == T::kKind ? static_cast<const T*>(node_.get())
                                                       : nullptr;
  }
  /// Node identity (not structural equality).
  bool same_as(const Expr& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

/// A shared handle to an immutable statement node.
class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  /// Shares ownership of a node already held by a handle (e.g. `op` inside a visitor).
  explicit Stmt(const StmtNode* node);

  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const StmtNode>& node() const { return node_; }
  NodeKind kind() const { return node_->kind; }
  template <typename T>
  const T* As() const {
    return node_ != nullptr && node_->kind == T::kKind ? static_cast<const T*>(node_.get())
                                                       : nullptr;
  }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

/// A variable handle: `Var i("i")` makes a fresh int64 variable. Copies refer to the same
/// variable.
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, Type type = Type::Int64());
  /// Shares ownership of an existing variable node.
  explicit Var(const Variable* node);

  const Variable* get() const;
  const std::string& name() const;
};

/// A buffer: a named array of float32 elements in a memory scope. Function parameters are
/// global buffers; Allocate introduces the others. Identified by its node.
struct BufferNode {
  std::string name;
  Type element_type = Type::Float32();
  MemoryScope scope = MemoryScope::kGlobal;
};

class Buffer {
 public:
  Buffer() = default;
  /// A new buffer. `name` must be a non-empty identifier ([A-Za-z_][A-Za-z0-9_]*); the element
  /// type must be float32 (aborts otherwise).
  explicit Buffer(std::string name, MemoryScope scope = MemoryScope::kGlobal,
                  Type element_type = Type::Float32());

  bool defined() const { return node_ != nullptr; }
  const BufferNode* get() const { return node_.get(); }
  const std::string& name() const { return node_->name; }
  MemoryScope scope() const { return node_->scope; }
  Type element_type() const { return node_->element_type; }
  bool same_as(const Buffer& other) const { return node_ == other.node_; }

  /// `buf(i)`: a Load of element i (a vector load when i is a vector).
  Expr operator()(Expr index) const;

 private:
  std::shared_ptr<const BufferNode> node_;
};

// ---------------------------------------------------------------------------------------------
// Expression nodes.

struct IntImm final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kIntImm;
  IntImm() : ExprNode(kKind) {}
  int64_t value = 0;
  /// `type` is int64, int32 (value must fit) or bool (value 0 or 1), scalar.
  static Expr Make(int64_t value, Type type = Type::Int64());
};

struct FloatImm final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kFloatImm;
  FloatImm() : ExprNode(kKind) {}
  double value = 0;  // rounded to float32
  /// `type` must be scalar float32.
  static Expr Make(double value, Type type = Type::Float32());
};

struct Variable final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kVar;
  Variable() : ExprNode(kKind) {}
  std::string name;
  /// A fresh variable; `type` is a scalar int32/int64/float32/bool or a vector of them.
  static Var Make(std::string name, Type type = Type::Int64());
};

/// Common layout of the two-operand nodes: `a op b`.
struct BinaryExprNode : ExprNode {
  explicit BinaryExprNode(NodeKind k) : ExprNode(k) {}
  Expr a, b;
};

/// Arithmetic: operands of one int or float type; the result has that type.
struct Add final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kAdd;
  Add() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Sub final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kSub;
  Sub() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Mul final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kMul;
  Mul() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
/// Floor division for integers, IEEE division for floats.
struct Div final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kDiv;
  Div() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
/// Floor modulo for integers (result has the sign of b); integers only.
struct Mod final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kMod;
  Mod() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Min final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kMin;
  Min() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Max final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kMax;
  Max() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};

/// Comparisons: operands of one int or float type; the result is bool with their lanes.
struct EQ final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kEQ;
  EQ() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct NE final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kNE;
  NE() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct LT final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kLT;
  LT() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct LE final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kLE;
  LE() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct GT final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kGT;
  GT() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct GE final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kGE;
  GE() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};

/// Logic on bool operands (scalar or vector).
struct And final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kAnd;
  And() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Or final : BinaryExprNode {
  static constexpr NodeKind kKind = NodeKind::kOr;
  Or() : BinaryExprNode(kKind) {}
  static Expr Make(Expr a, Expr b);
};
struct Not final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kNot;
  Not() : ExprNode(kKind) {}
  Expr a;
  static Expr Make(Expr a);
};

/// `condition ? true_value : false_value`, lane-wise for vectors. Both values are evaluated.
/// The condition is bool, scalar or with the lanes of the values.
struct Select final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kSelect;
  Select() : ExprNode(kKind) {}
  Expr condition, true_value, false_value;
  static Expr Make(Expr condition, Expr true_value, Expr false_value);
};

/// Numeric conversion between int32/int64/float32/bool with equal lanes (float to int
/// truncates toward zero; x to bool is x != 0).
struct Cast final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kCast;
  Cast() : ExprNode(kKind) {}
  Expr value;
  static Expr Make(Type type, Expr value);
};

/// A vector of `lanes` copies of a scalar.
struct Broadcast final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kBroadcast;
  Broadcast() : ExprNode(kKind) {}
  Expr value;
  int lanes = 0;
  /// `value` scalar, lanes >= 2.
  static Expr Make(Expr value, int lanes);
};

/// The integer vector base + stride * [0, 1, ..., lanes-1].
struct Ramp final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kRamp;
  Ramp() : ExprNode(kKind) {}
  Expr base, stride;
  int lanes = 0;
  /// `base` and `stride` scalar integers of one type (coerced), lanes >= 2.
  static Expr Make(Expr base, Expr stride, int lanes);
};

/// buffer[index]: a scalar load for a scalar index, a vector load (lanes = index lanes) for a
/// vector index.
struct Load final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kLoad;
  Load() : ExprNode(kKind) {}
  Buffer buffer;
  Expr index;
  /// `index` an int32/int64 scalar or vector.
  static Expr Make(Buffer buffer, Expr index);
  /// A dense load of `lanes` elements starting at the scalar `base` (a scalar load when
  /// lanes == 1).
  static Expr Make(Buffer buffer, Expr base, int lanes);
};

/// Fused multiply-add a * b + c (one rounding), float32 scalar or vector, one type.
struct Fma final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kFma;
  Fma() : ExprNode(kKind) {}
  Expr a, b, c;
  static Expr Make(Expr a, Expr b, Expr c);
};

/// A call of the external C function `symbol` (declared from the argument types: int32 →
/// int32_t, int64 → int64_t, float32 → float, float32* → float*). The result type is a scalar
/// int32, int64 or float32; a `void` function is called as returning int32 and its value
/// ignored (wrap the call in Evaluate).
struct CallExtern final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kCallExtern;
  CallExtern() : ExprNode(kKind) {}
  std::string symbol;
  std::vector<Expr> args;
  /// `symbol` a C identifier; every arg a scalar int32/int64/float32/float32*.
  static Expr Make(Type type, std::string symbol, std::vector<Expr> args);
};

/// &buffer[index]: the float32* address of one element (to pass a buffer to CallExtern).
struct AddressOf final : ExprNode {
  static constexpr NodeKind kKind = NodeKind::kAddressOf;
  AddressOf() : ExprNode(kKind) {}
  Buffer buffer;
  Expr index;
  /// `index` a scalar integer.
  static Expr Make(Buffer buffer, Expr index);
};

// ---------------------------------------------------------------------------------------------
// Statement nodes.

/// buffer[index] = value. Vector value with a vector index of equal lanes, or a vector value
/// with a scalar index (made dense: Ramp(index, 1, lanes)).
///
/// With `atomic_add`, buffer[index] += value instead, as one relaxed atomic read-modify-write
/// per lane (the lanes are independent atomics, in no particular order). Only into global
/// float32 buffers: the blocks of a GPU kernel that splits a reduction across the grid add
/// their partial sums into an output the caller has zeroed (GpuLaunch::zeroed_args).
///
/// With `async_copy`, a GPU copy from global to shared memory that completes asynchronously:
/// `buffer` is gpu_shared, the index dense (scalar or Ramp of stride 1, 1, 2 or 4 lanes) and
/// the value `Load(src, i)` of a global buffer, or `Select(valid, Load(src, i), 0)` (zeros
/// without reading where `valid` is false; passes may reduce it to zeros alone, a plain store
/// in effect). The copied values may be read only after a
/// Barrier that waits for the copy's group (Barrier::MakeAfterAsyncCopies). NVPTX emits
/// cp.async; elsewhere (AMDGPU, the simulator) it is a plain store.
struct Store final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kStore;
  Store() : StmtNode(kKind) {}
  Buffer buffer;
  Expr index, value;
  bool atomic_add = false;
  bool async_copy = false;
  static Stmt Make(Buffer buffer, Expr index, Expr value);
  /// buffer[index] += value atomically; `buffer` global float32 (checked).
  static Stmt MakeAtomicAdd(Buffer buffer, Expr index, Expr value);
  /// An asynchronous copy of `lanes` (1, 2 or 4) consecutive elements src[src_index...] to
  /// dst[dst_index...], zeros where `valid` (a scalar bool; undefined: always) is false.
  static Stmt MakeAsyncCopy(Buffer dst, Expr dst_index, Buffer src, Expr src_index, int lanes,
                            Expr valid = Expr());
  /// A store of the same kind as `like` (plain, atomic add or async copy) with a new index and
  /// value: what passes use to rebuild a store.
  static Stmt MakeLike(const Store* like, Expr index, Expr value);
};

/// for var in [min, min + extent) with a loop kind. GPU kinds carry a thread axis 0..2 (x,y,z).
struct For final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kFor;
  For() : StmtNode(kKind) {}
  Var var;
  Expr min, extent;
  LoopKind loop_kind = LoopKind::kSerial;
  int thread_axis = 0;
  Stmt body;
  /// `var` a scalar int64 variable; min/extent scalar integers (coerced to int64); thread_axis
  /// in 0..2 and 0 for non-GPU kinds.
  static Stmt Make(Var var, Expr min, Expr extent, LoopKind kind, Stmt body, int thread_axis = 0);
};

/// Statements in order. Make flattens nested blocks and drops undefined statements.
struct Block final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kBlock;
  Block() : StmtNode(kKind) {}
  std::vector<Stmt> stmts;
  /// A block of zero statements is a no-op; a block of one statement is that statement.
  static Stmt Make(std::vector<Stmt> stmts);
};

struct IfThenElse final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kIfThenElse;
  IfThenElse() : StmtNode(kKind) {}
  Expr condition;
  Stmt then_case, else_case;  // else_case may be undefined
  /// `condition` a scalar bool.
  static Stmt Make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
};

/// Binds `var` to `value` within `body`.
struct LetStmt final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kLetStmt;
  LetStmt() : StmtNode(kKind) {}
  Var var;
  Expr value;
  Stmt body;
  /// `var` and `value` of one type.
  static Stmt Make(Var var, Expr value, Stmt body);
};

/// Allocates `size` elements of `buffer` (in its scope) for the duration of `body`. The
/// contents are undefined at the start.
struct Allocate final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kAllocate;
  Allocate() : StmtNode(kKind) {}
  Buffer buffer;
  int64_t size = 0;
  Stmt body;
  /// `buffer` not global; size >= 1.
  static Stmt Make(Buffer buffer, int64_t size, Stmt body);
};

/// Evaluates an expression for its side effect (a CallExtern). With `return_on_error`, the
/// value is an int32 status (0: success) and a non-zero one is returned by the kernel at once,
/// so that a library's failure reaches the caller (and the measurement) as the kernel's result.
struct Evaluate final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kEvaluate;
  Evaluate() : StmtNode(kKind) {}
  Expr value;
  bool return_on_error = false;
  /// With `return_on_error`, `value` is int32 (checked).
  static Stmt Make(Expr value, bool return_on_error = false);
};

/// Waits until every thread of the GPU block reaches it (and makes gpu_shared writes visible).
///
/// Before that, with `commit_async`, the thread closes the asynchronous copies it issued since
/// the last commit into one group; with `wait_async` >= 0 it waits until at most that many of
/// its most recent groups are still in flight (NVPTX cp.async.commit_group / wait_group). A
/// group's copies are visible to every thread after the first barrier that waits for it in
/// every thread.
struct Barrier final : StmtNode {
  static constexpr NodeKind kKind = NodeKind::kBarrier;
  Barrier() : StmtNode(kKind) {}
  bool commit_async = false;
  int wait_async = -1;
  static Stmt Make();
  /// `wait_pending` >= -1 (-1: no wait).
  static Stmt MakeAfterAsyncCopies(bool commit, int wait_pending);
};

// ---------------------------------------------------------------------------------------------
// A kernel entry point: C ABI `int32_t name(float* p0, float* p1, ...)` returning 0 on success.

struct LoweredFunc {
  std::string name;            // a C identifier
  std::vector<Buffer> params;  // global float32 buffers, in argument order
  Stmt body;
  // Libraries the body's CallExterns resolve against, by file name ("libfoo.so.1"): left
  // undefined at link time and loaded by whoever runs the kernel (a worker's --preload).
  std::vector<std::string> external_libs = {};
  // When defined (an int64 Var), the function takes one more parameter after the buffers: the
  // GPU stream of the host ABI of GPU library kernels, `int32_t f(float*..., void* stream)`. The
  // body sees the pointer as this integer (CallExtern passes it on as an int64, which the x86-64
  // calling convention passes like a void*).
  Var stream_param = {};
  // Elements of each buffer parameter, where the caller knows them (empty otherwise). Whoever
  // launches a kernel that accumulates into a parameter (codegen/ir/params.h) zeroes that many.
  std::vector<int64_t> param_elements = {};
};

// ---------------------------------------------------------------------------------------------
// Builders and operators.

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // floor division for integers
Expr operator%(Expr a, Expr b);  // floor modulo
Expr operator-(Expr a);          // 0 - a
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

/// The value of an integer expression made only of integer immediates and arithmetic
/// (+ - * / % min max), or nullopt. Used for loop extents and Allocate sizes.
std::optional<int64_t> AsConstInt(const Expr& e);
/// Floor division and floor modulo of integers (the IR's Div and Mod); b != 0.
int64_t FloorDiv(int64_t a, int64_t b);
int64_t FloorMod(int64_t a, int64_t b);
/// True when `e` is an IntImm/FloatImm (or a Broadcast of one) equal to `value`.
bool IsConst(const Expr& e, double value);

/// `lanes` == 1: `e` itself; otherwise `e` broadcast (e scalar) or `e` unchanged (e already has
/// `lanes` lanes).
Expr BroadcastTo(Expr e, int lanes);

/// Load(buffer, index, lanes), or zeros where `valid` (a scalar bool; undefined: always valid)
/// is false: Select(valid, Load, 0). `index` must stay in range either way.
Expr LoadOrZero(Buffer buffer, Expr index, int lanes, Expr valid);

}  // namespace tune::ir

// ---------------------------------------------------------------------------------------------
// Template definitions.

namespace tune::ir {

template <std::integral T>
  requires(!std::same_as<T, bool>)
Expr::Expr(T value) : Expr(IntImm::Make(static_cast<int64_t>(value))) {}

template <typename T>
  requires std::same_as<T, bool>
Expr::Expr(T value) : Expr(IntImm::Make(value ? 1 : 0, Type::Bool())) {}

}  // namespace tune::ir

// IR-API-READY
