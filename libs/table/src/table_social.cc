// Votes (a bot for a seat, the host's partner swap) and voice notes (RULES.md §4.11, §5).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "courtpiece/table/table.h"

namespace courtpiece::table {

absl::Status Table::AskBot(int s, int target, int64_t now) {
  if (vote_.active) return absl::FailedPreconditionError("a vote is already running");
  if (InRound()) return absl::FailedPreconditionError("ask for a bot between rounds");
  if (target < 0 || target > 3 ||
      (seats_[target].kind != SeatKind::kEmpty && !seats_[target].Away())) {
    return absl::InvalidArgumentError("a bot can only take an empty or waiting seat");
  }
  vote_ = Vote{.active = true,
               .swap = false,
               .seat = target,
               .asker = seats_[s].player,
               .deadline_ms = now + kVoteSilenceMs};
  for (int o = 0; o < 4; ++o) {
    if (o != s && o != target && seats_[o].kind == SeatKind::kPerson) {
      vote_.pending.push_back(seats_[o].player);
    }
  }
  EmitAll({.type = "vote",
           .seat = target,
           .player = vote_.asker,
           .detail = "bot",
           .value = vote_.deadline_ms});
  if (vote_.pending.empty()) ResolveVote(true, now);
  return absl::OkStatus();
}

absl::Status Table::SwapPartner(int s, int target, int64_t now) {
  if (seats_[s].player != host_) return absl::PermissionDeniedError("only the host swaps");
  if (vote_.active) return absl::FailedPreconditionError("a vote is already running");
  if (game_active_) {
    // Swapping mid-game would move a player across teams while the scores stay.
    return absl::FailedPreconditionError("swap partners before a game or between games");
  }
  if (target != (s + 1) % 4 && target != (s + 3) % 4) {
    return absl::InvalidArgumentError("swap with an opponent's seat");
  }
  if (seats_[target].kind == SeatKind::kEmpty) {
    return absl::InvalidArgumentError("that seat is empty");
  }
  vote_ = Vote{.active = true,
               .swap = true,
               .seat = target,
               .asker = seats_[s].player,
               .deadline_ms = now + kVoteSilenceMs};
  // Only the two opponents are asked (§4.2, §4.11 D); the host's partner is not.
  for (int o : {(s + 1) % 4, (s + 3) % 4}) {
    if (seats_[o].kind == SeatKind::kPerson) vote_.pending.push_back(seats_[o].player);
  }
  EmitAll({.type = "vote",
           .seat = target,
           .player = vote_.asker,
           .detail = "swap",
           .value = vote_.deadline_ms});
  if (vote_.pending.empty()) {
    ResolveVote(true, now);
  } else {
    Reschedule(now);  // holds an armed automatic start until the vote is decided
  }
  return absl::OkStatus();
}

absl::Status Table::CastVote(int s, bool yes, int64_t now) {
  const std::string& p = seats_[s].player;
  auto it = std::find(vote_.pending.begin(), vote_.pending.end(), p);
  if (!vote_.active || it == vote_.pending.end()) {
    return absl::FailedPreconditionError("no vote is asking you");
  }
  vote_.pending.erase(it);
  EmitAll({.type = "voted", .seat = s, .player = p, .detail = yes ? "yes" : "no"});
  if (!yes) {
    ResolveVote(false, now);  // one no keeps things as they are
  } else if (vote_.pending.empty()) {
    ResolveVote(true, now);
  }
  return absl::OkStatus();
}

void Table::ResolveVote(bool passed, int64_t now) {
  Vote v = std::move(vote_);
  vote_ = Vote{};
  EmitAll({.type = "vote_result", .seat = v.seat, .detail = passed ? "passed" : "rejected"});
  if (!passed) {
    Reschedule(now);  // a start the vote held goes ahead
    return;
  }
  if (!v.swap) {
    if (seats_[v.seat].Away()) FreeSeat(v.seat, "seat_taken", QuitNow());
    if (seats_[v.seat].kind == SeatKind::kEmpty) {
      seats_[v.seat].kind = SeatKind::kBot;
      seats_[v.seat].player = absl::StrCat("bot-", v.seat);
      EmitAll({.type = "seated", .seat = v.seat, .player = seats_[v.seat].player, .detail = "bot"});
    }
    MaybeFinishEarly(now);  // a holdout replaced by the bot: the others may all have agreed
  } else {
    int hs = SeatOf(v.asker);
    if (hs >= 0 && v.asker == host_ && !game_active_) {
      int partner = (hs + 2) % 4;
      std::swap(seats_[partner], seats_[v.seat]);
      EmitAll(
          {.type = "swapped", .seat = partner, .player = seats_[partner].player, .value = v.seat});
      // The recording lock is the recorder's, not the seat's (§5.2): it moves with them.
      if (recording_seat_ == partner || recording_seat_ == v.seat) {
        recording_seat_ = recording_seat_ == partner ? v.seat : partner;
        EmitAll({.type = "voice_recording",
                 .seat = recording_seat_,
                 .player = seats_[recording_seat_].player,
                 .value = recording_until_ - kVoiceUploadGraceMs});
      }
    }
  }
  Reschedule(now);
}

void Table::BeginVoiceRound(uint64_t round) {
  if (voice_round_ == round) return;
  voice_round_ = round;
  for (SeatState& seat : seats_) seat.voice_used = false;
  voice_used_by_.clear();
}

bool Table::VoiceUsedBy(std::string_view player) const {
  return std::find(voice_used_by_.begin(), voice_used_by_.end(), player) != voice_used_by_.end();
}

absl::Status Table::VoiceStart(int s, int64_t now) {
  if (PeopleSeated() < 2) {
    return absl::FailedPreconditionError("no voice notes with only one person at the table");
  }
  if (recording_seat_ >= 0) {
    return absl::FailedPreconditionError(absl::StrCat("seat ", recording_seat_, " is recording"));
  }
  if (seats_[s].voice_used || VoiceUsedBy(seats_[s].player)) {
    return absl::FailedPreconditionError("one voice note per round");
  }
  seats_[s].voice_used = true;  // a discard or a timeout still uses it (§5.1)
  if (voice_used_by_.size() >= kVoiceUsedByMax) voice_used_by_.erase(voice_used_by_.begin());
  voice_used_by_.push_back(seats_[s].player);
  recording_seat_ = s;
  recording_round_ = voice_round_;
  recording_until_ = now + kVoiceMaxMs + kVoiceUploadGraceMs;
  EmitAll({.type = "voice_recording",
           .seat = s,
           .player = seats_[s].player,
           .value = now + kVoiceMaxMs});
  return absl::OkStatus();
}

absl::Status Table::VoiceSent(int s, const Command& c, int64_t now) {
  if (recording_seat_ != s) return absl::FailedPreconditionError("you are not recording");
  if (c.note_id.empty()) return absl::InvalidArgumentError("note_id is required");
  if (c.duration_ms <= 0 || c.duration_ms > kVoiceMaxMs + kVoiceToleranceMs) {
    return absl::InvalidArgumentError("a voice note lasts 1..7500 ms");
  }
  recording_seat_ = -1;
  recording_until_ = 0;
  std::erase_if(notes_, [&](const VoiceNote& n) { return n.report_until_ms < now; });
  VoiceNote n{.note_id = c.note_id,
              .author = seats_[s].player,
              .author_seat = s,
              .round = recording_round_,
              .play_at_ms = now + kVoicePlayDelayMs};
  // Reports from when it starts playing until 5 s after it ends, both edges included (§5.4).
  n.report_until_ms = n.play_at_ms + c.duration_ms + kVoiceReportWindowMs;
  EmitAll({.type = "voice_note",
           .seat = s,
           .player = n.author,
           .detail = n.note_id,
           .value = n.play_at_ms});
  notes_.push_back(std::move(n));
  return absl::OkStatus();
}

absl::Status Table::VoiceDiscard(int s, int64_t now) {
  if (recording_seat_ != s) return absl::FailedPreconditionError("you are not recording");
  ReleaseVoiceLock(now, "discarded");
  return absl::OkStatus();
}

void Table::ReleaseVoiceLock(int64_t now, std::string_view why) {
  (void)now;
  int s = recording_seat_;
  recording_seat_ = -1;
  recording_until_ = 0;
  EmitAll({.type = "voice_idle", .seat = s, .detail = std::string(why)});
}

const VoiceNote* Table::FindNote(std::string_view note_id) const {
  auto it = std::find_if(notes_.begin(), notes_.end(),
                         [&](const VoiceNote& n) { return n.note_id == note_id; });
  return it == notes_.end() ? nullptr : &*it;
}

absl::Status Table::Report(int s, const Command& c, int64_t now) {
  const std::string& p = seats_[s].player;
  auto it = std::find_if(notes_.begin(), notes_.end(),
                         [&](const VoiceNote& n) { return n.note_id == c.note_id; });
  if (it == notes_.end()) return absl::NotFoundError("no such voice note");
  if (it->author == p) return absl::PermissionDeniedError("nobody reports their own note");
  if (now < it->play_at_ms) return absl::FailedPreconditionError("the note has not played yet");
  if (now > it->report_until_ms) return absl::FailedPreconditionError("the report window closed");
  if (std::find(it->reporters.begin(), it->reporters.end(), p) != it->reporters.end()) {
    return absl::AlreadyExistsError("already reported");
  }
  it->reporters.push_back(p);
  effects_.push_back({.type = EffectType::kReport,
                      .player = p,
                      .note_id = it->note_id,
                      .author = it->author,
                      .note_round = it->round});
  EmitTo(s, {.type = "reported", .seat = it->author_seat, .detail = it->note_id});
  return absl::OkStatus();
}

}  // namespace courtpiece::table
