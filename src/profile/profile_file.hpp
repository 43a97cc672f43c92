#pragma once
// The .tvprof file: a profile on disk. It uses the package container (named, hashed
// sections; package/container.hpp), so a flipped byte or a truncated file is caught
// before any field is read. Sections: "profile" (JSON header: identity, options, span,
// totals), "meta" (interned step metadata), "samples" (per tile). Layout and validation
// rules: docs/PROFILE_FORMAT.md.
#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace tilevit::profile {

// 2: samples carry their uncalibrated cycles, the header their total (version 1 files are
// rejected with a one-line message).
inline constexpr std::uint32_t kProfileFormatVersion = 2;

std::vector<std::byte> encode_profile(const Profile& profile);
void write_profile(const std::string& path, const Profile& profile);  // atomically
// Throws Error(kExitBadInput) naming the file and what is wrong.
Profile read_profile(const std::string& path);
Profile decode_profile(std::vector<std::byte> bytes, const std::string& name);

}  // namespace tilevit::profile
