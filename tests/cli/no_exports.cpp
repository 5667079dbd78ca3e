// A schedule file that compiles but registers nothing: cake says so (cli.no-kernels).
#include <cake/cake.hpp>

constexpr int not_a_kernel = 42;
