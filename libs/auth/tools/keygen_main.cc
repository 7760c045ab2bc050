// courtpiece-keygen [--kid KID]: prints a new Ed25519 key pair for session tokens as two
// environment lines (docs/lobby.md "Keys and rotation"):
//   COURTPIECE_LOBBY_SIGNING_KEY=<kid>:<base64 seed>     secret: the lobby only
//   COURTPIECE_LOBBY_VERIFY_KEYS=<kid>:<base64 public>   public: lobby and gateway
// KID defaults to k<UTC date and time>, e.g. k20261201T1015. Exit 2 on a bad flag.
#include <cstdio>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "courtpiece/auth/keys.h"

int main(int argc, char** argv) {
  std::string kid = "k" + absl::FormatTime("%Y%m%dT%H%M", absl::Now(), absl::UTCTimeZone());
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--kid" && i + 1 < argc) {
      kid = argv[++i];
    } else {
      std::fprintf(stderr, "usage: courtpiece-keygen [--kid KID]\n");
      return 2;
    }
  }
  if (!courtpiece::auth::IsValidKeyId(kid)) {
    std::fprintf(stderr, "courtpiece-keygen: --kid must be 1..%zu chars of [A-Za-z0-9_-]\n",
                 courtpiece::auth::kKeyIdMax);
    return 2;
  }
  const courtpiece::auth::SigningKey key = courtpiece::auth::SigningKey::Generate(kid);
  std::printf("COURTPIECE_LOBBY_SIGNING_KEY=%s\n", key.SeedText().c_str());
  std::printf("COURTPIECE_LOBBY_VERIFY_KEYS=%s\n", key.PublicText().c_str());
  return 0;
}
