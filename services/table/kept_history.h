// KeptHistory: the last events a hosted table published, kept so that a client that
// reconnects with `last_seq` gets exactly the events it missed (docs/table-service.md,
// "Resume"). Every event of the table machine goes to one player (an event for everyone
// is one event per seat), so a table keeps `events_max` (256) of them: about one round.
//
// Compact, because a table service hosts thousands of tables: the events' bytes live in
// one buffer per table, each event is a 16-byte index entry, and the few player ids that
// events go to are stored once (an index into them per event) instead of once per event.
// About 16 bytes + the event's own bytes per event, where a deque of {seq, player string,
// event string} cost about 170.
//
// Contract: events are pushed in strictly increasing seq order; TrimTo keeps the newest.
// Not thread-safe (the table's worker owns it).
#ifndef COURTPIECE_SERVICES_TABLE_KEPT_HISTORY_H_
#define COURTPIECE_SERVICES_TABLE_KEPT_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace courtpiece::table_service {

class KeptHistory {
 public:
  // Appends an event (its TableEvent bytes, at most 65,535) for `to_player`. `seq` must be
  // greater than every kept seq. Both are checked: a programmer error otherwise.
  void Push(uint64_t seq, std::string_view to_player, std::string_view event_bytes);
  // Drops the oldest events until at most `events_max` remain.
  void TrimTo(size_t events_max);

  size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  uint64_t front_seq() const { return index_.empty() ? 0 : index_.front().seq; }
  uint64_t back_seq() const { return index_.empty() ? 0 : index_.back().seq; }

  // Calls f(seq, event_bytes) for every kept event to `player` with seq > `after_seq`,
  // oldest first; stops early when f returns false. Returns false iff f did.
  template <typename F>
  bool ForEachAfter(uint64_t after_seq, std::string_view player, F&& f) const {
    const int recipient = Find(player);
    if (recipient < 0) return true;
    for (const Entry& e : index_) {
      if (e.seq <= after_seq || e.recipient != recipient) continue;
      if (!f(e.seq, std::string_view(bytes_).substr(e.offset, e.size))) return false;
    }
    return true;
  }

  // Heap bytes held (buffer, index, player ids): for tests and the memory figures.
  size_t HeapBytesForTest() const;

 private:
  struct Entry {
    uint64_t seq = 0;
    uint32_t offset = 0;  // into bytes_
    uint16_t size = 0;
    uint16_t recipient = 0;  // index into recipients_
  };
  static constexpr size_t kEventBytesMax = UINT16_MAX;
  static constexpr size_t kRecipientsMax = 64;  // then unused ids are dropped

  int Find(std::string_view player) const;
  int Intern(std::string_view player);
  // Drops the bytes before the oldest kept event and the ids no kept event goes to.
  void Compact();

  std::deque<Entry> index_;
  // The events' bytes in seq order; those before index_.front().offset are dropped ones,
  // removed by Compact once they are a quarter of the kept ones.
  std::string bytes_;
  std::vector<std::string> recipients_;
};

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_KEPT_HISTORY_H_
