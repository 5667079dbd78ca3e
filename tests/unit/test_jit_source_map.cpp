// The parsers behind diagnostics mapping, on fixed inputs: op annotations, PTX .loc/.file lines, and
// NVRTC/ptxas logs as NVRTC 13.0 prints them.
#include <doctest/doctest.h>

#include <cake/jit/compile_log.hpp>
#include <cake/jit/source_map.hpp>

using namespace cake::jit;

TEST_CASE("source_map: annotations are found and the nearest one above a line wins") {
  const source_map m("int a;\n"
                     "  // @op gemm/load/op#1 kernels/g.hpp:10\n"
                     "x();\n"
                     "// @op   gemm/math/op#2   kernels/my dir/g.hpp:12\n"  // a path with a space
                     "// @opx not-an-annotation a.hpp:1\n"
                     "// @op missing-location\n"
                     "// @op 7 no/line/number.hpp:\n"
                     "y();\n"
                     "    // @op 14 kernels/gemm/sm90_bf16.hpp:41  tma_load(sA <- A[m, k]) on ab.full::x:2\n");
  REQUIRE(m.ops().size() == 3);
  CHECK(m.ops()[0].cuda_line == 2);
  CHECK(m.ops()[0].op_id == "gemm/load/op#1");
  CHECK(m.ops()[0].location() == "kernels/g.hpp:10");
  CHECK(m.ops()[0].text.empty());
  CHECK(m.ops()[1].file == "kernels/my dir/g.hpp");
  CHECK(m.ops()[1].line == 12);
  CHECK(m.op_for_line(1) == nullptr);
  CHECK(m.op_for_line(2)->op_id == "gemm/load/op#1");
  CHECK(m.op_for_line(3)->op_id == "gemm/load/op#1");
  CHECK(m.op_for_line(8)->op_id == "gemm/math/op#2");
  // Lowering's form: the op's text follows the location (and may itself contain colons).
  const auto& last = m.ops()[2];
  CHECK(last.cuda_line == 9);
  CHECK(last.op_id == "14");
  CHECK(last.location() == "kernels/gemm/sm90_bf16.hpp:41");
  CHECK(last.text == "tma_load(sA <- A[m, k]) on ab.full::x:2");
}

TEST_CASE("ptx_line_map: .loc with inlined_at, .file names, function boundaries") {
  const char* ptx = ".version 9.0\n"                                                        // 1
                    ".visible .entry k(\n"                                                   // 2
                    "{\n"                                                                    // 3
                    "\t.loc\t1 5 0\n"                                                        // 4
                    "\tld.param.u64 \t%rd1, [k_param_0];\n"                                  // 5
                    "\t.loc\t1 2 3, function_name $L__info_string0, inlined_at 1 8 3\n"     // 6
                    "\tbogus.instr;\n"                                                       // 7
                    "}\n"                                                                    // 8
                    ".visible .entry k2(\n"                                                  // 9
                    "{\n"                                                                    // 10
                    "\tret;\n"                                                               // 11
                    "}\n"                                                                    // 12
                    "\t.file\t1 \"/tmp/work/bad3.cu\"\n";                                    // 13
  const ptx_line_map m(ptx);
  CHECK_FALSE(m.at(3).has_value());
  REQUIRE(m.at(5).has_value());
  CHECK(m.at(5)->line == 5);
  CHECK(m.at(5)->call_line == 0);
  REQUIRE(m.at(7).has_value());
  CHECK(m.at(7)->line == 2);
  CHECK(m.at(7)->column == 3);
  CHECK(m.at(7)->call_line == 8);
  CHECK_FALSE(m.at(11).has_value());  // k2 has no .loc of its own
  CHECK(m.file_name(1) == "/tmp/work/bad3.cu");
  CHECK(m.is_program(1, "bad3.cu"));
  CHECK_FALSE(m.is_program(1, "d3.cu"));
  CHECK_FALSE(m.is_program(2, "bad3.cu"));
}

TEST_CASE("compile log: front-end errors and warnings with their detail lines") {
  const char* log = "gemm.cu(4): warning #177-D: variable \"x\" was declared but never referenced\n"
                    "    int x;\n"
                    "        ^\n"
                    "\n"
                    "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n"
                    "\n"
                    "gemm.cu(6): error: identifier \"y\" is undefined\n"
                    "    p[1] = y;\n"
                    "           ^\n"
                    "\n"
                    "/usr/include/x.h(12): catastrophic error: cannot open source file \"z.h\"\n"
                    "1 error detected in the compilation of \"gemm.cu\".\n";
  const char* src = "\n\n// @op g/op#7 s.hpp:3\n\n\n\n";
  const auto msgs = parse_compile_log(log, "gemm.cu", src, "");
  REQUIRE(msgs.size() == 3);
  CHECK(msgs[0].level == severity::warning);
  CHECK(msgs[0].code == "177-D");
  CHECK(msgs[0].cuda_line == 4);
  CHECK(msgs[0].detail.find("int x;") != std::string::npos);
  CHECK(msgs[0].op->op_id == "g/op#7");
  CHECK(msgs[1].level == severity::error);
  CHECK(msgs[1].text == "identifier \"y\" is undefined");
  CHECK(msgs[1].op->location() == "s.hpp:3");
  CHECK(msgs[2].level == severity::error);
  CHECK(msgs[2].file == "/usr/include/x.h");
  CHECK_FALSE(msgs[2].op.has_value());  // a header line says nothing about the generated ops
  CHECK(msgs[2].to_string().starts_with("/usr/include/x.h:12: error: cannot open source file"));
}

TEST_CASE("compile log: ptxas errors and coded infos, the resource lines are not messages") {
  const char* log =
      "ptxas application ptx input, line 25; error   : Unknown modifier '.instr'\n"
      "ptxas fatal   : Ptx assembly aborted due to errors\n"
      "ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine register count at entry.\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Used 4 registers, used 0 barriers\n";
  const auto msgs = parse_compile_log(log, "k.cu", "", "");
  REQUIRE(msgs.size() == 2);
  CHECK(msgs[0].origin == message_origin::ptxas);
  CHECK(msgs[0].ptx_line == 25);
  CHECK(msgs[0].text == "Unknown modifier '.instr'");
  CHECK(msgs[0].to_string().starts_with("<ptx>:25: error: Unknown modifier"));
  CHECK(msgs[1].level == severity::info);
  CHECK(msgs[1].code == "C7508");
  CHECK(msgs[1].text.starts_with("Potential Performance Loss"));
}

TEST_CASE("resource report: several functions, device functions, spills, smem") {
  // NVRTC 13.0's log for two kernels and a non-inlined device function on sm_80.
  const char* log =
      "ptxas info    : Overriding maximum register limit 256 for 'k2' with  32 of maxrregcount option\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k2' for 'sm_80'\n"
      "ptxas info    : Function properties for k2\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers, 128 bytes smem, 360 bytes cmem[0]\n"
      "ptxas info    : Compile time = 2.579 ms\n"
      "ptxas info    : Function properties for _Z1ff\n"
      "ptxas         .     8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'k1' for 'sm_80'\n"
      "ptxas info    : Function properties for k1\n"
      "ptxas         .     5608 bytes stack frame, 6456 bytes spill stores, 8776 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 5608 bytes cumulative stack size, 360 bytes cmem[0]\n"
      "ptxas warning : Value of threads per SM for entry k1 is out of range. .minnctapersm will be ignored\n";
  const auto reports = parse_resource_reports(log);
  REQUIRE(reports.size() == 2);
  const auto k2 = select_report(reports, "k2");
  CHECK(k2.function == "k2");
  CHECK(k2.registers == 10);
  CHECK(k2.smem_bytes == 128);
  CHECK(k2.stack_frame == 0);  // _Z1ff's 8 bytes belong to the device function, not to k2
  const auto k1 = select_report(reports, "k1");
  CHECK(k1.registers == 32);
  CHECK(k1.barriers == 1);
  CHECK(k1.stack_frame == 5608);
  CHECK(k1.spill_stores == 6456);
  CHECK(k1.spill_loads == 8776);
  CHECK(k1.spills());
  REQUIRE(k1.warnings.size() == 1);
  CHECK(k1.warnings[0].starts_with("Value of threads per SM"));
  const auto merged = select_report(reports, "not_there");
  CHECK(merged.function.empty());
  CHECK(merged.registers == 32);
  CHECK(merged.smem_bytes == 128);
  CHECK(merged.spill_stores == 6456);
}
