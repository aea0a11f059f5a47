#include "db/sqlite.h"

#include <sqlite3.h>

#include <cctype>
#include <filesystem>
#include <utility>

#include "common/files.h"
#include "common/status.h"
#include "common/strings.h"
#include "fmt/format.h"

namespace tune::sqlite {
namespace {

// Idle statements kept per connection; beyond this, released statements are finalized.
constexpr size_t kMaxIdleStatements = 128;

// `path` with the characters that a file: URI reserves percent-encoded.
std::string UriEscape(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

absl::StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
      return absl::StatusCode::kUnavailable;
    case SQLITE_READONLY:
    case SQLITE_MISMATCH:
      return absl::StatusCode::kFailedPrecondition;
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return absl::StatusCode::kAlreadyExists;
      }
      return absl::StatusCode::kFailedPrecondition;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    case SQLITE_FULL:
    case SQLITE_NOMEM:
    case SQLITE_TOOBIG:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_INTERRUPT:
    case SQLITE_ABORT:
      return absl::StatusCode::kAborted;
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return absl::StatusCode::kPermissionDenied;
    default:
      return absl::StatusCode::kInternal;
  }
}

// The first words of a statement, whitespace collapsed, to name it in error messages.
std::string Abbreviate(std::string_view sql) {
  std::string out;
  for (char c : sql) {
    bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (space && (out.empty() || out.back() == ' ')) {
      continue;
    }
    out += space ? ' ' : c;
    if (out.size() >= 72) {
      out += "...";
      break;
    }
  }
  while (!out.empty() && out.back() == ' ') {
    out.pop_back();
  }
  return out;
}

bool OnlyWhitespaceOrSemicolons(const char* text, const char* end) {
  for (; text < end && *text != '\0'; ++text) {
    if (!std::isspace(static_cast<unsigned char>(*text)) && *text != ';') {
      return false;
    }
  }
  return true;
}

}  // namespace

// --- Statement ------------------------------------------------------------------------------

Statement::Statement(Connection* connection, sqlite3_stmt* stmt, std::string sql)
    : connection_(connection), stmt_(stmt), sql_(std::move(sql)) {}

Statement::Statement(Statement&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      sql_(std::move(other.sql_)),
      stepped_(std::exchange(other.stepped_, false)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    Release();
    connection_ = std::exchange(other.connection_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    sql_ = std::move(other.sql_);
    stepped_ = std::exchange(other.stepped_, false);
  }
  return *this;
}

Statement::~Statement() { Release(); }

void Statement::Release() {
  if (stmt_ != nullptr) {
    connection_->ReturnToCache(std::move(sql_), stmt_);
  }
  stmt_ = nullptr;
  connection_ = nullptr;
}

Statement& Statement::Bind(int index, int64_t value) {
  int rc = sqlite3_bind_int64(Rewound(), index, value);
  TUNE_CHECK(rc == SQLITE_OK) << "bind " << index << " of '" << sql_ << "': " << sqlite3_errstr(rc);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  int rc = sqlite3_bind_double(Rewound(), index, value);
  TUNE_CHECK(rc == SQLITE_OK) << "bind " << index << " of '" << sql_ << "': " << sqlite3_errstr(rc);
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  int rc = sqlite3_bind_text64(Rewound(), index, value.data(), value.size(), SQLITE_TRANSIENT,
                               SQLITE_UTF8);
  TUNE_CHECK(rc == SQLITE_OK) << "bind " << index << " of '" << sql_ << "': " << sqlite3_errstr(rc);
  return *this;
}

Statement& Statement::BindNull(int index) {
  int rc = sqlite3_bind_null(Rewound(), index);
  TUNE_CHECK(rc == SQLITE_OK) << "bind " << index << " of '" << sql_ << "': " << sqlite3_errstr(rc);
  return *this;
}

sqlite3_stmt* Statement::Rewound() {
  if (stepped_) {
    Reset();
  }
  return stmt_;
}

absl::StatusOr<bool> Statement::Step() {
  stepped_ = true;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    return true;
  }
  if (rc == SQLITE_DONE) {
    return false;
  }
  absl::Status status = connection_->Error(rc, Abbreviate(sql_));
  sqlite3_reset(stmt_);
  return status;
}

absl::Status Statement::Run() {
  while (true) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) {
      break;
    }
  }
  Reset();
  return absl::OkStatus();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  stepped_ = false;
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::ColumnInt64(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::ColumnDouble(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) {
    return "";
  }
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<int64_t> Statement::ColumnOptionalInt64(int column) const {
  if (IsNull(column)) {
    return std::nullopt;
  }
  return ColumnInt64(column);
}

std::optional<double> Statement::ColumnOptionalDouble(int column) const {
  if (IsNull(column)) {
    return std::nullopt;
  }
  return ColumnDouble(column);
}

// --- Connection -----------------------------------------------------------------------------

Connection::Connection(sqlite3* db, std::string path, Access access)
    : db_(db), path_(std::move(path)), access_(access) {}

Connection::~Connection() {
  for (auto& [sql, stmt] : idle_) {
    sqlite3_finalize(stmt);
  }
  sqlite3_close_v2(db_);
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const std::string& path,
                                                             Access access) {
  if (path.empty()) {
    return absl::InvalidArgumentError("database path is empty");
  }
  if (access == Access::kReadOnly) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      return absl::NotFoundError(StrCat(path, ": no such database file"));
    }
  }
  int flags = SQLITE_OPEN_NOMUTEX |
              (access == Access::kReadOnly ? SQLITE_OPEN_READONLY
                                           : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  // On a read-only file system a WAL database cannot get its shared-memory file: nothing can
  // change the file there, so it is opened as immutable (no locks, no -shm).
  std::string name = path;
  if (access == Access::kReadOnly && OnReadOnlyFileSystem(path)) {
    flags |= SQLITE_OPEN_URI;
    name = StrCat("file:", UriEscape(path), "?immutable=1");
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return absl::Status(CodeFor(rc), StrCat(path, ": cannot open database: ", message));
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<Connection>(new Connection(db, path, access));
}

absl::Status Connection::Error(int rc, std::string_view context) const {
  const char* message = sqlite3_errmsg(db_);
  if (message == nullptr || sqlite3_extended_errcode(db_) != rc) {
    message = sqlite3_errstr(rc);
  }
  return absl::Status(CodeFor(rc), StrCat(path_, ": ", context, ": ", message));
}

absl::Status Connection::Execute(std::string_view sql) {
  std::string text(sql);
  char* message = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) {
    return absl::OkStatus();
  }
  std::string detail = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  return absl::Status(CodeFor(rc), StrCat(path_, ": ", Abbreviate(sql), ": ", detail));
}

absl::StatusOr<Statement> Connection::Prepare(std::string_view sql) {
  std::string key(sql);
  if (auto it = idle_.find(key); it != idle_.end()) {
    sqlite3_stmt* stmt = it->second;
    idle_.erase(it);
    return Statement(this, stmt, std::move(key));
  }
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db_, key.data(), static_cast<int>(key.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, &tail);
  if (rc != SQLITE_OK) {
    return Error(rc, StrCat("prepare '", Abbreviate(sql), "'"));
  }
  if (stmt == nullptr) {
    return absl::InternalError(StrCat(path_, ": prepare: no statement in '", sql, "'"));
  }
  if (!OnlyWhitespaceOrSemicolons(tail, key.data() + key.size())) {
    sqlite3_finalize(stmt);
    return absl::InternalError(
        StrCat(path_, ": prepare takes one statement; found more in '", Abbreviate(sql), "'"));
  }
  return Statement(this, stmt, std::move(key));
}

void Connection::ReturnToCache(std::string sql, sqlite3_stmt* stmt) {
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  if (idle_.size() >= kMaxIdleStatements) {
    sqlite3_finalize(stmt);
    return;
  }
  idle_.emplace(std::move(sql), stmt);
}

int64_t Connection::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int64_t Connection::Changes() const { return sqlite3_changes64(db_); }

bool Connection::InAutocommit() const { return sqlite3_get_autocommit(db_) != 0; }

// --- Transaction ----------------------------------------------------------------------------

absl::StatusOr<Transaction> Transaction::Begin(Connection& connection, Kind kind) {
  switch (kind) {
    case Kind::kDeferred:
      RETURN_IF_ERROR(connection.Execute("BEGIN DEFERRED"));
      break;
    case Kind::kImmediate:
      RETURN_IF_ERROR(connection.Execute("BEGIN IMMEDIATE"));
      break;
  }
  return Transaction(&connection);
}

Transaction::Transaction(Transaction&& other) noexcept
    : connection_(std::exchange(other.connection_, nullptr)) {}

Transaction::~Transaction() {
  if (connection_ != nullptr && !connection_->InAutocommit()) {
    (void)connection_->Execute("ROLLBACK");
  }
}

absl::Status Transaction::Commit() {
  TUNE_CHECK(connection_ != nullptr) << "Commit() on a finished transaction";
  Connection* connection = std::exchange(connection_, nullptr);
  absl::Status status = connection->Execute("COMMIT");
  if (!status.ok() && !connection->InAutocommit()) {
    (void)connection->Execute("ROLLBACK");
  }
  return status;
}

}  // namespace tune::sqlite
