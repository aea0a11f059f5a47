// A thin RAII wrapper over the SQLite C API: Connection, Statement (Bind / Step / Column) and
// Transaction. The only part of the repository that includes sqlite3.h (in sqlite.cc); every
// SQLite failure comes back as an absl::Status whose message names the database path.
//
// Not thread-safe: one Connection (and its statements) is used by one thread at a time. A
// Statement must not outlive the Connection that prepared it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tune::sqlite {

class Connection;

/// One prepared statement. Parameters are bound by 1-based index, columns read by 0-based
/// index (SQLite's conventions). Destroying it hands the compiled statement back to its
/// connection's cache, so preparing the same SQL again is cheap.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  /// Binds one parameter; binding after a step rewinds the statement first. A bad index is a
  /// bug (aborts).
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view value);
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& Bind(int index, const std::string& value) {
    return Bind(index, std::string_view(value));
  }
  Statement& BindNull(int index);
  template <typename T>
  Statement& Bind(int index, const std::optional<T>& value) {
    return value ? Bind(index, *value) : BindNull(index);
  }
  /// Binds every argument in order, starting at parameter 1.
  template <typename... Args>
  Statement& BindAll(const Args&... args) {
    int index = 0;
    (Bind(++index, args), ...);
    return *this;
  }

  /// Advances to the next row: true when a row is available, false when done. Errors (busy
  /// beyond the timeout, constraint violations, read-only database) are returned as a Status.
  absl::StatusOr<bool> Step();
  /// Steps until done, discarding rows, and rewinds the statement.
  absl::Status Run();
  /// Rewinds the statement so it can run again; bindings are kept.
  void Reset();

  bool IsNull(int column) const;
  int64_t ColumnInt64(int column) const;
  int ColumnInt(int column) const { return static_cast<int>(ColumnInt64(column)); }
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;
  std::optional<int64_t> ColumnOptionalInt64(int column) const;
  std::optional<double> ColumnOptionalDouble(int column) const;

  /// The SQL text this statement was prepared from.
  const std::string& sql() const { return sql_; }

 private:
  friend class Connection;
  Statement(Connection* connection, sqlite3_stmt* stmt, std::string sql);
  void Release();
  sqlite3_stmt* Rewound();  // the statement, reset when it has been stepped

  Connection* connection_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
  bool stepped_ = false;
};

class Connection {
 public:
  enum class Access { kReadWriteCreate, kReadOnly };

  /// Opens the database file at `path` (created when `access` is kReadWriteCreate and it does
  /// not exist). A missing file in kReadOnly is NotFound; other failures name the path.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const std::string& path, Access access);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Runs one or more `;`-separated statements that return no rows the caller needs.
  absl::Status Execute(std::string_view sql);
  /// Compiles exactly one statement. Syntax errors are Internal (they are bugs in the caller).
  absl::StatusOr<Statement> Prepare(std::string_view sql);

  /// Rowid of the last successful INSERT on this connection.
  int64_t LastInsertRowId() const;
  /// Rows changed by the last INSERT / UPDATE / DELETE.
  int64_t Changes() const;
  /// True outside an explicit transaction.
  bool InAutocommit() const;

  bool read_only() const { return access_ == Access::kReadOnly; }
  const std::string& path() const { return path_; }

  /// Maps an SQLite result code to a Status naming the path and `context` (the failed
  /// operation). Used by Statement; exposed for callers that talk to sqlite directly.
  absl::Status Error(int rc, std::string_view context) const;

 private:
  friend class Statement;
  Connection(sqlite3* db, std::string path, Access access);
  void ReturnToCache(std::string sql, sqlite3_stmt* stmt);

  sqlite3* db_ = nullptr;
  std::string path_;
  Access access_;
  // Idle compiled statements by SQL text; a statement in use is absent from the cache.
  std::unordered_multimap<std::string, sqlite3_stmt*> idle_;
};

/// An explicit transaction that rolls back on destruction unless Commit() succeeded.
class Transaction {
 public:
  enum class Kind {
    kDeferred,   // a read snapshot that may later write
    kImmediate,  // takes the write lock now (waits up to the busy timeout)
  };

  /// Begins a transaction; fails when one is already open on `connection` (a bug) or the
  /// write lock cannot be had within the busy timeout.
  static absl::StatusOr<Transaction> Begin(Connection& connection, Kind kind = Kind::kImmediate);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  ~Transaction();

  /// Commits; the transaction is over whatever the result (rolled back on failure).
  absl::Status Commit();

 private:
  explicit Transaction(Connection* connection) : connection_(connection) {}
  Connection* connection_ = nullptr;  // null once committed or rolled back
};

}  // namespace tune::sqlite
