// Not C++: a missing semicolon and an undeclared name.
#include <cake/cake.hpp>

constexpr int x = 1
CAKE_EXPORT(broken, undeclared_schedule())
