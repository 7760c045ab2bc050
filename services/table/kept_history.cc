#include "services/table/kept_history.h"

#include <utility>

#include "courtpiece/common/check.h"

namespace courtpiece::table_service {

void KeptHistory::Push(uint64_t seq, std::string_view to_player, std::string_view event_bytes) {
  COURTPIECE_CHECK(index_.empty() || seq > index_.back().seq, "kept events in seq order");
  COURTPIECE_CHECK(event_bytes.size() <= kEventBytesMax, "a kept event of at most 64 KiB");
  const int recipient = Intern(to_player);
  index_.push_back(Entry{.seq = seq,
                         .offset = static_cast<uint32_t>(bytes_.size()),
                         .size = static_cast<uint16_t>(event_bytes.size()),
                         .recipient = static_cast<uint16_t>(recipient)});
  bytes_.append(event_bytes);
}

void KeptHistory::TrimTo(size_t events_max) {
  if (index_.size() <= events_max) return;
  while (index_.size() > events_max) index_.pop_front();
  // Dropped bytes are removed once they are a quarter of the kept ones (a memmove of a few
  // KiB), so the buffer's capacity settles near 1.25x the kept bytes instead of doubling.
  const size_t dead = index_.empty() ? bytes_.size() : index_.front().offset;
  if (4 * dead > bytes_.size() - dead) Compact();
}

int KeptHistory::Find(std::string_view player) const {
  for (size_t i = 0; i < recipients_.size(); ++i) {
    if (recipients_[i] == player) return static_cast<int>(i);
  }
  return -1;
}

int KeptHistory::Intern(std::string_view player) {
  if (int i = Find(player); i >= 0) return i;
  if (recipients_.size() >= kRecipientsMax) Compact();
  // Every kept event goes to one of at most `index_.size()` ids; the table machine has at
  // most four players at a time, so this only fails on a programmer error.
  COURTPIECE_CHECK(recipients_.size() < UINT16_MAX, "kept event recipients");
  recipients_.emplace_back(player);
  return static_cast<int>(recipients_.size()) - 1;
}

void KeptHistory::Compact() {
  const size_t dead = index_.empty() ? bytes_.size() : index_.front().offset;
  bytes_.erase(0, dead);
  std::vector<int> renumbered(recipients_.size(), -1);
  std::vector<std::string> kept;
  for (Entry& e : index_) {
    e.offset -= static_cast<uint32_t>(dead);
    int& to = renumbered[e.recipient];
    if (to < 0) {
      to = static_cast<int>(kept.size());
      kept.push_back(std::move(recipients_[e.recipient]));
    }
    e.recipient = static_cast<uint16_t>(to);
  }
  recipients_ = std::move(kept);
}

size_t KeptHistory::HeapBytesForTest() const {
  size_t n = bytes_.capacity() + index_.size() * sizeof(Entry) +
             recipients_.capacity() * sizeof(std::string);
  for (const std::string& r : recipients_) n += r.capacity() > 15 ? r.capacity() + 1 : 0;
  return n;
}

}  // namespace courtpiece::table_service
