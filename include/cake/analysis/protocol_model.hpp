#pragma once
// The state of the abstract protocol executor (protocol.hpp runs it).
//
// Every unit (warp or warpgroup) of every role is a process walking its role's op list, loops unrolled.
// Processes talk through barrier phases (mbarriers, pipeline full/empty rings, named barriers, the
// cluster barrier). Ordering is tracked with vector clocks whose components are
//   - one per unit: how far that unit had got (its own op count),
//   - one per mbarrier object: how many of its phases had completed,
//   - one per unit and async engine (wgmma groups, cp.async groups, TMA-store groups, tcgen05 ops):
//     how many of that unit's async operations had completed.
// An async operation's effect (a TMA write, a wgmma read, a tcgen05.mma write) is stamped with the
// component and value at which it completes; whoever's clock reaches the stamp may rely on it. Every
// smem/TMEM stage keeps a short history of writes and reads with their stamps and rectangles, so that a
// read not ordered after its write (race) and a write not ordered after earlier reads (WAR) are found
// at the op where they happen, whatever the interleaving that the executor happens to pick.
//
// All storage is sized from the Program at setup (constexpr new/delete), so that constant evaluation in
// cake::verify only pays for what the schedule declares.
#include "context.hpp"

namespace cake::analysis::proto {

inline constexpr int max_units = 32;    // 1024 threads / 32
inline constexpr int max_depth = 8;     // loop nesting
inline constexpr int max_records = 32;  // access history per smem/TMEM stage

template <class T>
struct buffer {
  T* data = nullptr;
  int size = 0;
  constexpr buffer() = default;
  constexpr buffer(const buffer&) = delete;
  constexpr buffer& operator=(const buffer&) = delete;
  constexpr ~buffer() { delete[] data; }
  constexpr void reset(int n) {
    delete[] data;
    size = n;
    data = n > 0 ? new T[n]{} : nullptr;
  }
  constexpr T& operator[](int i) { return data[i]; }
  constexpr const T& operator[](int i) const { return data[i]; }
};

// When an effect is complete: whoever's clock component `comp` reaches `value`. comp < 0: never yet.
struct stamp {
  int comp = -1;
  int value = 0;
  constexpr bool valid() const { return comp >= 0; }
};

enum access_flag : std::uint8_t {
  acc_write = 1u << 0,
  acc_async = 1u << 1,       // performed by the async proxy (TMA, wgmma, tcgen05.mma)
  acc_generic = 1u << 2,     // a generic-proxy write (st.shared, stmatrix, cp.async): async readers need a proxy fence
  acc_store_read = 1u << 3,  // the source read of a TMA store (reuse is guarded by bulk_wait_read)
  acc_mma = 1u << 4,         // written by an MMA (an accumulator in TMEM)
  acc_pending = 1u << 5,     // a share of a joint write that its unit has not written yet
};

struct rect {
  int r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  constexpr bool overlaps(const rect& o) const { return r0 < o.r1 && o.r0 < r1 && c0 < o.c1 && o.c0 < c1; }
  constexpr bool covers(const rect& o) const { return r0 <= o.r0 && o.r1 <= r1 && c0 <= o.c0 && o.c1 <= c1; }
  friend constexpr bool operator==(const rect&, const rect&) = default;
};

struct access_rec {
  std::int16_t op = -1;
  std::uint8_t unit = 0;
  std::uint8_t flags = 0;
  rect area{};
  stamp done{};       // complete (written / read) for whoever reaches this
  stamp fence{};      // generic writes: the writer's fence.proxy.async after it
  stamp prev{};       // writes: completion of the write this one replaced (tells WAR from race)
  std::int16_t prev_op = -1;
  int gen = 0;        // the object's write generation the access belongs to
  int instance = 0;   // joint writes: which execution of the op (loop iterations)
  constexpr bool is(access_flag f) const { return (flags & f) != 0; }
};

struct memory_object {
  access_rec recs[max_records]{};
  int count = 0;
  int gen = 0;
  // accumulator state (TMEM stages written by tcgen05.mma)
  bool written = false;
  int init_tile = -1;
  int unread_mma = -1;  // the tcgen05.mma whose result nothing has read yet (dataflow.dead-accumulation)
  int unread_unit = -1;  // the unit that issued it
};

struct frame {
  int op = 0;
  int iter = 0;
  int trips = 0;
};

enum class block_kind : std::uint8_t { none, mbarrier, named, cluster };

struct unit_state {
  int role = 0, index = 0;  // role and unit index inside it
  int first_warp = 0, threads = 0;
  int pc = 0, end = 0;
  frame stack[max_depth]{};
  int depth = 0;
  bool finished = false;
  int tile_iter = -1;  // iteration of the innermost tile loop, -1 outside
  // what a blocked unit waits for (for the deadlock report)
  block_kind blocked = block_kind::none;
  int blocked_obj = -1, blocked_phase = 0;
  // named/cluster barrier: arrived and now waiting for generation > sync_gen
  int sync_inst = -1, sync_gen = 0;
  int cluster_gen = -1;         // generation of the unit's last cluster_arrive
  int cluster_passed = 0;       // generations of the cluster barrier this unit has waited through
  // async engines: agent clock components (-1 = the unit never uses that engine)
  int wg_agent = -1, cp_agent = -1, bulk_agent = -1, tc_agent = -1;
  bool wg_fenced = false;
  int wg_open = 0, wg_committed = 0, last_wgmma = -1;
  int cp_committed = 0;
  int bulk_open = 0, bulk_committed = 0, last_store = -1;
  int tc_issued = 0, tc_committed = 0, last_tc_mma = -1;
  bool tc_after_needed = false, tc_before_needed = false;
  unsigned wg_regs = 0;  // register tiles this unit's wgmmas use (a fence is needed after others touch them)
  // stages held by deferred releases (release(...).later(n)), oldest first
  static constexpr int max_pending = 8;
  int pend_op[max_pending]{}, pend_pipe[max_pending]{}, pend_stage[max_pending]{};
  int npend = 0;
  bool cr_arrived = false;  // a cluster sum: this unit has signalled 'ready' and waits for the peers
  int unit_epoch = 0;  // bar.sync / cluster waits this unit has passed: each orders all its threads
};

struct barrier_state {
  bool initialized = false;
  int init_count = 0;
  int pending = 0;
  int tx = 0;  // expected minus delivered bytes of the current phase
  int completed = 0;
  int phase_expected = 0, phase_delivered = 0;
  int last_expect_op = -1, last_tx_op = -1, last_arrive_op = -1;
  // manual initialization
  int init_op = -1, init_unit = -1, init_clock = 0;
  stamp fence{};
  int visible_gen = -1;  // cluster-barrier generation after which other CTAs may use it
  unsigned arrivers = 0;  // units that have an op arriving on it (statically)
  unsigned phase_arrived = 0;  // units that arrived in the current phase
};

struct named_state {
  int expected = 0;  // threads per generation
  int arrived = 0;
  int gen = 0;
  unsigned users = 0;  // units that use this hardware barrier
  int decl = -1;       // named barrier declaration (-1: the cluster barrier)
};

struct reg_state {
  bool written = false;
  int init_tile = -1;
  int wg_group = 0;  // group of the last wgmma writing it (pending until the unit's wg agent reaches it)
  int wg_read_group = 0;  // group of the last wgmma reading it as its A operand (registers)
  int wg_reader = -1;     // that wgmma's op id
  int unread_mma = -1;  // the MMA whose result (the whole tile) nothing has read yet (dataflow.dead-accumulation)
};

}  // namespace cake::analysis::proto
