// tensor_view (runtime/kernel.hpp) refuses more dims than a tensor has and a stride list of another
// length, instead of writing past its arrays or silently using packed strides.
#include <doctest/doctest.h>

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
