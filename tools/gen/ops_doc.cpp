// Generates the op and math-function tables of docs/language.md from the op table (include/cake/ir/ops.hpp)
// and the math table (include/cake/ir/expr.hpp), with the targets that admit and lower each op.
//   cake_ops_doc --check docs/language.md   exit 1 (and print the expected tables) when they disagree
//   cake_ops_doc --write docs/language.md   rewrite the tables in place
// The tables sit between the BEGIN/END markers below; the rest of the document is written by hand.
#include <cake/cake.hpp>
#include <string>

#include "doc_block.hpp"

namespace {

constexpr std::string_view begin_marker = "<!-- BEGIN ops: generated from include/cake/ir/ops.hpp and expr.hpp by tools/gen/ops_doc.cpp -->";
constexpr std::string_view end_marker = "<!-- END ops -->";

std::string cell(const cake::op_info& o, cake::target_id t) {
  const auto& arch = cake::target_of(t);
  const bool admitted = o.needs == cake::feature::count_ || arch.admitted(o.needs);
  if (!admitted) return "—";
  return o.lowered(t) ? "yes" : "**no**";
}

std::string tables() {
  using namespace cake;
  std::string s = std::string(begin_marker) + "\n";
  s += "Every op, the targets whose hardware has it (— where the target lacks the instruction family) and whether Cake lowers it\n"
       "there. An op that is admitted but not lowered, and the forms of lowered ops that are not (lower/support.hpp), are\n"
       "reported by the analyzer as `instruction.not-lowered` before lowering runs.\n\n";
  s += "| op | category | issued by | sm_80 | sm_90a | sm_100a | what it is |\n| --- | --- | --- | --- | --- | --- | --- |\n";
  for (int i = 0; i < op_kind_count; ++i) {
    const auto& o = op_table[i];
    s += "| `" + std::string(o.name) + "` | " + std::string(to_string(o.category)) + " | " + (o.who == issuer::leader ? "one thread per unit" : "every thread") +
         " | " + cell(o, target_id::sm_80) + " | " + cell(o, target_id::sm_90a) + " | " + cell(o, target_id::sm_100a) + " | " + std::string(o.doc) + " |\n";
  }
  s += "\nFunctions of register expressions (`r.set(dst, expr)`), lowered on every target (f32 math; predicates for `select`):\n\n";
  s += "| function | operands | result |\n| --- | --- | --- |\n";
  for (int i = 0; i < math_fn_count; ++i) {
    const auto& m = math_table[i];
    const char* kind = m.result == 'p' ? "predicate" : m.result == 'i' ? "index (integer)" : "f32";
    std::string name(m.name);
    if (m.arity == 0) name = "leaf: " + name;
    s += "| `" + name + "` | " + std::to_string(m.arity) + " | " + kind + " |\n";
  }
  s += std::string(end_marker) + "\n";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  return cake::gen::check_or_write_block(argc, argv, begin_marker, end_marker, tables(), "the op tables", "run cake_ops_doc --write on it (cmake --build <build> --target cake_update_ops_doc)");
}
