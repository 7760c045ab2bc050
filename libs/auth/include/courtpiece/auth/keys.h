// Ed25519 key material for session tokens: parsing it from configuration text, files or the
// environment, and making new key pairs (courtpiece-keygen).
//
//   signing key text:  "<kid>:<base64 of the 32-byte seed>"
//   verify keys text:  "<kid>:<base64 of the 32-byte public key>[,<kid>:<base64 pub>...]"
// Base64 is accepted in the standard alphabet (with or without '=' padding) or the url-safe
// one (no padding); whitespace around entries is ignored. Key ids are 1..32 chars of
// [A-Za-z0-9_-] and unique within a set. Errors are InvalidArgument naming what is wrong,
// never echoing secret material.
// Thread-safety: free functions are safe; the structs are plain values.
#ifndef COURTPIECE_AUTH_KEYS_H_
#define COURTPIECE_AUTH_KEYS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace courtpiece::auth {

inline constexpr size_t kSeedBytes = 32;
inline constexpr size_t kPublicKeyBytes = 32;
inline constexpr size_t kKeyIdMax = 32;  // chars

// 1..kKeyIdMax chars of [A-Za-z0-9_-].
bool IsValidKeyId(std::string_view kid);

struct SigningKey {
  std::string key_id;
  std::string seed;        // 32 bytes
  std::string public_key;  // 32 bytes, derived from the seed
  std::string secret_key;  // 64 bytes (libsodium's seed || public key form)

  // "<kid>:<base64 seed>".
  static absl::StatusOr<SigningKey> Parse(std::string_view text);
  // A key from a 32-byte seed.
  static absl::StatusOr<SigningKey> FromSeed(std::string_view key_id, std::string_view seed);
  // A fresh random key.
  static SigningKey Generate(std::string_view key_id);
  // "<kid>:<base64 seed>" (standard alphabet, padded): what Parse reads.
  std::string SeedText() const;
  // "<kid>:<base64 public key>": an entry of the verify keys text.
  std::string PublicText() const;
};

struct VerifyKeys {
  std::map<std::string, std::string> by_key_id;  // kid -> 32-byte public key

  // "<kid>:<base64 pub>[,...]"; at least one key.
  static absl::StatusOr<VerifyKeys> Parse(std::string_view text);
};

// Decodes base64 in either alphabet (see above); InvalidArgument otherwise.
absl::StatusOr<std::string> DecodeBase64(std::string_view text);
// Standard alphabet, padded.
std::string EncodeBase64(std::string_view bytes);

// The configuration value of NAME: the environment variable NAME, or the contents of the
// file named by NAME_FILE (trailing whitespace trimmed). nullopt when neither is set;
// InvalidArgument when both are set or the file cannot be read.
absl::StatusOr<std::optional<std::string>> ReadEnvOrFile(const std::string& name);

// A one-way hash of a high-entropy secret (device secrets, refresh tokens) for storage:
// BLAKE2b-256 of purpose, a NUL byte, then the secret, so equal secrets for different
// purposes hash differently. 32 raw bytes. (The secrets are random and long, so a fast hash
// is enough: there is nothing to brute-force.)
std::string SecretHash(std::string_view purpose, std::string_view secret);

}  // namespace courtpiece::auth

#endif  // COURTPIECE_AUTH_KEYS_H_
