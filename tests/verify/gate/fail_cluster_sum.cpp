// A cluster_sum in a loop whose trip count depends on the cluster rank fails the compile-time gate,
// naming the rule and the op (op#3: the cluster_reduce inside loop k2).
// GATE: sync.cluster-sum-divergent op 3
#define CAKE_VERIFY_GATE
#include "cases/sync_cluster_sum.hpp"

static_assert(cake::verify(verify_corpus::sync_cluster_sum_divergent::bad()));
