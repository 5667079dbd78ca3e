// Unit tests for cake/runtime/kernel_table.hpp: one build per key, a build holds only its own key, a
// failed build is tried again.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <cake/runtime/kernel_table.hpp>

namespace {
using clock_type = std::chrono::steady_clock;
}

TEST_CASE("kernel table: concurrent requests for one key build it once and all get the same value") {
  cake::kernel_table<int, std::string> table;
  std::atomic<int> builds{0};
  std::vector<const std::string*> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      got[static_cast<std::size_t>(t)] = &table.get(7, [&] {
        ++builds;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        return std::string("seven");
      });
    });
  for (auto& th : threads) th.join();
  CHECK(builds == 1);
  for (const auto* p : got) CHECK(p == got[0]);
  CHECK(*got[0] == "seven");
}

TEST_CASE("kernel table: a build in progress holds only its own key") {
  // Key 1's build waits (up to 5 s) for key 2's build to have run; with one lock around the whole table
  // (the entry points' tables before) key 2 could not start until key 1 finished: the wait times out.
  cake::kernel_table<int, int> table;
  std::atomic<bool> second_built{false};
  bool first_saw_second = false;
  std::thread first([&] {
    table.get(1, [&] {
      const auto until = clock_type::now() + std::chrono::seconds(5);
      while (!second_built && clock_type::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      first_saw_second = second_built;
      return 1;
    });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the first build start
  CHECK(table.get(2, [&] {
    second_built = true;
    return 2;
  }) == 2);
  first.join();
  CHECK(first_saw_second);
}

TEST_CASE("kernel table: a build that throws leaves the key empty, and the next request builds again") {
  cake::kernel_table<int, int> table;
  int attempts = 0;
  CHECK_THROWS_AS(table.get(3, [&]() -> int {
    ++attempts;
    throw std::runtime_error("NVRTC failed");
  }),
                  std::runtime_error);
  CHECK(table.get(3, [&] {
    ++attempts;
    return 33;
  }) == 33);
  CHECK(attempts == 2);
  CHECK(table.get(3, [&] {
    ++attempts;
    return 0;
  }) == 33);  // built: not called again
  CHECK(attempts == 2);
}
