#pragma once
// SHA-256 over bytes, via OpenSSL EVP (hardware-accelerated where the CPU has SHA-NI).
// The OpenSSL headers stay out of this header so users need not link or include them.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace tilevit::package {

using Digest = std::array<std::uint8_t, 32>;

Digest sha256(std::span<const std::byte> bytes);
std::string sha256_hex(std::span<const std::byte> bytes);  // 64 lowercase hex digits
std::string to_hex(const Digest& digest);

// Incremental hashing: update() any number of times, then finish() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&& other) noexcept;
  Sha256& operator=(Sha256&& other) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::span<const std::byte> bytes);
  void update(std::string_view text);
  Digest finish();  // after this, update()/finish() throw until the object is reassigned

 private:
  evp_md_ctx_st* ctx_ = nullptr;
  bool finished_ = false;
};

}  // namespace tilevit::package
