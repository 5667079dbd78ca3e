// Generates the rules table of docs/diagnostics.md from include/cake/analysis/rules.hpp.
//   cake_diagnostics_doc --check docs/diagnostics.md   exit 1 (and print the expected table) when they disagree
//   cake_diagnostics_doc --write docs/diagnostics.md   rewrite the table in place
// The table sits between the BEGIN/END markers below; the rest of the document is written by hand.
#include <cake/analysis/rules.hpp>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

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
  if (argc != 3 || (std::string(argv[1]) != "--check" && std::string(argv[1]) != "--write")) {
    std::cerr << "usage: " << argv[0] << " --check|--write <docs/diagnostics.md>\n";
    return 2;
  }
  const std::string path = argv[2];
  std::ifstream in(path);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    return 2;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string doc = buf.str();
  const auto b = doc.find(begin_marker);
  const auto e = doc.find(end_marker);
  if (b == std::string::npos || e == std::string::npos || e < b) {
    std::cerr << path << ": the rules table markers are missing\n";
    return 1;
  }
  const std::string current = doc.substr(b, e + end_marker.size() + 1 - b);
  const std::string expected = table();
  if (std::string(argv[1]) == "--check") {
    if (current == expected) return 0;
    std::cerr << path << " does not list the rules of rules.hpp; regenerate it (cmake --build <build> --target cake_update_diagnostics_doc)."
              << " Expected table:\n"
              << expected;
    return 1;
  }
  std::ofstream out(path);
  out << doc.substr(0, b) << expected << doc.substr(e + end_marker.size() + 1);
  return out ? 0 : 1;
}
