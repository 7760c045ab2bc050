#include "services/moderation/voice_notes.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/ids.h"

namespace courtpiece::moderation {
namespace {

constexpr size_t kReportKeyMax = 256;

std::string TimeText(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

absl::Status MutedError(const MuteRow& mute) {
  if (!mute.until.has_value()) {
    return absl::PermissionDeniedError(
        "muted: an admin stopped your voice notes until they lift it");
  }
  return absl::PermissionDeniedError(
      absl::StrCat("muted: an admin stopped your voice notes until ", TimeText(*mute.until)));
}

// A table's DEADLINE_EXCEEDED is the table being slow: the upload may be retried.
absl::Status TableUnavailable(const absl::Status& s) {
  if (s.code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::UnavailableError(absl::StrCat(
        "the table did not answer in time: retry the same upload (", s.message(), ")"));
  }
  return s;
}

}  // namespace

std::string SystemRandomSource::Hex32() { return common::RandomHexId(16); }

std::string SeededRandomSource::Hex32() {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t hi = rng_.Next();
  const uint64_t lo = rng_.Next();
  return absl::StrFormat("%016x%016x", hi, lo);
}

std::string_view ReasonWord(std::string_view message) {
  const size_t colon = message.find(':');
  if (colon == std::string_view::npos || colon == 0) return {};
  std::string_view word = message.substr(0, colon);
  for (char c : word) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) return {};
  }
  return word;
}

bool ValidId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

VoiceNotes::VoiceNotes(ModerationStore& store, TablePort& tables, const AudioProbe& probe,
                       const Clock& clock, RandomSource& random, VoiceNotesOptions options)
    : store_(store),
      tables_(tables),
      probe_(probe),
      clock_(clock),
      random_(random),
      options_(options) {}

absl::Status VoiceNotes::CheckDeadline(absl::Time deadline) const {
  if (clock_.Now() >= deadline) return absl::DeadlineExceededError("the call's deadline passed");
  return absl::OkStatus();
}

absl::StatusOr<UploadResult> VoiceNotes::UploadNote(const UploadRequest& request,
                                                    absl::Time deadline) {
  // 1. The request's shape, then the cheap checks (size, mute), then the probe, then the
  //    table: cheapest first (docs/moderation.md).
  if (!ValidId(request.table_id)) {
    return absl::InvalidArgumentError(
        "bad_request: table_id must be 1..64 characters of [A-Za-z0-9_-]");
  }
  if (request.audio.empty()) return absl::InvalidArgumentError("bad_request: the audio is empty");
  if (!ValidId(request.author)) return absl::InvalidArgumentError("bad_request: no author");
  if (static_cast<int64_t>(request.audio.size()) > options_.note_bytes_max) {
    return absl::OutOfRangeError(absl::StrCat("too_big: the audio is ", request.audio.size(),
                                              " bytes, at most ", options_.note_bytes_max));
  }
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<std::optional<MuteRow>> mute =
      store_.ActiveMute(request.author, clock_.Now(), deadline);
  if (!mute.ok()) return mute.status();
  if (mute->has_value()) return MutedError(**mute);

  absl::StatusOr<ProbedAudio> probed = probe_.Probe(request.audio);
  if (!probed.ok()) return probed.status();
  if (probed->duration_ms > kNoteDurationMaxMs + kNoteDurationToleranceMs) {
    return absl::OutOfRangeError(absl::StrCat("too_long: the recording lasts ", probed->duration_ms,
                                              " ms, at most ", kNoteDurationMaxMs, " ms"));
  }

  // 2. The table: the authority on the lock, the allowance, the seats and the round.
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<VoiceLock> lock =
      tables_.CheckVoiceLock(request.table_id, request.author, deadline);
  if (!lock.ok()) {
    if (lock.status().code() == absl::StatusCode::kNotFound) {
      return absl::NotFoundError(absl::StrCat("no_table: no table ", request.table_id));
    }
    return TableUnavailable(lock.status());
  }
  if (request.round != 0 && request.round != lock->round) {
    return absl::NotFoundError(absl::StrCat("no_round: round ", request.round,
                                            " is not the current round (", lock->round,
                                            ") at table ", request.table_id));
  }
  if (!lock->may_send) {
    if (lock->reason == "not_seated") {
      return absl::PermissionDeniedError(
          absl::StrCat("not_seated: you are not seated at table ", request.table_id));
    }
    if (lock->reason == "alone") {
      return absl::FailedPreconditionError(
          absl::StrCat("alone: nobody else is seated at table ", request.table_id));
    }
    // The allowance used or the lock gone may be this very note, stored (and perhaps
    // announced) by an earlier attempt whose reply was lost: answer it again.
    if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
    absl::StatusOr<std::optional<NoteRow>> earlier =
        store_.FindNote(request.table_id, lock->round, request.author, deadline);
    if (!earlier.ok()) return earlier.status();
    if (earlier->has_value()) {
      // allowance_used: it may have been announced (the table forgets announced notes once
      // their report window closed); no_lock: the allowance is unused, so it never was.
      return Announce(**earlier, /*stored_before=*/true,
                      /*never_announced=*/lock->reason == "no_lock", deadline);
    }
    if (lock->reason == "allowance_used") {
      return absl::AlreadyExistsError(
          absl::StrCat("allowance_used: you already used this round's note at table ",
                       request.table_id, " (sent, discarded, or its recording lock ran out)"));
    }
    return absl::FailedPreconditionError(
        absl::StrCat(lock->reason == "no_lock" ? "no_lock" : lock->reason,
                     ": you do not hold the recording lock at table ", request.table_id));
  }

  // 3. Store (one transaction; an earlier attempt's note wins), then announce.
  NoteRow note{.note_id = absl::StrCat("n-", random_.Hex32()),
               .table_id = request.table_id,
               .round = lock->round,
               .author = request.author,
               .duration_ms = probed->duration_ms,
               .format = probed->format,
               .content_type = probed->content_type,
               .size_bytes = static_cast<int64_t>(request.audio.size()),
               .created_at = clock_.Now()};
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  bool inserted = false;
  absl::StatusOr<NoteRow> stored = store_.InsertNote(note, request.audio, &inserted, deadline);
  if (!stored.ok()) return stored.status();
  return Announce(*stored, /*stored_before=*/!inserted, /*never_announced=*/true, deadline);
}

absl::StatusOr<UploadResult> VoiceNotes::Announce(const NoteRow& note, bool stored_before,
                                                  bool never_announced, absl::Time deadline) {
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<Announced> announced = tables_.AnnounceVoiceNote(
      Announcement{.table_id = note.table_id,
                   .player = note.author,
                   .round = note.round,
                   .note_id = note.note_id,
                   .duration_ms = std::clamp<int64_t>(
                       note.duration_ms, 1, kNoteDurationMaxMs + kNoteDurationToleranceMs)},
      deadline);
  if (announced.ok()) {
    return UploadResult{.note = note, .replayed = stored_before || announced->replayed};
  }
  const absl::StatusCode code = announced.status().code();
  if (code != absl::StatusCode::kFailedPrecondition && code != absl::StatusCode::kNotFound) {
    // Unreachable or slow: the note stays stored; the client's retry announces it.
    return TableUnavailable(announced.status());
  }
  if (!never_announced) {
    // Heard (and perhaps reported) long ago, or stored before a discard: kept either way;
    // the purge takes it with the others.
    return absl::AlreadyExistsError(absl::StrCat("allowance_used: this round's note at table ",
                                                 note.table_id, " was sent or discarded (",
                                                 announced.status().message(), ")"));
  }
  // The table will never announce it (the lock or the round is over, or the table is gone)
  // and never did (the allowance was unused): nobody heard or reported it, so it goes.
  absl::Status deleted = store_.DeleteUnannouncedNote(note.note_id, deadline);
  if (!deleted.ok() && deleted.code() != absl::StatusCode::kNotFound) return deleted;
  if (code == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(absl::StrCat("no_table: no table ", note.table_id));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("no_lock: your recording lock at table ", note.table_id,
                   " ended before the note was announced (", announced.status().message(), ")"));
}

absl::StatusOr<NoteWithAudio> VoiceNotes::GetNote(const std::string& listener,
                                                  const std::string& note_id, absl::Time deadline) {
  const absl::Status no_note = absl::NotFoundError(absl::StrCat("no_note: no note ", note_id));
  if (!ValidId(note_id)) return no_note;
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<NoteRow> note = store_.GetNote(note_id, deadline);
  if (!note.ok()) return note.status();
  if (note->purged) return no_note;
  const absl::Status not_at_table = absl::PermissionDeniedError(
      absl::StrCat("not_at_table: you are not seated at the note's table ", note->table_id));
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<TableView> table = tables_.GetTable(note->table_id, deadline);
  if (!table.ok()) {
    if (table.status().code() == absl::StatusCode::kNotFound) return not_at_table;
    return TableUnavailable(table.status());
  }
  if (!table->Seated(listener)) return not_at_table;
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<std::string> audio = store_.GetAudio(note_id, deadline);
  if (!audio.ok()) return audio.status();
  return NoteWithAudio{.note = *std::move(note), .audio = *std::move(audio)};
}

absl::Status VoiceNotes::CheckVoice(const std::string& player, absl::Time deadline) {
  if (!ValidId(player)) return absl::InvalidArgumentError("bad_request: no player");
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<std::optional<MuteRow>> mute = store_.ActiveMute(player, clock_.Now(), deadline);
  if (!mute.ok()) return mute.status();
  if (mute->has_value()) return MutedError(**mute);
  return absl::OkStatus();
}

absl::StatusOr<bool> VoiceNotes::FileReport(const ReportRequest& request, absl::Time deadline) {
  if (request.key.empty() || request.key.size() > kReportKeyMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad_request: key must be 1..", kReportKeyMax, " characters"));
  }
  if (!ValidId(request.table_id) || !ValidId(request.note_id) || !ValidId(request.author) ||
      !ValidId(request.reporter)) {
    return absl::InvalidArgumentError(
        "bad_request: table_id, note_id, author and reporter must be 1..64 characters of "
        "[A-Za-z0-9_-]");
  }
  if (request.reporter == request.author) {
    return absl::InvalidArgumentError("own_note: nobody reports their own note");
  }
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  absl::StatusOr<NoteRow> note = store_.GetNote(request.note_id, deadline);
  if (!note.ok()) return note.status();
  if (note->table_id != request.table_id || note->author != request.author ||
      (request.round != 0 && note->round != request.round)) {
    return absl::NotFoundError(absl::StrCat("no_note: note ", request.note_id, " is not ",
                                            request.author, "'s at table ", request.table_id));
  }
  if (absl::Status s = CheckDeadline(deadline); !s.ok()) return s;
  bool replayed = false;
  absl::StatusOr<ReportRow> report = store_.FileReport(
      request.key, request.note_id, request.reporter, clock_.Now(), &replayed, deadline);
  if (!report.ok()) return report.status();
  return replayed;
}

}  // namespace courtpiece::moderation
