#pragma once
/// Util layer: content digests (SHA-256 from OpenSSL's libcrypto, FIPS 180-4).
///
/// Used where gpuplan must tell whether data changed: the fetchers' snapshot hashes (a source's
/// response bodies) and the bundled catalog's identity (which bundled data a store was seeded
/// with, catalog/open_store.hpp).
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

/// "sha256:<64 lower-case hex digits>" of the parts, each fed as "<byte length>:" then its
/// bytes, so part boundaries count ({"ab","c"} and {"a","bc"} differ). Throws Error{internal}
/// only when libcrypto has no SHA-256.
std::string sha256_of_parts(const std::vector<std::string_view>& parts);

/// The SHA-256 of `bytes` alone as 64 lower-case hex digits (no prefix, no length framing): the
/// form `sha256sum` and CMake's file(SHA256) print. Throws as sha256_of_parts.
std::string sha256_hex(std::string_view bytes);

}  // namespace gpuplan
