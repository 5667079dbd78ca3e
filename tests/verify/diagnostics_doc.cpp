// Generates the rules table of docs/diagnostics.md from include/cake/analysis/rules.hpp.
//   cake_diagnostics_doc --check docs/diagnostics.md   exit 1 (and print the expected table) when they disagree
//   cake_diagnostics_doc --write docs/diagnostics.md   rewrite the table in place
// The table sits between the BEGIN/END markers below; the rest of the document is written by hand.
#include <cake/analysis/rules.hpp>
#include <string>

#include "../../tools/gen/doc_block.hpp"

namespace {

constexpr std::string_view begin_marker = "<!-- BEGIN rules: generated from include/cake/analysis/rules.hpp by tests/verify/diagnostics_doc.cpp -->";
constexpr std::string_view end_marker = "<!-- END rules -->";

std::string table() {
  using namespace cake::analysis;
  std::string s;
  s += std::string(begin_marker) + "\n";
  category current = category::ir;
  bool first = true;
  for (const auto& r : rule_table) {
    if (first || r.cat != current) {
      current = r.cat;
      s += std::string(first ? "" : "\n") + "### " + std::string(to_string(r.cat)) + "\n\n";
      s += "| id | severity | found by | what it catches |\n| --- | --- | --- | --- |\n";
      first = false;
    }
    s += "| `" + std::string(r.id) + "` | " + std::string(to_string(r.sev)) + " | " + std::string(to_string(r.pass)) + " | " +
         std::string(r.doc) + " |\n";
  }
  s += std::string(end_marker) + "\n";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  return cake::gen::check_or_write_block(argc, argv, begin_marker, end_marker, table(), "the rules table", "regenerate it (cmake --build <build> --target cake_update_diagnostics_doc)");
}
