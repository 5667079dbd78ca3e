// tensor_view (runtime/kernel.hpp) refuses more dims than a tensor has and a stride list of another
// length, instead of writing past its arrays or silently using packed strides.
#include <doctest/doctest.h>

#include <cake/cake.hpp>
#include <cake/runtime/kernel.hpp>
#include <string>

using cake::tensor_view;

TEST_CASE("tensor_view: dims and strides as given, packed strides when none are") {
  const auto t = tensor_view(nullptr, {3, 4, 5}, {40, 10, 1});
  CHECK(t.rank == 3);
  CHECK(t.strides[0] == 40);
  CHECK(t.strides[1] == 10);
  const auto p = tensor_view(nullptr, {3, 4, 5});
  CHECK(p.strides[0] == 20);
  CHECK(p.strides[1] == 5);
  CHECK(p.strides[2] == 1);
  CHECK(tensor_view(nullptr, {2, 3, 4, 5}).rank == cake::tensor_arg::max_rank);
}

TEST_CASE("tensor_view: more dims than a tensor has, or strides for another number of dims, are argument errors") {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const cake::jit::argument_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message([] { (void)tensor_view(nullptr, {1, 2, 3, 4, 5}); }) == "tensor_view: 5 dims; a tensor has at most 4");
  CHECK(message([] { (void)tensor_view(nullptr, {8, 8}, {8}); }) ==
        "tensor_view: 1 strides for 2 dims (give one stride per dim, or none for a packed tensor)");
}

TEST_CASE("CAKE_CLUSTER_EXIT: the caller's way (drain by default) unless the variable names one, another value refused naming the variable") {
  using cake::runtime_detail::cluster_exit_for;
  using exit_kind = cake::lower::emit_options::exit_mode;
  CHECK(cake::lower::emit_options{}.cluster_exit == exit_kind::drain);
  CHECK(cluster_exit_for(exit_kind::drain, 0) == exit_kind::drain);  // unset: as asked
  CHECK(cluster_exit_for(exit_kind::barrier, 0) == exit_kind::barrier);
  CHECK(cluster_exit_for(exit_kind::drain, 2) == exit_kind::barrier);  // CAKE_CLUSTER_EXIT=barrier
  CHECK(cluster_exit_for(exit_kind::barrier, 1) == exit_kind::drain);  // CAKE_CLUSTER_EXIT=drain
  try {
    (void)cluster_exit_for(exit_kind::drain, -1);
    FAIL("an unknown value was accepted");
  } catch (const cake::jit::argument_error& e) {
    CHECK(std::string(e.what()).find("CAKE_CLUSTER_EXIT") != std::string::npos);
  }
}

TEST_CASE("tensor maps: 256-byte L2 promotion, none for a streamed tensor, CAKE_TMA_L2_PROMOTION over both") {
  using cake::jit::tma_l2_promotion;
  using cake::runtime_detail::tma_l2_promotion_for;
  auto k = cake::kernel("streamed_probe").target(cake::sm_90a);
  auto [R, C] = k.dims("R", "C");
  auto X = k.input<cake::bf16>("X", cake::dims(R, C));
  auto Y = k.input<cake::bf16>("Y", cake::dims(R, C));
  k.streamed(Y);
  const auto& x = k.p.tensors[X.index];
  const auto& y = k.p.tensors[Y.index];
  CHECK_FALSE(x.streamed);
  CHECK(y.streamed);
  CHECK(tma_l2_promotion_for(x, -2) == tma_l2_promotion::b256);  // unset: what the program asks for
  CHECK(tma_l2_promotion_for(y, -2) == tma_l2_promotion::none);
  CHECK(tma_l2_promotion_for(x, 0) == tma_l2_promotion::none);  // the switch wins
  CHECK(tma_l2_promotion_for(y, 128) == tma_l2_promotion::b128);
  CHECK(tma_l2_promotion_for(y, 256) == tma_l2_promotion::b256);
  CHECK_THROWS_WITH_AS((void)tma_l2_promotion_for(x, -1), "CAKE_TMA_L2_PROMOTION: expected none, 64, 128 or 256", cake::jit::argument_error);
}
