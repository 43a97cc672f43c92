#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "package/sha256.hpp"
#include "support/error.hpp"

using namespace tilevit;
using namespace tilevit::package;

namespace {

std::span<const std::byte> as_span(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

}  // namespace

// FIPS 180-2 test vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(as_span("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(as_span("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(as_span("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(as_span(std::string(1'000'000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, DigestMatchesHex) {
  const Digest d = sha256(as_span("abc"));
  EXPECT_EQ(d[0], 0xba);
  EXPECT_EQ(d[31], 0xad);
  EXPECT_EQ(to_hex(d), sha256_hex(as_span("abc")));
}

TEST(Sha256, IncrementalEqualsOneShotAtEverySplit) {
  std::string text;
  for (int i = 0; i < 200; ++i) text.push_back(static_cast<char>(i * 37 + 11));
  const Digest expected = sha256(as_span(text));
  for (std::size_t a = 0; a <= text.size(); a += 13) {
    for (std::size_t b = a; b <= text.size(); b += 29) {
      Sha256 h;
      h.update(as_span(text).subspan(0, a));
      h.update(std::string_view(text).substr(a, b - a));
      h.update(as_span(text).subspan(b));
      ASSERT_EQ(h.finish(), expected) << "split at " << a << ", " << b;
    }
  }
}

TEST(Sha256, FinishTwiceThrowsAndMovedFromIsUnusable) {
  Sha256 h;
  h.update(std::string_view("x"));
  Sha256 moved = std::move(h);
  EXPECT_THROW(h.update(std::string_view("y")), Error);  // NOLINT(bugprone-use-after-move): intended
  const Digest d = moved.finish();
  EXPECT_EQ(d, sha256(as_span("x")));
  EXPECT_THROW(moved.finish(), Error);
  EXPECT_THROW(moved.update(std::string_view("z")), Error);
  moved = Sha256();  // reassigning gives a fresh hasher
  EXPECT_EQ(moved.finish(), sha256(as_span("")));
}
