// FifoSlots (server/fifo_slots.hpp): at most N holders, admitted in arrival order.
#include "server/fifo_slots.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuplan::server {
namespace {

void wait_for_waiting(const FifoSlots& s, std::size_t n) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (s.waiting() < n && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  ASSERT_EQ(s.waiting(), n);
}

TEST(FifoSlots, OneSlotAdmitsWaitersInArrivalOrder) {
  FifoSlots slots(1);
  std::mutex m;
  std::vector<int> order;
  std::vector<std::thread> threads;
  {
    const FifoSlots::Hold first(slots);  // the slot is taken: every thread below queues
    for (int i = 0; i < 6; ++i) {
      threads.emplace_back([&, i] {
        const FifoSlots::Hold h(slots);
        std::lock_guard lock(m);
        order.push_back(i);
      });
      wait_for_waiting(slots, static_cast<std::size_t>(i) + 1);  // thread i holds ticket i + 1
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(slots.waiting(), 0u);
}

TEST(FifoSlots, NeverMoreHoldersThanSlots) {
  FifoSlots slots(3);
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 200; ++k) {
        const FifoSlots::Hold h(slots);
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::yield();
        --inside;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(most.load(), 3);
  EXPECT_GE(most.load(), 1);
}

TEST(FifoSlots, FreeSlotsDoNotWait) {
  FifoSlots slots(2);
  const FifoSlots::Hold a(slots);
  const FifoSlots::Hold b(slots);  // would block forever if the second slot were not free
  EXPECT_EQ(slots.waiting(), 0u);
}

}  // namespace
}  // namespace gpuplan::server
