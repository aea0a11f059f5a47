// The SQLite wrapper: binding and reading values, statement reuse, transactions and errors.
#include "db/sqlite.h"

#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/db/test_util.h"

namespace tune::sqlite {
namespace {

using ::testing::HasSubstr;
using tune::TempDir;

class SqliteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Connection>> db =
        Connection::Open(dir_.File("t.db"), Connection::Access::kReadWriteCreate);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
    ASSERT_TRUE(db_->Execute("CREATE TABLE t (i INTEGER, d REAL, s TEXT UNIQUE)").ok());
  }
  int64_t Count() {
    absl::StatusOr<Statement> stmt = db_->Prepare("SELECT COUNT(*) FROM t");
    EXPECT_TRUE(stmt.ok() && *stmt->Step());
    return stmt->ColumnInt64(0);
  }
  TempDir dir_ = TempDir::Create("tune-db-test-").value();
  std::unique_ptr<Connection> db_;
};

TEST_F(SqliteTest, BoundValuesReadBackExactlyIncludingNull) {
  absl::StatusOr<Statement> insert = db_->Prepare("INSERT INTO t (i, d, s) VALUES (?, ?, ?)");
  ASSERT_TRUE(insert.ok()) << insert.status();
  std::string text("nul\0inside", 10);
  insert->BindAll(std::numeric_limits<int64_t>::min(), 0.1 + 0.2, std::string_view(text));
  ASSERT_TRUE(insert->Run().ok());
  insert->BindAll(std::optional<int64_t>(), std::optional<double>(), "second");
  ASSERT_TRUE(insert->Run().ok());

  absl::StatusOr<Statement> select = db_->Prepare("SELECT i, d, s FROM t ORDER BY rowid");
  ASSERT_TRUE(select.ok());
  ASSERT_TRUE(*select->Step());
  EXPECT_EQ(select->ColumnInt64(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(select->ColumnDouble(1), 0.1 + 0.2);
  EXPECT_EQ(select->ColumnText(2), text);
  ASSERT_TRUE(*select->Step());
  EXPECT_FALSE(select->ColumnOptionalInt64(0).has_value());
  EXPECT_FALSE(select->ColumnOptionalDouble(1).has_value());
  EXPECT_FALSE(*select->Step());
}

TEST_F(SqliteTest, APreparedStatementIsReusedAndNestedUseGetsItsOwnCopy) {
  ASSERT_TRUE(db_->Execute("INSERT INTO t (i) VALUES (1); INSERT INTO t (i) VALUES (2)").ok());
  constexpr std::string_view kSql = "SELECT i FROM t WHERE i >= ? ORDER BY i";
  absl::StatusOr<Statement> outer = db_->Prepare(kSql);
  ASSERT_TRUE(outer.ok());
  outer->Bind(1, 1);
  ASSERT_TRUE(*outer->Step());
  {
    // The same SQL while the first statement is mid-iteration: an independent cursor.
    absl::StatusOr<Statement> inner = db_->Prepare(kSql);
    ASSERT_TRUE(inner.ok());
    inner->Bind(1, 2);
    ASSERT_TRUE(*inner->Step());
    EXPECT_EQ(inner->ColumnInt(0), 2);
  }
  EXPECT_EQ(outer->ColumnInt(0), 1);
  ASSERT_TRUE(*outer->Step());
  EXPECT_EQ(outer->ColumnInt(0), 2);
  *outer = db_->Prepare(kSql).value();   // released statements come back reset, unbound
  ASSERT_TRUE(*outer->Step() == false);  // ? is NULL: nothing is >= NULL
}

TEST_F(SqliteTest, PrepareRejectsMoreThanOneStatementAndBadSql) {
  EXPECT_EQ(db_->Prepare("SELECT 1; SELECT 2").status().code(), absl::StatusCode::kInternal);
  absl::StatusOr<Statement> bad = db_->Prepare("SELEC 1");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr(dir_.File("t.db")));
  EXPECT_TRUE(db_->Prepare("SELECT 1;  ").ok());
}

TEST_F(SqliteTest, ATransactionRollsBackUnlessCommitted) {
  {
    absl::StatusOr<Transaction> txn = Transaction::Begin(*db_);
    ASSERT_TRUE(txn.ok()) << txn.status();
    ASSERT_TRUE(db_->Execute("INSERT INTO t (i) VALUES (1)").ok());
    EXPECT_FALSE(db_->InAutocommit());
  }
  EXPECT_TRUE(db_->InAutocommit());
  EXPECT_EQ(Count(), 0);
  {
    absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Kind::kDeferred);
    ASSERT_TRUE(db_->Execute("INSERT INTO t (i) VALUES (1)").ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  EXPECT_EQ(Count(), 1);
}

TEST_F(SqliteTest, ErrorsMapToStatusCodesAndNameThePath) {
  ASSERT_TRUE(db_->Execute("INSERT INTO t (s) VALUES ('x')").ok());
  absl::StatusOr<Statement> dup = db_->Prepare("INSERT INTO t (s) VALUES ('x')");
  ASSERT_TRUE(dup.ok());
  absl::Status status = dup->Run();
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(status.message()), HasSubstr("UNIQUE"));
  EXPECT_THAT(std::string(status.message()), HasSubstr(dir_.File("t.db")));

  absl::StatusOr<std::unique_ptr<Connection>> ro =
      Connection::Open(dir_.File("t.db"), Connection::Access::kReadOnly);
  ASSERT_TRUE(ro.ok()) << ro.status();
  EXPECT_EQ((*ro)->Execute("INSERT INTO t (i) VALUES (3)").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      Connection::Open(dir_.File("missing.db"), Connection::Access::kReadOnly).status().code(),
      absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tune::sqlite
