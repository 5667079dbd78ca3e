#pragma once
// Hardware named-barrier ids (bar.sync id, count). Id 0 is left to __syncthreads; a shared barrier
// gets one id, a per-unit barrier one id per unit of each role that uses it. The thread count is the
// declared one, or the threads of the roles (per-unit: of one unit) that use it.
#include "../ir/program.hpp"
#include "fragments.hpp"

namespace cake::plan {

struct named_barrier_slot {
  int first_id[capacity::roles]{};  // per role: the id of unit 0 (per-unit) or the shared id; -1 if unused
  int threads = 0;                  // participants of one hardware barrier
  bool per_unit = false;
};

struct named_barrier_plan {
  named_barrier_slot barriers[capacity::named_barriers]{};
  int ids_used = 1;  // including id 0
  // Derived per-unit barriers of roles whose row reductions cross warps: the id of unit 0, -1 if none.
  int reduce_first_id[capacity::roles]{};
};

constexpr bool role_uses_named(const program& p, int role, int nb) {
  for (const auto& o : p.ops)
    if (o.role == role && o.d.kind == operand_kind::named_barrier && o.d.index == nb) return true;  // syncs, arrives, turns
  return false;
}

constexpr named_barrier_plan plan_named_barriers(const program& p) {
  named_barrier_plan P;
  for (std::size_t b = 0; b < p.named_barriers.size(); ++b) {
    auto& s = P.barriers[b];
    const auto& d = p.named_barriers[b];
    s.per_unit = d.per_unit;
    int shared_id = -1, threads = 0;
    for (std::size_t r = 0; r < p.roles.size(); ++r) {
      s.first_id[r] = -1;
      if (!role_uses_named(p, static_cast<int>(r), static_cast<int>(b))) continue;
      if (d.per_unit) {
        s.first_id[r] = P.ids_used;
        P.ids_used += p.roles[r].count;
        threads = (p.roles[r].unit == role_unit::warpgroup ? 128 : 32) * (d.turns ? 2 : 1);  // turns: taker + passer
      } else {
        if (shared_id < 0) shared_id = P.ids_used++;
        s.first_id[r] = shared_id;
        threads += p.roles[r].threads();
      }
    }
    s.threads = d.threads ? d.threads : threads;
  }
  const fragment_plan F = plan_fragments(p);
  for (std::size_t r = 0; r < capacity::roles; ++r) {
    P.reduce_first_id[r] = -1;
    if (r >= p.roles.size() || !F.unit_barrier[r]) continue;
    P.reduce_first_id[r] = P.ids_used;
    P.ids_used += p.roles[r].count;
  }
  return P;
}

}  // namespace cake::plan
