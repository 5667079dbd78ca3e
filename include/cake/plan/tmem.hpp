#pragma once
// The TMEM plan (sm_100a): column offsets of each TMEM region and the allocation size, a power of two
// in [32, 512] covering all regions (hardware-facts §4).
#include "../ir/program.hpp"

namespace cake::plan {

struct tmem_plan {
  int column_of[capacity::tmem]{};
  int used = 0;       // columns the regions need
  int allocated = 0;  // columns tcgen05.alloc asks for (0 when the kernel uses no TMEM)
  bool fits = true;
};

constexpr tmem_plan plan_tmem(const program& p) {
  tmem_plan T;
  for (std::size_t i = 0; i < p.tmem.size(); ++i) {
    T.column_of[i] = T.used;  // stage s of region i starts at column_of[i] + s * columns
    T.used += p.tmem[i].columns * p.tmem[i].stages;
  }
  if (T.used > 0) {
    int a = 32;
    while (a < T.used && a < 512) a *= 2;
    T.allocated = a;
    T.fits = T.used <= 512;
  }
  return T;
}

}  // namespace cake::plan
