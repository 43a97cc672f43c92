#include "package/sha256.hpp"

#include <openssl/evp.h>

#include <utility>

#include "support/error.hpp"

namespace tilevit::package {
namespace {

// OpenSSL failures here mean an out-of-memory or a broken library, not bad input.
[[noreturn]] void openssl_failure(const char* what) {
  throw Error(std::string("SHA-256: OpenSSL ") + what + " failed", kExitInternal);
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr) openssl_failure("EVP_MD_CTX_new");
  if (EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx_);
    ctx_ = nullptr;
    openssl_failure("EVP_DigestInit_ex");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

Sha256::Sha256(Sha256&& other) noexcept
    : ctx_(std::exchange(other.ctx_, nullptr)), finished_(std::exchange(other.finished_, true)) {}

Sha256& Sha256::operator=(Sha256&& other) noexcept {
  if (this != &other) {
    EVP_MD_CTX_free(ctx_);
    ctx_ = std::exchange(other.ctx_, nullptr);
    finished_ = std::exchange(other.finished_, true);
  }
  return *this;
}

void Sha256::update(std::span<const std::byte> bytes) {
  if (ctx_ == nullptr || finished_) throw Error("SHA-256: update() after finish()", kExitInternal);
  if (bytes.empty()) return;
  if (EVP_DigestUpdate(ctx_, bytes.data(), bytes.size()) != 1) openssl_failure("EVP_DigestUpdate");
}

void Sha256::update(std::string_view text) { update(std::as_bytes(std::span(text.data(), text.size()))); }

Digest Sha256::finish() {
  if (ctx_ == nullptr || finished_) throw Error("SHA-256: finish() called twice", kExitInternal);
  Digest digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx_, digest.data(), &length) != 1 || length != digest.size())
    openssl_failure("EVP_DigestFinal_ex");
  finished_ = true;
  return digest;
}

Digest sha256(std::span<const std::byte> bytes) {
  Sha256 hasher;
  hasher.update(bytes);
  return hasher.finish();
}

std::string to_hex(const Digest& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(digest.size() * 2);
  for (std::uint8_t b : digest) {
    hex.push_back(kDigits[b >> 4]);
    hex.push_back(kDigits[b & 0xF]);
  }
  return hex;
}

std::string sha256_hex(std::span<const std::byte> bytes) { return to_hex(sha256(bytes)); }

}  // namespace tilevit::package
