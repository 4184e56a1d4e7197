#include "util/digest.hpp"

#include <memory>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "util/error.hpp"

namespace gpuplan {

namespace {

/// One SHA-256 over the byte ranges `feed` passes to its update callback, as lower-case hex
/// after `prefix`. The two public forms differ only in what they feed and the prefix.
template <typename Feed>
std::string sha256_hex_of(std::string prefix, Feed feed) {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    throw Error(ErrorKind::internal, "sha256", "SHA-256 unavailable in libcrypto");
  feed([&](std::string_view bytes) { EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()); });
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &n);
  std::string hex = std::move(prefix);
  for (unsigned int i = 0; i < n; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

}  // namespace

std::string sha256_of_parts(const std::vector<std::string_view>& parts) {
  return sha256_hex_of("sha256:", [&](auto update) {
    for (std::string_view b : parts) {
      update(std::to_string(b.size()) + ":");
      update(b);
    }
  });
}

std::string sha256_hex(std::string_view bytes) {
  return sha256_hex_of("", [&](auto update) { update(bytes); });
}

}  // namespace gpuplan
