#include "services/moderation/fake_ports.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace courtpiece::moderation {

void FakeTablePort::AddTable(const std::string& table_id, uint64_t round) {
  std::lock_guard<std::mutex> lock(mu_);
  Table& t = tables_[table_id];
  t.view.table_id = table_id;
  t.view.round = round;
  t.view.phase = "playing";
  t.view.seats.clear();
  for (int seat = 0; seat < 4; ++seat) t.view.seats.push_back({.seat = seat, .kind = "empty"});
}

void FakeTablePort::RemoveTable(const std::string& table_id) {
  std::lock_guard<std::mutex> lock(mu_);
  tables_.erase(table_id);
}

void FakeTablePort::Seat(const std::string& table_id, int seat, const std::string& player,
                         const std::string& kind) {
  std::lock_guard<std::mutex> lock(mu_);
  Table* t = Find(table_id);
  if (t == nullptr || seat < 0 || seat >= static_cast<int>(t->view.seats.size())) return;
  t->view.seats[seat] = {.seat = seat, .kind = kind, .player = player};
}

void FakeTablePort::Unseat(const std::string& table_id, const std::string& player) {
  std::lock_guard<std::mutex> lock(mu_);
  Table* t = Find(table_id);
  if (t == nullptr) return;
  for (SeatView& s : t->view.seats) {
    if (s.player == player) s = {.seat = s.seat, .kind = "empty"};
  }
}

void FakeTablePort::GiveLock(const std::string& table_id, const std::string& player) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Table* t = Find(table_id)) t->lock_holder = player;
}

void FakeTablePort::DropLock(const std::string& table_id, bool use_allowance) {
  std::lock_guard<std::mutex> lock(mu_);
  Table* t = Find(table_id);
  if (t == nullptr) return;
  if (use_allowance && !t->lock_holder.empty()) t->allowance_used.insert(t->lock_holder);
  t->lock_holder.clear();
}

void FakeTablePort::NextRound(const std::string& table_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Table* t = Find(table_id);
  if (t == nullptr) return;
  ++t->view.round;
  t->lock_holder.clear();
  t->allowance_used.clear();
}

void FakeTablePort::ForgetAnnounced(const std::string& table_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Table* t = Find(table_id)) t->forgotten = t->announced.size();
}

void FakeTablePort::FailNext(Method method, absl::Status status, int times) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < times; ++i) failures_[method].push_back(status);
}

std::vector<Announcement> FakeTablePort::announced(const std::string& table_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tables_.find(table_id);
  return it == tables_.end() ? std::vector<Announcement>{} : it->second.announced;
}

int FakeTablePort::calls(Method method) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

absl::Status FakeTablePort::Injected(Method method) {
  ++calls_[method];
  std::deque<absl::Status>& q = failures_[method];
  if (q.empty()) return absl::OkStatus();
  absl::Status s = q.front();
  q.pop_front();
  return s;
}

FakeTablePort::Table* FakeTablePort::Find(const std::string& table_id) {
  auto it = tables_.find(table_id);
  return it == tables_.end() ? nullptr : &it->second;
}

absl::StatusOr<VoiceLock> FakeTablePort::CheckVoiceLock(const std::string& table_id,
                                                        const std::string& player, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(Method::kCheckVoiceLock); !s.ok()) return s;
  Table* t = Find(table_id);
  if (t == nullptr) return absl::NotFoundError(absl::StrCat("unknown table ", table_id));
  VoiceLock out{.round = t->view.round};
  int others = 0;
  for (const SeatView& s : t->view.seats) {
    if (s.kind != "person") continue;
    if (s.player == player) {
      out.seat = s.seat;
    } else {
      ++others;
    }
  }
  if (out.seat < 0) {
    out.reason = "not_seated";
  } else if (others == 0) {
    out.reason = "alone";
  } else if (t->allowance_used.contains(player)) {
    out.reason = "allowance_used";
  } else if (t->lock_holder != player) {
    out.reason = "no_lock";
  } else {
    out.may_send = true;
  }
  return out;
}

absl::StatusOr<Announced> FakeTablePort::AnnounceVoiceNote(const Announcement& note, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(Method::kAnnounceVoiceNote); !s.ok()) return s;
  Table* t = Find(note.table_id);
  if (t == nullptr) return absl::NotFoundError(absl::StrCat("unknown table ", note.table_id));
  if (note.duration_ms < 1 || note.duration_ms > 7500 || note.note_id.empty()) {
    return absl::InvalidArgumentError("malformed announcement");
  }
  const int64_t play_at_ms =
      clock_ == nullptr ? 0 : absl::ToUnixMillis(clock_->Now() + absl::Seconds(1));
  for (size_t i = t->forgotten; i < t->announced.size(); ++i) {
    if (t->announced[i].note_id == note.note_id) {
      return Announced{.play_at_ms = play_at_ms, .replayed = true};
    }
  }
  if (note.round != t->view.round) {
    return absl::FailedPreconditionError(
        absl::StrCat("round_over: round ", note.round, " is over at table ", note.table_id));
  }
  if (t->lock_holder != note.player || t->allowance_used.contains(note.player)) {
    return absl::FailedPreconditionError(
        absl::StrCat("no_lock: ", note.player, " does not hold the recording lock"));
  }
  t->allowance_used.insert(note.player);
  t->lock_holder.clear();
  t->announced.push_back(note);
  return Announced{.play_at_ms = play_at_ms, .replayed = false};
}

absl::StatusOr<TableView> FakeTablePort::GetTable(const std::string& table_id, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = Injected(Method::kGetTable); !s.ok()) return s;
  Table* t = Find(table_id);
  if (t == nullptr) return absl::NotFoundError(absl::StrCat("unknown table ", table_id));
  return t->view;
}

void FakeLobbyPort::AddPlayer(LobbyPlayer player, std::vector<LobbyQuit> quits) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string id = player.player_id;
  players_[id] = {std::move(player), std::move(quits)};
}

void FakeLobbyPort::SetFailure(absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  failure_ = std::move(status);
}

std::string FakeLobbyPort::last_authorization() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_authorization_;
}

absl::StatusOr<LobbyPlayer> FakeLobbyPort::GetPlayer(const std::string& authorization,
                                                     const std::string& player_id, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  last_authorization_ = authorization;
  if (!failure_.ok()) return failure_;
  auto it = players_.find(player_id);
  if (it == players_.end()) return absl::NotFoundError(absl::StrCat("unknown player ", player_id));
  return it->second.first;
}

absl::StatusOr<std::vector<LobbyQuit>> FakeLobbyPort::ListQuits(const std::string& authorization,
                                                                const std::string& player_id,
                                                                int limit, absl::Time) {
  std::lock_guard<std::mutex> lock(mu_);
  last_authorization_ = authorization;
  if (!failure_.ok()) return failure_;
  auto it = players_.find(player_id);
  if (it == players_.end()) return std::vector<LobbyQuit>{};
  std::vector<LobbyQuit> out = it->second.second;
  if (static_cast<int>(out.size()) > limit) out.resize(limit);
  return out;
}

}  // namespace courtpiece::moderation
