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

}  // namespace gpuplan
