// Helpers for the moderation service's unit tests: stored notes and reports made directly in
// a store, and the code + reason-word check every refusal test uses.
#ifndef COURTPIECE_SERVICES_MODERATION_MODERATION_TEST_UTIL_H_
#define COURTPIECE_SERVICES_MODERATION_MODERATION_TEST_UTIL_H_

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "services/moderation/moderation_store.h"
#include "services/moderation/voice_notes.h"

namespace courtpiece::moderation::testing {

// The status has `code` and its message starts with "<word>: ".
inline void ExpectRefused(const absl::Status& status, absl::StatusCode code,
                          std::string_view word) {
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_EQ(ReasonWord(status), word) << status;
}

// A stored note "n-<suffix>" by `author` at `table_id`, round `round`, with `bytes` of audio.
inline NoteRow AddNote(ModerationStore& store, const std::string& suffix, const std::string& author,
                       absl::Time at, const std::string& table_id = "t-1", uint64_t round = 1,
                       size_t bytes = 100) {
  NoteRow note{.note_id = absl::StrCat("n-", suffix),
               .table_id = table_id,
               .round = round,
               .author = author,
               .duration_ms = 3000,
               .format = "webm/opus",
               .content_type = "audio/webm",
               .size_bytes = static_cast<int64_t>(bytes),
               .created_at = at};
  bool inserted = false;
  absl::StatusOr<NoteRow> out =
      store.InsertNote(note, std::string(bytes, 'a'), &inserted, absl::InfiniteFuture());
  EXPECT_TRUE(out.ok() && inserted) << out.status();
  return out.ok() ? *out : note;
}

// A report of `note` by `reporter`.
inline ReportRow AddReport(ModerationStore& store, const NoteRow& note, const std::string& reporter,
                           absl::Time at) {
  bool replayed = false;
  absl::StatusOr<ReportRow> r =
      store.FileReport(absl::StrCat(note.table_id, ":report:", note.note_id, ":", reporter),
                       note.note_id, reporter, at, &replayed, absl::InfiniteFuture());
  EXPECT_TRUE(r.ok() && !replayed) << r.status();
  return r.ok() ? *r : ReportRow{};
}

}  // namespace courtpiece::moderation::testing

#endif  // COURTPIECE_SERVICES_MODERATION_MODERATION_TEST_UTIL_H_
