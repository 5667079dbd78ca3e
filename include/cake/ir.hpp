#pragma once
// The schedule language: kernel(...) and its builders, the Program IR and its printer.
#include "ir/handles.hpp"
#include "ir/index_expr.hpp"
#include "ir/kernel_builder.hpp"
#include "ir/ops.hpp"
#include "ir/program.hpp"
#include "ir/resources.hpp"
#include "ir/printer.hpp"
#include "ir/role_builder.hpp"
