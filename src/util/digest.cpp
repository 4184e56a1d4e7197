#include "util/digest.hpp"

#include <memory>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "util/error.hpp"

namespace gpuplan {

std::string sha256_of_parts(const std::vector<std::string_view>& parts) {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    throw Error(ErrorKind::internal, "sha256", "SHA-256 unavailable in libcrypto");
  for (std::string_view b : parts) {
    const std::string len = std::to_string(b.size()) + ":";
    EVP_DigestUpdate(ctx.get(), len.data(), len.size());
    EVP_DigestUpdate(ctx.get(), b.data(), b.size());
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &n);
  std::string hex = "sha256:";
  for (unsigned int i = 0; i < n; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

std::string sha256_hex(std::string_view bytes) {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    throw Error(ErrorKind::internal, "sha256", "SHA-256 unavailable in libcrypto");
  EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &n);
  std::string hex;
  for (unsigned int i = 0; i < n; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

}  // namespace gpuplan
