// VoiceNotes: the decisions of the voice-note flow (docs/moderation.md "The voice-note
// flow"): UploadNote, GetNote (VoiceNotes service) and FileReport (ReportIntake, from the
// table). Pure C++ against the store, the table port, the audio probe, a Clock and a random
// source; no I/O of its own.
//
// Contract: refusals are the codes and reason words of moderation.proto / reports.proto,
// checked in the order listed there (UploadNote: bad_request, too_big, muted,
// unsupported_format, too_long, no_table, no_round, not_seated, alone, allowance_used,
// no_lock). UNAVAILABLE: the table or the store is unreachable (retry the same upload);
// DEADLINE_EXCEEDED: `deadline` passed before a store or table call.
// Idempotency and crash safety:
// - The note and its audio are stored in one transaction, unique per (table, round, author);
//   a retry finds the stored note and announces it (the table is idempotent by note id).
// - The table refusing the announcement (no_lock / round_over) while the round's allowance
//   was unused deletes the stored note and refuses no_lock; the table unreachable keeps it
//   (the retry announces it). A stored note whose allowance is used is never deleted here.
// - A retry after the note was announced and the reply lost answers the same note, replayed.
// - FileReport is idempotent by key and by (note, reporter): a re-send answers replayed.
// Thread-safety: thread-safe (no state of its own; the store, ports and probe are).
#ifndef COURTPIECE_SERVICES_MODERATION_VOICE_NOTES_H_
#define COURTPIECE_SERVICES_MODERATION_VOICE_NOTES_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "courtpiece/common/splitmix64.h"
#include "services/moderation/audio_probe.h"
#include "services/moderation/moderation_store.h"
#include "services/moderation/table_port.h"

namespace courtpiece::moderation {

inline constexpr int64_t kNoteDurationMaxMs = 7000;       // RULES.md §5.1
inline constexpr int64_t kNoteDurationToleranceMs = 500;  // docs/moderation.md "Limits"
inline constexpr int64_t kDefaultNoteBytesMax = 512 * 1024;

// 32 random hex characters per call (a note id is "n-" + these).
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  virtual std::string Hex32() = 0;
};
// The OS CSPRNG (libsodium). Thread-safe.
class SystemRandomSource final : public RandomSource {
 public:
  std::string Hex32() override;
};
// SplitMix64 from a seed, for tests. Thread-safe.
class SeededRandomSource final : public RandomSource {
 public:
  explicit SeededRandomSource(uint64_t seed) : rng_{seed} {}
  std::string Hex32() override;

 private:
  std::mutex mu_;
  SplitMix64 rng_;  // guarded by mu_
};

struct VoiceNotesOptions {
  int64_t note_bytes_max = kDefaultNoteBytesMax;
};

struct UploadRequest {
  std::string author;  // the token's player (the server's, never a field)
  std::string table_id;
  uint64_t round = 0;  // 0: the table's current round
  std::string audio;
};
struct UploadResult {
  NoteRow note;
  bool replayed = false;  // the note had been stored (and maybe announced) before this call
};

struct NoteWithAudio {
  NoteRow note;
  std::string audio;
};

struct ReportRequest {
  std::string key;  // "<table>:report:<note_id>:<reporter>"
  std::string table_id;
  std::string note_id;
  std::string author;
  std::string reporter;
  uint64_t round = 0;
};

// "<word>" of a status message "<word>: ...", or "" when it has none.
std::string_view ReasonWord(std::string_view message);
// The same for a status.
inline std::string_view ReasonWord(const absl::Status& status) {
  return ReasonWord(std::string_view(status.message().data(), status.message().size()));
}
// 1..64 chars of [A-Za-z0-9_-] (table, player and note ids).
bool ValidId(std::string_view id);

class VoiceNotes {
 public:
  // Every reference must outlive the VoiceNotes.
  VoiceNotes(ModerationStore& store, TablePort& tables, const AudioProbe& probe, const Clock& clock,
             RandomSource& random, VoiceNotesOptions options = {});

  absl::StatusOr<UploadResult> UploadNote(const UploadRequest& request, absl::Time deadline);
  // For `listener` seated at the note's table now.
  absl::StatusOr<NoteWithAudio> GetNote(const std::string& listener, const std::string& note_id,
                                        absl::Time deadline);
  // Returns whether it was a re-send (replayed).
  absl::StatusOr<bool> FileReport(const ReportRequest& request, absl::Time deadline);
  // OK when `player` may record a note now; PermissionDenied "muted: ..." (UploadNote's
  // refusal, word for word) while an admin's mute holds; InvalidArgument for a bad id.
  absl::Status CheckVoice(const std::string& player, absl::Time deadline);

  const VoiceNotesOptions& options() const { return options_; }

 private:
  absl::Status CheckDeadline(absl::Time deadline) const;
  // Announces a stored note. On the table's refusal: with `never_announced` (the table said
  // the round's allowance is unused, so no note of this round was announced) deletes it and
  // answers no_lock; otherwise keeps it and answers allowance_used (it may have been
  // announced long ago and forgotten by the table: retention keeps it).
  absl::StatusOr<UploadResult> Announce(const NoteRow& note, bool stored_before,
                                        bool never_announced, absl::Time deadline);

  ModerationStore& store_;
  TablePort& tables_;
  const AudioProbe& probe_;
  const Clock& clock_;
  RandomSource& random_;
  const VoiceNotesOptions options_;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_VOICE_NOTES_H_
