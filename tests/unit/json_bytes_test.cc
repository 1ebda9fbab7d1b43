#include "app/report/json_bytes.h"

#include <random>

#include <gtest/gtest.h>

namespace cmc::app {
namespace {

using nlohmann::json;

TEST(JsonBytes, Utf8StaysAString) {
  EXPECT_EQ(json_bytes("SET a\n"), json("SET a\n"));
  EXPECT_EQ(json_bytes("caf\xc3\xa9 \xf0\x9f\x98\x80"),
            json("caf\xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_EQ(json_bytes(std::string("a\0b", 3)), json(std::string("a\0b", 3)));
  EXPECT_EQ(json_bytes(""), json(""));
}

TEST(JsonBytes, OtherBytesAreHex) {
  EXPECT_EQ(json_bytes("H\xff\n"), json::parse(R"({"hex": "48ff0a"})"));
  // An MQTT CONNECT: its bytes are UTF-8 (NUL included), so text.
  EXPECT_EQ(json_bytes(std::string("\x10\x0c\x00\x04MQTT", 8)),
            json(std::string("\x10\x0c\x00\x04MQTT", 8)));
  EXPECT_EQ(json_bytes("\x82\x0c")["hex"], "820c");
}

// What nlohmann refuses to dump is what is_utf8 refuses (RFC 3629).
TEST(JsonBytes, RefusesWhatIsNotUtf8) {
  for (const char *bad : {
           "\x80",             // a continuation byte first
           "\xc0\xaf",         // overlong '/'
           "\xc1\xbf",         // overlong
           "\xe0\x80\xaf",     // overlong
           "\xed\xa0\x80",     // a surrogate, U+D800
           "\xf4\x90\x80\x80", // past U+10FFFF
           "\xf5\x80\x80\x80", // no such lead byte
           "\xc3",             // cut short
           "\xe2\x82",         // cut short
           "\xe2\x28\xa1",     // a bad continuation
       })
    EXPECT_FALSE(is_utf8(bad)) << json_bytes(bad).dump();
  for (const char *good :
       {"\x7f", "\xc2\x80", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80",
        "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf"})
    EXPECT_TRUE(is_utf8(good)) << good;
}

TEST(JsonBytes, ReadsBothFormsBack) {
  EXPECT_EQ(*bytes_of_json(json("text")), "text");
  EXPECT_EQ(*bytes_of_json(json::parse(R"({"hex": "48FF0a"})")), "H\xff\n");
  EXPECT_EQ(*bytes_of_json(json::parse(R"({"hex": ""})")), "");
  for (const char *bad : {R"({"hex": "4"})", R"({"hex": "zz"})",
                          R"({"hex": 48})", R"({"hex": "48", "more": 1})",
                          R"({})", "48", "null", "[\"a\"]", "true"})
    EXPECT_FALSE(bytes_of_json(json::parse(bad)).ok()) << bad;
}

// Any bytes, anywhere in a report, dump without an exception and read
// back to the same bytes.
TEST(JsonBytes, DumpIsLosslessForRandomBytes) {
  std::mt19937 random(16);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(random() % 12, '\0');
    for (char &byte : bytes)
      byte = static_cast<char>(random() % 4 == 0 ? 0xc0 + random() % 64
                                                 : random() % 256);
    const json report = {{"violation", bytes},
                         {"counterexample", {{{"send", bytes}}}},
                         {"replay", {{"command", {"kv", bytes}}}}};
    const auto text = dump_json(report);
    ASSERT_TRUE(text.ok()) << text.error().message;
    const json back = json::parse(*text);
    EXPECT_EQ(*bytes_of_json(back["violation"]), bytes);
    EXPECT_EQ(*bytes_of_json(back["counterexample"][0]["send"]), bytes);
    EXPECT_EQ(*bytes_of_json(back["replay"]["command"][1]), bytes);
    EXPECT_EQ(back["replay"]["command"][0], "kv");
  }
}

TEST(JsonBytes, AKeyThatIsNotUtf8FailsWithoutThrowing) {
  const auto text = dump_json({{"\xff", 1}});
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("cannot write the JSON"),
            std::string::npos);
}

} // namespace
} // namespace cmc::app
