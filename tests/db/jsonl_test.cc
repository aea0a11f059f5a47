// Export / import as JSON lines: exact round trips, merging without duplicates, and
// all-or-nothing rejection of malformed input.
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "db/record_json.h"
#include "db/tuning_log.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/db/test_util.h"

namespace tune {
namespace {

using testing::FailedRecord;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::OpenLog;
using testing::SampleRecord;
using ::testing::StartsWith;
using tune::TempDir;

std::string Export(TuningLog& log, const RecordFilter& filter = {}) {
  std::ostringstream out;
  absl::Status status = log.ExportJsonl(out, filter);
  EXPECT_TRUE(status.ok()) << status;
  return out.str();
}

absl::StatusOr<TuningLog::ImportStats> Import(TuningLog& log, const std::string& text) {
  std::istringstream in(text);
  return log.ImportJsonl(in);
}

// A few records of every kind, with times that do not print exactly in few digits.
void Fill(TuningLog& log, int first, int count) {
  for (int i = first; i < first + count; ++i) {
    Record r = SampleRecord(fmt::format(R"({{"mc":{},"nc":{}}})", i, 2 * i), 1e-3 / (i + 3));
    r.measurement.round_secs.push_back(0.1 + 0.2 + i);
    r.measurement.message = i % 3 == 0 ? "" : "quote \" backslash \\ newline \n tab \t";
    ASSERT_TRUE(log.CommitRecord(r).ok());
  }
  ASSERT_TRUE(log.CommitRecord(FailedRecord(ErrorKind::kLoadError)).ok());
}

class JsonlTest : public ::testing::Test {
 protected:
  TempDir dir_ = TempDir::Create("tune-db-test-").value();
};

TEST_F(JsonlTest, LinesHaveFixedKeyOrderAndNoLocalIds) {
  auto log = OpenLog(dir_.File("a.db"));
  Record r = SampleRecord();
  r.uid = "u1";
  r.created_at_ms = 5;
  r.measurement.round_secs = {0.00101, 0.001, 0.00102};
  ASSERT_TRUE(log->CommitRecord(r).ok());
  EXPECT_EQ(Export(*log),
            R"({"uid":"u1","workload":"gemm:M=64,N=64,K=64","target":"llvm -mcpu=znver4 )"
            R"(-threads=1","device_key":"cpu/x86_64/znver4","template":"gemm.cpu.blocked",)"
            R"("template_version":1,"config":{"mc":32,"nc":64},"error":"NONE","message":"",)"
            R"("round_secs":[0.00101,0.001,0.00102],"number":25,)"
            R"("device_fingerprint":"AMD EPYC 9654 96-Core; 1 thread","tune_version":"0.1.0",)"
            R"("llvm_version":"19.1.7","worker":"worker-a","created_at_ms":5})"
            "\n");
}

TEST_F(JsonlTest, ExportImportExportIsByteIdenticalAndTimesRoundTripExactly) {
  auto a = OpenLog(dir_.File("a.db"));
  Fill(*a, 0, 20);
  std::string first = Export(*a);

  auto b = OpenLog(dir_.File("b.db"));
  absl::StatusOr<TuningLog::ImportStats> stats = Import(*b, first);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->imported, 21);
  EXPECT_EQ(stats->skipped_duplicates, 0);
  EXPECT_EQ(Export(*b), first);

  std::vector<Record> from_a = *a->ListRecords(), from_b = *b->ListRecords();
  ASSERT_EQ(from_a.size(), from_b.size());
  for (size_t i = 0; i < from_a.size(); ++i) {
    EXPECT_EQ(from_a[i].measurement.round_secs, from_b[i].measurement.round_secs);  // bitwise
    EXPECT_EQ(from_a[i].measurement.message, from_b[i].measurement.message);
    EXPECT_FALSE(from_b[i].job_id.has_value());
  }
  EXPECT_EQ((*b->QueryBest({.workload = testing::kGemm, .device_key = testing::kDevice}))->uid,
            (*a->QueryBest({.workload = testing::kGemm, .device_key = testing::kDevice}))->uid);
}

TEST_F(JsonlTest, TimingRoundTripsAndALineWithoutItImportsAsWarmCache) {
  Record cold = SampleRecord(R"({"mc":1})", 1e-3);
  cold.timing = TimingOptions{.repeat = 7, .flush_cache = true, .seed = 9};
  auto log = OpenLog(dir_.File("tuning.db"));
  ASSERT_TRUE(log->CommitRecord(cold).ok());
  std::string text = Export(*log);
  EXPECT_THAT(text, HasSubstr(R"("timing":{"number":1,"repeat":7,)"));
  EXPECT_THAT(text, HasSubstr(R"("flush_cache":true,"seed":9,"max_repeat":10,"target_ci":0.02})"));

  auto other = OpenLog(dir_.File("other.db"));
  ASSERT_TRUE(Import(*other, text).ok());
  // A line written before records kept their timing: no "timing" key at all.
  Record old = SampleRecord(R"({"mc":2})", 2e-3);
  old.uid = "from-an-old-export";
  ASSERT_FALSE(old.timing.has_value());
  std::string old_line = RecordToJsonLine(old);
  ASSERT_THAT(old_line, ::testing::Not(HasSubstr("timing")));
  ASSERT_TRUE(Import(*other, old_line + "\n").ok());

  std::vector<Record> records = *other->ListRecords();
  ASSERT_EQ(records.size(), 2u);
  ASSERT_TRUE(records[0].timing.has_value());
  EXPECT_EQ(records[0].timing->repeat, 7);
  EXPECT_TRUE(records[0].timing->flush_cache);
  EXPECT_FALSE(records[1].timing.has_value());
  EXPECT_EQ((*other->QueryBest({.workload = testing::kGemm, .target = testing::kTarget}))->uid,
            "from-an-old-export");
  EXPECT_EQ((*other->QueryBest(
                 {.workload = testing::kGemm, .target = testing::kTarget, .flush_cache = true}))
                ->uid,
            records[0].uid);
}

TEST_F(JsonlTest, LibraryInfoRoundTripsAndOnlyLibraryKernelsCarryTheKey) {
  Record library = SampleRecord(R"({"mc":1})", 1e-3);
  library.measurement.library_info = "openblas: OpenBLAS 0.3.21; core=Haswell; threads=1";
  Record generated = SampleRecord(R"({"mc":2})", 2e-3);
  auto log = OpenLog(dir_.File("tuning.db"));
  ASSERT_TRUE(log->CommitRecord(library).ok());
  ASSERT_TRUE(log->CommitRecord(generated).ok());
  std::string text = Export(*log);
  EXPECT_THAT(text, HasSubstr(R"("library_info":"openblas: OpenBLAS 0.3.21; core=Haswell)"));
  EXPECT_EQ(text.find("library_info"), text.rfind("library_info")) << "one line has the key";

  auto other = OpenLog(dir_.File("other.db"));
  ASSERT_TRUE(Import(*other, text).ok());
  std::vector<Record> records = *other->ListRecords();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].measurement.library_info, library.measurement.library_info);
  EXPECT_EQ(records[1].measurement.library_info, "");
  EXPECT_EQ(Export(*other), text);
}

TEST_F(JsonlTest, AFinalistsReMeasurementRoundTripsAndOnlyItCarriesTheKey) {
  Record search = SampleRecord(R"({"mc":1})", 1e-3);
  Record final = SampleRecord(R"({"mc":1})", 1.1e-3);
  final.final = true;
  auto log = OpenLog(dir_.File("tuning.db"));
  ASSERT_TRUE(log->CommitRecord(search).ok());
  ASSERT_TRUE(log->CommitRecord(final).ok());
  std::string text = Export(*log);
  EXPECT_THAT(text, HasSubstr(R"("final":true)"));
  EXPECT_EQ(text.find("\"final\""), text.rfind("\"final\"")) << "one line has the key";

  auto other = OpenLog(dir_.File("other.db"));
  ASSERT_TRUE(Import(*other, text).ok());
  std::vector<Record> records = *other->ListRecords();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_FALSE(records[0].final);
  EXPECT_TRUE(records[1].final);
  EXPECT_EQ(Export(*other), text);
}

TEST_F(JsonlTest, GpuClocksAndTheCallByCallReadingRoundTripAndCpuLinesCarryNeither) {
  Record graph = testing::GpuRecord(R"({"mc":1})", 1.1e-5, GpuClock::kGraph);
  graph.measurement.host_round_secs = {0.1 + 0.2, 1.7e-5, 1.75e-5};  // not exact in few digits
  Record events = testing::GpuRecord(R"({"mc":2})", 2e-5, GpuClock::kEvents);
  events.measurement.library_info =
      "timing: events, graph capture refused: cuStreamEndCapture: "
      "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
  auto log = OpenLog(dir_.File("tuning.db"));
  ASSERT_TRUE(log->CommitRecord(graph).ok());
  ASSERT_TRUE(log->CommitRecord(events).ok());
  ASSERT_TRUE(log->CommitRecord(SampleRecord(R"({"mc":3})", 1e-3)).ok());
  std::string text = Export(*log);
  EXPECT_THAT(text, HasSubstr(R"("gpu_clock":"graph","host_round_secs":[0.30000000000000004,)"));
  EXPECT_THAT(text, HasSubstr(R"("gpu_clock":"events")"));
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[2], Not(HasSubstr("gpu_clock")));
  EXPECT_THAT(lines[2], Not(HasSubstr("host_round_secs")));

  auto other = OpenLog(dir_.File("other.db"));
  ASSERT_TRUE(Import(*other, text).ok());
  std::vector<Record> records = *other->ListRecords();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].measurement.gpu_clock, GpuClock::kGraph);
  EXPECT_EQ(records[0].measurement.host_round_secs, graph.measurement.host_round_secs);
  EXPECT_EQ(records[1].measurement.gpu_clock, GpuClock::kEvents);
  EXPECT_EQ(records[2].measurement.gpu_clock, GpuClock::kNone);
  EXPECT_TRUE(records[2].measurement.host_round_secs.empty());
  EXPECT_EQ(Export(*other), text);
}

TEST_F(JsonlTest, AGpuLineWithoutAClockWasTimedCallByCallAndABadClockIsRefused) {
  // A line exported before GPU records said how they were timed.
  Record old = testing::GpuRecord(R"({"mc":1})", 2e-5, GpuClock::kNone);
  old.measurement.host_round_secs.clear();
  old.uid = "old-gpu-line";
  std::string line = RecordToJsonLine(old);
  ASSERT_THAT(line, Not(HasSubstr("gpu_clock")));
  auto log = OpenLog(dir_.File("tuning.db"));
  ASSERT_TRUE(Import(*log, line + "\n").ok());
  std::vector<Record> records = *log->ListRecords();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].measurement.gpu_clock, GpuClock::kEvents);

  std::string bad = line;
  bad.insert(bad.size() - 1, R"(,"gpu_clock":"cycles")");
  absl::StatusOr<Record> parsed = RecordFromJsonLine(bad);
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(
      std::string(parsed.status().message()),
      HasSubstr(R"(key "gpu_clock": 'cycles' is not a GPU clock; accepted: graph, events)"));
  // A CPU record has no GPU clock.
  Record cpu = SampleRecord(R"({"mc":4})", 1e-3);
  cpu.measurement.gpu_clock = GpuClock::kGraph;
  absl::StatusOr<Record> committed = log->CommitRecord(cpu);
  ASSERT_FALSE(committed.ok());
  EXPECT_THAT(std::string(committed.status().message()), HasSubstr("measurement.gpu_clock"));
}

TEST_F(JsonlTest, ImportingTheSameFileTwiceAddsNothingTheSecondTime) {
  auto a = OpenLog(dir_.File("a.db"));
  Fill(*a, 0, 5);
  std::string text = Export(*a);
  auto b = OpenLog(dir_.File("b.db"));
  ASSERT_EQ(Import(*b, text)->imported, 6);
  absl::StatusOr<TuningLog::ImportStats> again = Import(*b, text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->imported, 0);
  EXPECT_EQ(again->skipped_duplicates, 6);
  EXPECT_EQ(*b->CountRecords(), 6);
  // Importing a log into itself is the same no-op.
  EXPECT_EQ(Import(*a, text)->imported, 0);
}

TEST_F(JsonlTest, MergingOverlappingLogsKeepsEachRecordOnce) {
  auto a = OpenLog(dir_.File("a.db"));
  Fill(*a, 0, 6);
  auto b = OpenLog(dir_.File("b.db"));
  ASSERT_TRUE(Import(*b, Export(*a)).ok());
  Fill(*b, 100, 4);  // b now has a's 7 records and 5 of its own
  Fill(*a, 200, 2);  // a has 3 more of its own

  auto merged = OpenLog(dir_.File("merged.db"));
  absl::StatusOr<TuningLog::ImportStats> from_a = Import(*merged, Export(*a));
  absl::StatusOr<TuningLog::ImportStats> from_b = Import(*merged, Export(*b));
  ASSERT_TRUE(from_a.ok() && from_b.ok());
  EXPECT_EQ(from_a->imported, 10);
  EXPECT_EQ(from_b->imported, 5);
  EXPECT_EQ(from_b->skipped_duplicates, 7);
  EXPECT_EQ(*merged->CountRecords(), 15);

  // Merging in the other direction gives the same set of uids.
  ASSERT_TRUE(Import(*a, Export(*b)).ok());
  std::vector<std::string> uids_a, uids_merged;
  std::vector<Record> records_a = *a->ListRecords(), records_merged = *merged->ListRecords();
  for (const Record& r : records_a) {
    uids_a.push_back(r.uid);
  }
  for (const Record& r : records_merged) {
    uids_merged.push_back(r.uid);
  }
  EXPECT_THAT(uids_a, ::testing::UnorderedElementsAreArray(uids_merged));
}

TEST_F(JsonlTest, AMalformedLineRejectsTheWholeImportAndNamesTheLine) {
  auto a = OpenLog(dir_.File("a.db"));
  Fill(*a, 0, 3);
  std::string good = Export(*a);  // 4 lines
  auto b = OpenLog(dir_.File("b.db"));
  Fill(*b, 50, 1);
  std::string before = Export(*b);

  struct Case {
    std::string line;
    std::string problem;
  };
  std::string valid_line = good.substr(0, good.find('\n'));
  std::string other_uid = valid_line;
  other_uid.replace(other_uid.find(R"("uid":")") + 7, 32, std::string(32, 'f'));
  std::vector<Case> cases = {
      {"{not json", "not valid JSON"},
      {"[1,2]", "not a JSON object"},
      {R"({"uid":"x"})", "is missing"},
      {other_uid.substr(0, other_uid.size() - 1) + R"(,"extra":1})", "\"extra\": is unknown"},
      {std::string(other_uid).replace(other_uid.find("\"number\":25"), 11, "\"number\":\"25\""),
       "\"number\": is not an integer"},
      {std::string(other_uid).replace(other_uid.find("gemm:M=64"), 9, "gemm:M=-4"),
       "record.workload"},
      {std::string(other_uid).replace(other_uid.find("\"NONE\""), 6, "\"FAST\""),
       "'FAST' is not an error kind"},
  };
  for (const Case& c : cases) {
    // Valid lines, a blank line, then the bad one on line 4, then more valid lines.
    std::string text = good.substr(0, good.find('\n', good.find('\n') + 1) + 1) + "\n" + c.line +
                       "\n" + good.substr(good.find('\n') + 1);
    absl::StatusOr<TuningLog::ImportStats> stats = Import(*b, text);
    EXPECT_EQ(stats.status().code(), absl::StatusCode::kInvalidArgument) << c.line;
    EXPECT_THAT(std::string(stats.status().message()), StartsWith("line 4: ")) << c.line;
    EXPECT_THAT(std::string(stats.status().message()), HasSubstr(c.problem)) << c.line;
    EXPECT_EQ(Export(*b), before) << c.line;
  }
}

TEST_F(JsonlTest, ReadOnlyLogCanExportButNotImport) {
  std::string path = dir_.File("a.db");
  std::string text;
  {
    auto a = OpenLog(path);
    Fill(*a, 0, 2);
    text = Export(*a);
  }
  absl::StatusOr<std::unique_ptr<TuningLog>> ro = TuningLog::Open(path, TuningLog::Mode::kReadOnly);
  ASSERT_TRUE(ro.ok()) << ro.status();
  EXPECT_EQ(Export(**ro), text);
  EXPECT_EQ(Import(**ro, text).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tune
