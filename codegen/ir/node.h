// The IR's node kinds, node bases and handles (Expr, Stmt, Var, Buffer), and the enums nodes
// carry (LoopKind, MemoryScope). Include codegen/ir/ir.h, which has the nodes themselves.
//
// Expressions and statements have kinds of their own (ExprKind, StmtKind): a switch over one
// of them lists every kind and has no `default:`, so a new node kind is a -Wswitch warning
// (an error in codegen/) at every switch that must handle it.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "codegen/ir/type.h"

namespace tune::ir {

enum class ExprKind : uint8_t {
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
  kReinterpret,
  kBroadcast,
  kRamp,
  kShuffle,
  kLoad,
  kFma,
  kDotAccumulate,
  kCallExtern,
  kAddressOf,
};

enum class StmtKind : uint8_t {
  kStore,
  kFor,
  kBlock,
  kIfThenElse,
  kLetStmt,
  kAllocate,
  kEvaluate,
  kBarrier,
  kWarpMma,
  kWarpGroupMma,
  kWaveMma,
  kTensorCopy,
  kMBarrierOp,
  kSetMaxRegisters,
  kFetchAdd,
  kAmxTileOp,
};

/// "IntImm", "Add", ... / "Store", "For", ... (the struct name).
std::string_view ExprKindName(ExprKind kind);
std::string_view StmtKindName(StmtKind kind);

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

/// What expression and statement nodes share: identity, and a handle made from a raw pointer
/// shares ownership with the handles already held.
struct Node : std::enable_shared_from_this<Node> {
  Node() = default;
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
};

struct ExprNode : Node {
  explicit ExprNode(ExprKind k) : kind(k) {}
  const ExprKind kind;
  Type type;
};

struct StmtNode : Node {
  explicit StmtNode(StmtKind k) : kind(k) {}
  const StmtKind kind;
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
  ExprKind kind() const { return node_->kind; }
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
  StmtKind kind() const { return node_->kind; }
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

}  // namespace tune::ir
