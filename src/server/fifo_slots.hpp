#pragma once
/// FifoSlots: at most N holders at once, admitted in arrival order.
///
/// `gpuplan serve` runs its computations (POST /api/size, plan, estimate) under one of these with
/// N = --compute-threads (default: the machine's hardware threads): cpp-httplib keeps a worker
/// thread per keep-alive connection, and without a limit 16 connections time-share 2 cores, so a
/// long plan takes 8 times its CPU time and the tail latency follows (docs/server.md "Speed").
///
/// Order: a caller finding no free slot joins a queue; a release hands its slot straight to the
/// queue's first waiter. std::counting_semaphore promises no order (a thread woken late can lose
/// its turn again and again): measured under 16 connections on 2 slots, that starved requests
/// into a p99 far above the median. Thread-safe; a Hold is released by its destructor
/// (exceptions included).
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

namespace gpuplan::server {

class FifoSlots {
 public:
  /// `slots` >= 1 (0 is taken as 1).
  explicit FifoSlots(std::size_t slots) : free_(slots > 0 ? slots : 1) {}
  FifoSlots(const FifoSlots&) = delete;
  FifoSlots& operator=(const FifoSlots&) = delete;

  /// Blocks until this caller's turn, then holds one slot until destroyed.
  class Hold {
   public:
    explicit Hold(FifoSlots& s) : s_(s) {
      std::unique_lock lock(s_.m_);
      if (s_.free_ > 0 && s_.queue_.empty()) {
        --s_.free_;
        return;
      }
      Waiter w;
      s_.queue_.push_back(&w);
      w.cv.wait(lock, [&] { return w.admitted; });
    }
    /// Hands the slot to the first waiter, waking that one thread only (a wake-up of every waiter
    /// on each release cost the server a quarter of its plans per second with 16 connections).
    ~Hold() {
      std::lock_guard lock(s_.m_);
      if (s_.queue_.empty()) {
        ++s_.free_;
        return;
      }
      Waiter* next = s_.queue_.front();
      s_.queue_.pop_front();
      next->admitted = true;
      next->cv.notify_one();  // under the lock: the waiter (on its own stack) cannot leave before
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    FifoSlots& s_;
  };

  /// Callers blocked waiting for a slot now (for tests and diagnostics).
  std::size_t waiting() const {
    std::lock_guard lock(m_);
    return queue_.size();
  }

 private:
  struct Waiter {
    std::condition_variable cv;
    bool admitted = false;
  };
  mutable std::mutex m_;
  std::size_t free_;             ///< slots not held
  std::deque<Waiter*> queue_;    ///< waiters in arrival order
};

}  // namespace gpuplan::server
