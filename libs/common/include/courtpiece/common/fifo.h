// Fifo<T>: a first-in first-out queue that holds no memory until something is pushed.
//
//   Fifo<Message> queue;          // no allocation
//   queue.push_back(std::move(m));
//   Message next = std::move(queue.front());
//   queue.pop_front();
//
// Why: libstdc++'s std::deque allocates its map and a 512-byte node when it is constructed,
// even empty: two idle send queues cost every idle gateway connection ~1.1 KiB (heaptrack,
// docs/gateway.md). A ring buffer over a vector instead, whose capacity starts at 0, grows
// by doubling (from 4) and is kept afterwards (a connection that was busy stays ready).
// Contract: front/pop_front on an empty queue is a programmer error (a CHECK).
// Thread-safety: none (as std::deque); the owner locks.
#ifndef COURTPIECE_COMMON_FIFO_H_
#define COURTPIECE_COMMON_FIFO_H_

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "courtpiece/common/check.h"

namespace courtpiece::common {

template <typename T>
class Fifo {
 public:
  Fifo() = default;
  Fifo(Fifo&& other) noexcept { swap(other); }
  Fifo& operator=(Fifo&& other) noexcept {
    Fifo moved(std::move(other));
    swap(moved);
    return *this;
  }
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

  void push_back(T value) {
    if (size_ == slots_.size()) Grow();
    slots_[(head_ + size_) % slots_.size()].emplace(std::move(value));
    ++size_;
  }
  T& front() {
    COURTPIECE_CHECK(size_ > 0, "front of an empty Fifo");
    return *slots_[head_];
  }
  const T& front() const {
    COURTPIECE_CHECK(size_ > 0, "front of an empty Fifo");
    return *slots_[head_];
  }
  void pop_front() {
    COURTPIECE_CHECK(size_ > 0, "pop_front of an empty Fifo");
    slots_[head_].reset();
    head_ = (head_ + 1) % slots_.size();
    --size_;
  }
  // Destroys every element; keeps the capacity.
  void clear() {
    while (size_ > 0) pop_front();
    head_ = 0;
  }
  void swap(Fifo& other) noexcept {
    slots_.swap(other.slots_);
    std::swap(head_, other.head_);
    std::swap(size_, other.size_);
  }

 private:
  static constexpr size_t kFirstCapacity = 4;

  void Grow() {
    std::vector<std::optional<T>> bigger(slots_.empty() ? kFirstCapacity : slots_.size() * 2);
    for (size_t i = 0; i < size_; ++i) {
      bigger[i].emplace(std::move(*slots_[(head_ + i) % slots_.size()]));
    }
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<std::optional<T>> slots_;  // the ring; engaged exactly for the size_ from head_
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_FIFO_H_
