#pragma once
/// FifoSlots: at most N holders at once, admitted in arrival order.
///
/// `gpuplan serve` runs its computations (POST /api/size, plan, estimate) under one of these with
/// N = --compute-threads (default: the machine's hardware threads): cpp-httplib keeps a worker
/// thread per keep-alive connection, and without a limit 16 connections time-share 2 cores, so a
/// long plan takes 8 times its CPU time and the tail latency follows (docs/server.md "Speed").
///
/// Order: each caller takes a ticket; ticket t runs once t < N + (holds released so far).
/// std::counting_semaphore promises no order (a thread woken late can lose its turn again and
/// again): measured under 16 connections on 2 slots, that starved requests into a p99 far above
/// the median. Thread-safe; a Hold is released by its destructor (exceptions included).
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace gpuplan::server {

class FifoSlots {
 public:
  /// `slots` >= 1 (0 is taken as 1).
  explicit FifoSlots(std::size_t slots) : admitted_(slots > 0 ? slots : 1) {}
  FifoSlots(const FifoSlots&) = delete;
  FifoSlots& operator=(const FifoSlots&) = delete;

  /// Blocks until this caller's turn, then holds one slot until destroyed.
  class Hold {
   public:
    explicit Hold(FifoSlots& s) : s_(s) {
      std::unique_lock lock(s_.m_);
      const std::uint64_t ticket = s_.next_ticket_++;
      if (ticket >= s_.admitted_) {
        ++s_.waiting_;
        s_.cv_.wait(lock, [&] { return ticket < s_.admitted_; });
        --s_.waiting_;
      }
    }
    ~Hold() {
      {
        std::lock_guard lock(s_.m_);
        ++s_.admitted_;
      }
      s_.cv_.notify_all();
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    FifoSlots& s_;
  };

  /// Callers blocked waiting for a slot now (for tests and diagnostics).
  std::size_t waiting() const {
    std::lock_guard lock(m_);
    return waiting_;
  }

 private:
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::uint64_t next_ticket_ = 0;
  std::uint64_t admitted_;  ///< tickets below this may run
  std::size_t waiting_ = 0;
};

}  // namespace gpuplan::server
