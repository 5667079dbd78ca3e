#pragma once
// The in-memory table of an entry point's compiled kernels (cake::gemm, cake::softmax, cake::kmeans...):
// one build per key, and a build holds only its own key. A thread asking for a kernel that is being
// built waits for that build; a thread asking for another kernel does not (with one lock around the
// table, a first call that JIT-compiles for seconds stalled every other thread's calls, even for kernels
// already built). A build that throws leaves its key empty: the next call builds again.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>

namespace cake {

template <class Key, class Value>
class kernel_table {
 public:
  // The value for `key`, made by build() on the first call. The reference stays valid for the life of
  // the table (entries are never removed). A hit takes the table's lock shared (hits never wait for each
  // other, nor for a build: builds hold only their slot's mutex) and reads the slot's published value
  // with one acquire load.
  template <class Build>
  const Value& get(const Key& key, Build&& build) {
    slot* s = nullptr;
    {
      std::shared_lock read(table_mutex_);
      auto it = slots_.find(key);
      if (it != slots_.end()) s = it->second.get();
    }
    if (!s) {
      std::unique_lock write(table_mutex_);
      auto& p = slots_[key];
      if (!p) p = std::make_unique<slot>();
      s = p.get();
    }
    if (const Value* v = s->ready.load(std::memory_order_acquire)) return *v;
    std::lock_guard building(s->mutex);
    if (!s->value) {
      s->value.emplace(build());
      s->ready.store(&*s->value, std::memory_order_release);
    }
    return *s->value;
  }

 private:
  struct slot {
    std::mutex mutex;
    std::optional<Value> value;
    std::atomic<const Value*> ready{nullptr};  // &*value once built
  };
  std::shared_mutex table_mutex_;
  std::map<Key, std::unique_ptr<slot>> slots_;  // map nodes and slots never move
};

}  // namespace cake
