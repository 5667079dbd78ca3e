#pragma once
// The driver shared by the generators of docs tables (tools/gen/ops_doc.cpp, tests/verify/diagnostics_doc.cpp):
// a generated block sits between a BEGIN and an END marker line of a hand-written document.
//   <tool> --check <doc>   exit 1 (and print the expected block) when the document's block differs
//   <tool> --write <doc>   rewrite the block in place
// `expected` is the whole block, both markers and the newline after END included.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

namespace cake::gen {

inline int check_or_write_block(int argc, char** argv, std::string_view begin_marker, std::string_view end_marker, const std::string& expected,
                                const std::string& what, const std::string& regenerate) {
  if (argc != 3 || (std::string(argv[1]) != "--check" && std::string(argv[1]) != "--write")) {
    std::cerr << "usage: " << argv[0] << " --check|--write <document>\n";
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
    std::cerr << path << ": the markers of " << what << " are missing (" << begin_marker << " ... " << end_marker << ")\n";
    return 1;
  }
  const std::string current = doc.substr(b, e + end_marker.size() + 1 - b);
  if (std::string(argv[1]) == "--check") {
    if (current == expected) return 0;
    std::cerr << path << ": " << what << ": out of date; " << regenerate << ". Expected:\n" << expected;
    return 1;
  }
  std::ofstream out(path);
  out << doc.substr(0, b) << expected << doc.substr(e + end_marker.size() + 1);
  return out ? 0 : 1;
}

}  // namespace cake::gen
