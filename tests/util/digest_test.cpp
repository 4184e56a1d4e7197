// util/digest.hpp and the build-time digests of util/embedded.hpp.
#include "util/digest.hpp"

#include <gtest/gtest.h>

#include "util/embedded.hpp"

namespace gpuplan {
namespace {

// FIPS 180-4 test vectors (NIST "SHA-256 example with one-block message": "abc"), and the
// empty message's digest as `sha256sum /dev/null` prints it.
TEST(Digest, Sha256HexMatchesFipsVectors) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// The digest CMake computed at build time for every embedded file equals OpenSSL's digest of
// the bytes the binary carries: the bundled catalog's key (bundled_catalog_key) rests on it.
TEST(Digest, BuildTimeDigestOfEveryEmbeddedFileMatchesItsBytes) {
  const auto paths = embedded_paths();
  ASSERT_GT(paths.size(), 10u);
  for (std::string_view p : paths) {
    const auto digest = embedded_file_sha256(p);
    ASSERT_TRUE(digest.has_value()) << p;
    EXPECT_EQ(*digest, sha256_hex(embedded_file_or_throw(p))) << p;
  }
  EXPECT_FALSE(embedded_file_sha256("no/such/file").has_value());
}

}  // namespace
}  // namespace gpuplan
