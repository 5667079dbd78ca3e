#pragma once
// The in-memory table of an entry point's compiled kernels (cake::gemm, cake::softmax, cake::kmeans...):
// one build per key, and a build holds only its own key. A thread asking for a kernel that is being
// built waits for that build; a thread asking for another kernel does not (with one lock around the
// table, a first call that JIT-compiles for seconds stalled every other thread's calls, even for kernels
// already built). A build that throws leaves its key empty: the next call builds again.
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace cake {

template <class Key, class Value>
class kernel_table {
 public:
  // The value for `key`, made by build() on the first call. The reference stays valid for the life of
  // the table (entries are never removed).
  template <class Build>
  const Value& get(const Key& key, Build&& build) {
    std::shared_ptr<slot> s;
    {
      std::lock_guard lock(table_mutex_);
      auto& p = slots_[key];
      if (!p) p = std::make_shared<slot>();
      s = p;
    }
    std::lock_guard building(s->mutex);
    if (!s->value) s->value.emplace(build());
    return *s->value;
  }

 private:
  struct slot {
    std::mutex mutex;
    std::optional<Value> value;
  };
  std::mutex table_mutex_;
  std::map<Key, std::shared_ptr<slot>> slots_;
};

}  // namespace cake
