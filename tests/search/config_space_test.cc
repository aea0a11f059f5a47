#include "search/config_space.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <set>
#include <string>

namespace tune {
namespace {

// mc in {16,32,64}, mr in {4,8}, nr in {8,16,32,48}: 24 points. "nr >= 2 * mr" prunes nr = 8
// with mr = 8; "mc * nr <= 2048" prunes nr = 48 with mc = 64. 19 points are valid.
ConfigSpace GemmLikeSpace() {
  ConfigSpace space;
  space.AddKnob("mc", {16, 32, 64}, "rows of A per block");
  space.AddKnob("mr", {4, 8}, "rows of the micro-kernel");
  space.AddKnob("nr", {8, 16, 32, 48}, "columns of the micro-kernel");
  space.AddConstraint("nr >= 2 * mr", [](const Config& c) { return c.at("nr") >= 2 * c.at("mr"); });
  space.AddConstraint("mc * nr <= 2048",
                      [](const Config& c) { return c.at("mc") * c.at("nr") <= 2048; });
  return space;
}

TEST(ConfigTextTest, PrintsSortedKeysWithoutSpaces) {
  Config config{{"nr", 16}, {"kc", 256}, {"mc", -64}};
  EXPECT_EQ(ConfigToString(config), R"({"kc":256,"mc":-64,"nr":16})");
  EXPECT_EQ(ConfigToString({}), "{}");
}

TEST(ConfigTextTest, ParsesAnyKeyOrderAndWhitespaceBackToTheSameConfig) {
  auto config = ParseConfig(" {\n \"nr\" : 16 ,\t\"kc\":256, \"mc\": -64 } ");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(*config, (Config{{"kc", 256}, {"mc", -64}, {"nr", 16}}));
  EXPECT_EQ(ConfigToString(*config), R"({"kc":256,"mc":-64,"nr":16})");
}

TEST(ConfigTextTest, RoundTripsExtremeValuesAndEscapedNames) {
  Config config{{"lo", std::numeric_limits<int64_t>::min()},
                {"hi", std::numeric_limits<int64_t>::max()},
                {"a\"b\\c\n", 0},
                {"", 1}};
  std::string text = ConfigToString(config);
  EXPECT_EQ(text, R"({"":1,"a\"b\\c\n":0,"hi":9223372036854775807,"lo":-9223372036854775808})");
  auto parsed = ParseConfig(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, config);
}

TEST(ConfigTextTest, RejectsNonIntegerValueNamingTheKeyAndTheAcceptedForm) {
  auto config = ParseConfig(R"({"a":1.5})");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      std::string(config.status().message()),
      R"(config '{"a":1.5}': value of 'a' is not an integer; accepted form: {"knob":<int>,...})");
}

TEST(ConfigTextTest, RejectsEverythingButAFlatObjectOfIntegers) {
  struct Case {
    const char* text;
    const char* problem;
  };
  const Case cases[] = {
      {"", "not valid JSON"},
      {R"({"a":1)", "not valid JSON"},
      {R"({"a":1} x)", "not valid JSON"},
      {R"({a:1})", "not valid JSON"},
      {"[1,2]", "it is an array, not an object"},
      {"5", "it is a number, not an object"},
      {"null", "it is null, not an object"},
      {R"("x")", "it is a string, not an object"},
      {R"({"a":"1"})", "value of 'a' is a string, not an integer"},
      {R"({"a":true})", "value of 'a' is a boolean, not an integer"},
      {R"({"a":null})", "value of 'a' is null, not an integer"},
      {R"({"a":[1]})", "value of 'a' is an array, not an integer"},
      {R"({"a":{"b":1}})", "value of 'a' is an object, not an integer"},
      {R"({"a":1e3})", "value of 'a' is not an integer"},
      {R"({"a":9223372036854775808})", "value of 'a' is out of the 64-bit integer range"},
      {R"({"a":-9223372036854775809})", "value of 'a' is out of the 64-bit integer range"},
      {R"({"a":1,"b":2,"a":3})", "key 'a' appears twice"},
  };
  for (const Case& c : cases) {
    auto config = ParseConfig(c.text);
    ASSERT_FALSE(config.ok()) << "accepted: " << c.text;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    std::string message(config.status().message());
    EXPECT_NE(message.find(c.problem), std::string::npos) << c.text << " -> " << message;
    EXPECT_NE(message.find("accepted form"), std::string::npos) << message;
  }
}

TEST(ConfigSpaceTest, ValidateNamesTheMissingKnob) {
  absl::Status s = GemmLikeSpace().Validate({{"mc", 16}, {"nr", 16}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()),
            R"(config '{"mc":16,"nr":16}': knob 'mr' is missing; accepted values: 4, 8)");
}

TEST(ConfigSpaceTest, ValidateNamesTheUnknownKnob) {
  absl::Status s = GemmLikeSpace().Validate({{"mc", 16}, {"mr", 4}, {"nr", 16}, {"kc", 1}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("unknown knob 'kc'; knobs of this space: mc, mr, nr"),
            std::string::npos)
      << s;
}

TEST(ConfigSpaceTest, ValidateNamesTheValueThatIsNotACandidate) {
  absl::Status s = GemmLikeSpace().Validate({{"mc", 48}, {"mr", 4}, {"nr", 16}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message())
                .find("value 48 of knob 'mc' is not a candidate; accepted values: 16, 32, 64"),
            std::string::npos)
      << s;
}

TEST(ConfigSpaceTest, ValidateNamesTheFailedConstraint) {
  ConfigSpace space = GemmLikeSpace();
  absl::Status s = space.Validate({{"mc", 16}, {"mr", 8}, {"nr", 8}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("constraint 'nr >= 2 * mr' does not hold"),
            std::string::npos)
      << s;
  s = space.Validate({{"mc", 64}, {"mr", 4}, {"nr", 48}});
  EXPECT_NE(std::string(s.message()).find("constraint 'mc * nr <= 2048' does not hold"),
            std::string::npos)
      << s;
  EXPECT_TRUE(space.Validate({{"mc", 64}, {"mr", 8}, {"nr", 32}}).ok());
  EXPECT_TRUE(space.IsValid({{"mc", 16}, {"mr", 4}, {"nr", 8}}));
}

TEST(ConfigSpaceDeathTest, DuplicateKnobNamesAndEmptyCandidatesAreBugs) {
  EXPECT_DEATH(
      {
        ConfigSpace space;
        space.AddKnob("mc", {1});
        space.AddKnob("mc", {2});
      },
      "added twice");
  EXPECT_DEATH(
      {
        ConfigSpace space;
        space.AddKnob("mc", {});
      },
      "no candidate values");
  EXPECT_DEATH(
      {
        ConfigSpace space;
        space.AddKnob("mc", {1, 2, 1});
      },
      "twice");
}

TEST(ConfigSpaceTest, RawSizeIsTheProductAndSaturates) {
  EXPECT_EQ(ConfigSpace().RawSize(), 1u);
  EXPECT_EQ(GemmLikeSpace().RawSize(), 24u);
  ConfigSpace big;
  for (int i = 0; i < 63; ++i) {
    big.AddKnob("k" + std::to_string(i), {0, 1});
  }
  EXPECT_EQ(big.RawSize(), uint64_t{1} << 63);
  big.AddKnob("k63", {0, 1, 2});
  EXPECT_EQ(big.RawSize(), std::numeric_limits<uint64_t>::max());
}

TEST(ConfigSpaceTest, ConfigAtAndIndexOfAreInverseWithTheFirstKnobSlowest) {
  ConfigSpace space = GemmLikeSpace();
  std::set<Config> seen;
  for (uint64_t i = 0; i < space.RawSize(); ++i) {
    Config config = space.ConfigAt(i);
    EXPECT_TRUE(seen.insert(config).second) << ConfigToString(config);
    EXPECT_EQ(space.IndexOf(config), i) << ConfigToString(config);
  }
  EXPECT_EQ(space.ConfigAt(0), (Config{{"mc", 16}, {"mr", 4}, {"nr", 8}}));
  EXPECT_EQ(space.ConfigAt(1), (Config{{"mc", 16}, {"mr", 4}, {"nr", 16}}));
  EXPECT_EQ(space.ConfigAt(4), (Config{{"mc", 16}, {"mr", 8}, {"nr", 8}}));
  EXPECT_EQ(space.ConfigAt(8), (Config{{"mc", 32}, {"mr", 4}, {"nr", 8}}));
  EXPECT_EQ(space.ConfigAt(23), (Config{{"mc", 64}, {"mr", 8}, {"nr", 48}}));
}

TEST(ConfigSpaceTest, IndexOfRejectsConfigsThatAreNotPoints) {
  ConfigSpace space = GemmLikeSpace();
  EXPECT_EQ(space.IndexOf({{"mc", 48}, {"mr", 4}, {"nr", 8}}), std::nullopt);
  EXPECT_EQ(space.IndexOf({{"mc", 16}, {"mr", 4}}), std::nullopt);
  EXPECT_EQ(space.IndexOf({{"mc", 16}, {"mr", 4}, {"nr", 8}, {"kc", 1}}), std::nullopt);
  EXPECT_EQ(space.IndexOf({{"mc", 16}, {"mr", 4}, {"xx", 8}}), std::nullopt);
}

TEST(ConfigSpaceTest, ConfigAtWorksInSpacesBeyondSixtyFourBits) {
  ConfigSpace space;
  for (int i = 0; i < 70; ++i) {
    space.AddKnob("k" + std::to_string(100 + i), {0, 1});
  }
  ASSERT_EQ(space.RawSize(), std::numeric_limits<uint64_t>::max());
  uint64_t index = std::numeric_limits<uint64_t>::max() - 1;
  Config config = space.ConfigAt(index);
  EXPECT_EQ(space.IndexOf(config), index);
  EXPECT_EQ(config.at("k105"), 0);  // the first six knobs stay at their first value
  EXPECT_EQ(config.at("k106"), 1);
  EXPECT_EQ(config.at("k169"), 0);  // the last knob holds the lowest bit
  config["k100"] = 1;               // an index beyond 64 bits
  EXPECT_EQ(space.IndexOf(config), std::nullopt);
}

TEST(ConfigSpaceTest, EnumerateValidListsValidConfigsInIndexOrderUpToTheLimit) {
  ConfigSpace space = GemmLikeSpace();
  std::vector<Config> expected;
  for (uint64_t i = 0; i < space.RawSize(); ++i) {
    if (space.IsValid(space.ConfigAt(i))) {
      expected.push_back(space.ConfigAt(i));
    }
  }
  ASSERT_EQ(expected.size(), 19u);
  EXPECT_EQ(space.EnumerateValid(1000), expected);
  std::vector<Config> first(expected.begin(), expected.begin() + 5);
  EXPECT_EQ(space.EnumerateValid(5), first);
  EXPECT_TRUE(space.EnumerateValid(0).empty());
  EXPECT_EQ(ConfigSpace().EnumerateValid(10), std::vector<Config>{Config{}});
}

TEST(ConfigSpaceTest, SampleDrawsOnlyValidConfigsAndReachesEveryOne) {
  ConfigSpace space = GemmLikeSpace();
  std::mt19937_64 rng(1);
  std::set<Config> seen;
  for (int i = 0; i < 2000; ++i) {
    std::optional<Config> config = space.Sample(rng);
    ASSERT_TRUE(config.has_value());
    ASSERT_TRUE(space.IsValid(*config)) << ConfigToString(*config);
    seen.insert(*config);
  }
  EXPECT_EQ(seen.size(), 19u);
}

TEST(ConfigSpaceTest, SampleIsDeterministicPerSeed) {
  ConfigSpace space = GemmLikeSpace();
  auto draw = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<Config> out;
    for (int i = 0; i < 30; ++i) {
      out.push_back(*space.Sample(rng));
    }
    return out;
  };
  EXPECT_EQ(draw(7), draw(7));
  EXPECT_NE(draw(7), draw(8));
}

TEST(ConfigSpaceTest, SampleGivesUpWhenNoConfigIsValid) {
  ConfigSpace space = GemmLikeSpace();
  space.AddConstraint("never", [](const Config&) { return false; });
  std::mt19937_64 rng(1);
  EXPECT_EQ(space.Sample(rng, 100), std::nullopt);
}

// Saved random searches replay these draws, so they must not change between versions or
// platforms.
TEST(ConfigSpaceTest, UniformIndexSequenceIsPinned) {
  std::mt19937_64 rng(42);
  std::vector<uint64_t> values;
  for (int i = 0; i < 8; ++i) {
    values.push_back(UniformIndex(rng, 10));
  }
  EXPECT_EQ(values, (std::vector<uint64_t>{6, 4, 0, 2, 1, 8, 6, 4}));
  std::mt19937_64 one(3);
  EXPECT_EQ(UniformIndex(one, 1), 0u);
}

TEST(ConfigSpaceTest, DescribeListsKnobsAndConstraintsOnOneLine) {
  EXPECT_EQ(GemmLikeSpace().Describe(),
            "3 knobs (24 points): mc={16,32,64} mr={4,8} nr={8,16,32,48}; constraints: "
            "[nr >= 2 * mr] [mc * nr <= 2048]");
}

TEST(ConfigSpaceTest, FingerprintChangesWithValuesAndConstraintsButNotDocs) {
  ConfigSpace a = GemmLikeSpace();
  ConfigSpace same;
  same.AddKnob("mc", {16, 32, 64}, "another doc");
  same.AddKnob("mr", {4, 8});
  same.AddKnob("nr", {8, 16, 32, 48});
  same.AddConstraint("nr >= 2 * mr", [](const Config&) { return true; });
  same.AddConstraint("mc * nr <= 2048", [](const Config&) { return true; });
  EXPECT_EQ(a.Fingerprint(), same.Fingerprint());
  EXPECT_EQ(a.Fingerprint().size(), 16u);

  ConfigSpace other_value = GemmLikeSpace();
  other_value.AddKnob("kc", {1});
  EXPECT_NE(a.Fingerprint(), other_value.Fingerprint());
  ConfigSpace other_constraint = GemmLikeSpace();
  other_constraint.AddConstraint("mc >= 32", [](const Config& c) { return c.at("mc") >= 32; });
  EXPECT_NE(a.Fingerprint(), other_constraint.Fingerprint());
}

}  // namespace
}  // namespace tune

namespace tune {
namespace {

TEST(ConfigSpaceNearestTest, KeepsCandidatesAndMovesOtherValuesToTheNearestByRatio) {
  ConfigSpace space = GemmLikeSpace();
  // A point of the space stays as it is.
  EXPECT_EQ(space.Nearest({{"mc", 32}, {"mr", 4}, {"nr", 16}}),
            (Config{{"mc", 32}, {"mr", 4}, {"nr", 16}}));
  // mc=28 (another size's tile) is nearest 32 by ratio; nr=40 nearest 48, which mc=32 allows.
  EXPECT_EQ(space.Nearest({{"mc", 28}, {"mr", 4}, {"nr", 40}}),
            (Config{{"mc", 32}, {"mr", 4}, {"nr", 48}}));
  // Moved values that break a constraint (mc=64 with nr=48): none.
  EXPECT_EQ(space.Nearest({{"mc", 100}, {"mr", 4}, {"nr", 48}}), std::nullopt);
  // A knob missing: none.
  EXPECT_EQ(space.Nearest({{"mc", 32}, {"mr", 4}}), std::nullopt);
}

}  // namespace
}  // namespace tune
