// The model section's `features`: absent for SigLIP (its packages keep their bytes), and
// every family field read back as written.
#include <gtest/gtest.h>

#include "package/config_codec.hpp"
#include "support/error.hpp"

using namespace tilevit;

TEST(ConfigCodec, SiglipHasNoFeatures) {
  EXPECT_TRUE(package::family_features_json(model::ViTConfig::so400m()).is_null());
  EXPECT_TRUE(package::family_features_json(model::ViTConfig::preset("siglip-b16-224")).is_null());
}

TEST(ConfigCodec, EveryFamilyRoundTrips) {
  for (const char* preset : {"clip-l14-336", "dinov2-s-reg", "dinov2-tiny", "vit-b16"}) {
    model::ViTConfig c = model::ViTConfig::preset(preset);
    const nlohmann::json j = package::family_features_json(c);
    ASSERT_FALSE(j.is_null()) << preset;
    model::ViTConfig back;  // SigLIP defaults, the family's fields from j
    package::read_family_features(nlohmann::json::parse(j.dump()), back);  // as the package holds it: text
    EXPECT_EQ(package::family_features_json(back), j) << preset;
    EXPECT_EQ(back.register_tokens, c.register_tokens) << preset;
    EXPECT_EQ(back.pooling, c.pooling) << preset;
    EXPECT_EQ(back.preprocessing.mean, c.preprocessing.mean) << preset;
  }
}

TEST(ConfigCodec, BadValuesNameTheField) {
  nlohmann::json j = package::family_features_json(model::ViTConfig::preset("clip-b32"));
  j["pooling"] = "average";
  model::ViTConfig c;
  try {
    package::read_family_features(nlohmann::json::parse(j.dump()), c);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("features.pooling: unknown value \"average\""), std::string::npos) << e.what();
  }
}
