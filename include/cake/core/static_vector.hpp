#pragma once
// A fixed-capacity vector usable in constant evaluation and storable in constexpr variables (C++20's
// std::vector is transient-only). Overflow is reported by the caller (the builder turns it into a
// compile-time error or a recorded build error); push_back itself never writes out of bounds.
#include <cstddef>

namespace cake {

template <class T, std::size_t Capacity>
struct static_vector {
  T items[Capacity]{};
  std::size_t count = 0;

  static constexpr std::size_t capacity() { return Capacity; }
  constexpr std::size_t size() const { return count; }
  constexpr bool empty() const { return count == 0; }
  constexpr bool full() const { return count == Capacity; }

  // Returns false (and stores nothing) when full.
  constexpr bool push_back(const T& v) {
    if (count == Capacity) return false;
    items[count++] = v;
    return true;
  }
  constexpr T& operator[](std::size_t i) { return items[i]; }
  constexpr const T& operator[](std::size_t i) const { return items[i]; }
  constexpr T& back() { return items[count - 1]; }
  constexpr const T& back() const { return items[count - 1]; }
  constexpr T* begin() { return items; }
  constexpr T* end() { return items + count; }
  constexpr const T* begin() const { return items; }
  constexpr const T* end() const { return items + count; }
};

}  // namespace cake
