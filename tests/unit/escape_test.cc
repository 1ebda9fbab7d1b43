#include "util/escape.h"

#include <gtest/gtest.h>

namespace cmc {
namespace {

TEST(Escapes, DecodesTheCEscapes) {
  auto decoded = decode_escapes(R"(SET a\n\r\t\\\x41\x00z)");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, std::string("SET a\n\r\t\\A\0z", 12));
}

TEST(Escapes, RejectsBrokenEscapes) {
  EXPECT_FALSE(decode_escapes(R"(a\)").ok());
  EXPECT_FALSE(decode_escapes(R"(\x4)").ok());
  EXPECT_FALSE(decode_escapes(R"(\xzz)").ok());
  EXPECT_FALSE(decode_escapes(R"(\q)").ok());
}

TEST(Escapes, EncodeIsTheInverseOnMessages) {
  const std::string message("GET \"k\"\n\x01\x7f", 10);
  const std::string encoded = encode_escapes(message);
  EXPECT_EQ(encoded, R"(GET "k"\n\x01\x7f)");
  auto round = decode_escapes(encoded);
  ASSERT_TRUE(round.ok());
  EXPECT_EQ(*round, message);
}

} // namespace
} // namespace cmc
