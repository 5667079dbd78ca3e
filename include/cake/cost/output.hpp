#pragma once
// A cost estimate as text for people and as a JSON object for agents (the object `cake estimate --json`
// puts in its "estimates" list; fields documented in docs/cli.md and docs/cost-model.md).
#include <cstdio>
#include <string>

#include "model.hpp"

namespace cake::cost {

namespace detail {

inline std::string json_str(std::string_view s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += static_cast<char>(c);
    else if (c == '\n') o += "\\n";
    else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else o += static_cast<char>(c);
  }
  return o + "\"";
}

inline std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[48];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

inline std::string dims_text(const std::vector<dim_value>& dims) {
  std::string s;
  for (const auto& d : dims) s += (s.empty() ? "" : " ") + d.name + "=" + std::to_string(d.value);
  return s;
}

}  // namespace detail

inline std::string to_text(const cost_estimate& e) {
  using detail::fmt;
  std::string s = e.kernel + " (" + e.target + ") at " + detail::dims_text(e.dims) + ": ";
  if (!e.ok) {
    s += e.reason + "\n";
    for (const auto& h : e.hints) s += "  hint: " + h.text + "\n";  // (the walk's balance is assessed without the GEMM form)
    for (const auto& n : e.notes) s += "  note: " + n + "\n";
    return s;
  }
  const double mib = 1048576.0;
  s += "estimate " + fmt(e.time_us) + " us (" + fmt(e.tflops * 1e3 / 1e3, 1) + " TFLOP/s); bottleneck: " + e.bottleneck + "\n";
  s += "  calibration " + e.calibration + "\n";
  s += "  grid: " + std::to_string(e.tiles) + " tiles of " + std::to_string(e.tile_m) + " x " + std::to_string(e.tile_n) + " on " + std::to_string(e.ctas) +
       " CTAs" + (e.cluster > 1 ? " (clusters of " + std::to_string(e.cluster) + ")" : "") + ": " + fmt(e.waves, 2) + " waves -> " +
       std::to_string(e.tiles_per_cta) + " tiles per CTA (wave efficiency " + fmt(100 * e.wave_efficiency, 0) + "%, tile fill " + fmt(100 * e.tile_fill, 0) +
       "%)\n";
  s += "  per K block: wgmma " + fmt(e.mma_us, 3) + " us, L2->SMEM " + fmt(e.l2_us, 3) + " us, latency " + fmt(e.latency_us, 3) + " us (" +
       fmt(e.tma_round_trip_us, 2) + " us round trip / " + std::to_string(e.stages) + " stages) -> " + fmt(e.kblock_us, 3) + " us; " +
       std::to_string(e.k_iterations) + " K blocks per tile\n";
  s += "  critical CTA: launch " + fmt(e.launch_us) + " + mainloop " + fmt(e.mainloop_us) + " + epilogue " + fmt(e.epilogue_us) + " us (" +
       fmt(e.epilogue_tile_us, 2) + " us per tile); HBM " + fmt(e.hbm_us) + " us\n";
  s += "  traffic: HBM read " + fmt(e.hbm_read_bytes / mib, 0) + " MiB (compulsory " + fmt(e.compulsory_read_bytes / mib, 0) + "), written " +
       fmt(e.hbm_write_bytes / mib, 0) + " MiB; L2->SMEM " + fmt(e.l2_to_smem_bytes / mib, 0) + " MiB\n";
  for (const auto& h : e.hints) s += "  hint: " + h.text + "\n";
  for (const auto& n : e.notes) s += "  note: " + n + "\n";
  return s;
}

inline std::string to_json(const cost_estimate& e) {
  using detail::json_num;
  using detail::json_str;
  std::string o = "{\"kernel\":" + json_str(e.kernel) + ",\"target\":" + json_str(e.target) + ",\"dims\":{";
  for (std::size_t i = 0; i < e.dims.size(); ++i) o += (i ? "," : "") + json_str(e.dims[i].name) + ":" + std::to_string(e.dims[i].value);
  o += "},\"ok\":" + std::string(e.ok ? "true" : "false");
  auto hints_json = [&] {
    std::string h = "\"hints\":[";
    for (std::size_t i = 0; i < e.hints.size(); ++i)
      h += std::string(i ? "," : "") + "{\"change\":" + json_str(e.hints[i].change) + ",\"text\":" + json_str(e.hints[i].text) +
           ",\"time_us\":" + (e.hints[i].time_us > 0 ? json_num(e.hints[i].time_us) : std::string("null")) + "}";
    h += "],\"notes\":[";
    for (std::size_t i = 0; i < e.notes.size(); ++i) h += std::string(i ? "," : "") + json_str(e.notes[i]);
    return h + "]";
  };
  auto walk_json = [&] {
    return e.walk_assessed ? ",\"walk_balance\":{\"strided\":" + json_num(e.walk_strided) + ",\"serpentine\":" + json_num(e.walk_serpentine) + "}" : std::string();
  };
  if (!e.ok) return o + ",\"reason\":" + json_str(e.reason) + walk_json() + (e.hints.empty() && e.notes.empty() ? std::string() : "," + hints_json()) + "}";
  o += ",\"calibration\":" + json_str(e.calibration) + ",\"time_us\":" + json_num(e.time_us) + ",\"tflops\":" + json_num(e.tflops) +
       ",\"bottleneck\":" + json_str(e.bottleneck);
  o += ",\"per_kblock_us\":{\"mma\":" + json_num(e.mma_us) + ",\"l2\":" + json_num(e.l2_us) + ",\"latency\":" + json_num(e.latency_us) +
       ",\"round_trip\":" + json_num(e.tma_round_trip_us) + ",\"time\":" + json_num(e.kblock_us) + "}";
  o += ",\"grid\":{\"tile\":[" + std::to_string(e.tile_m) + "," + std::to_string(e.tile_n) + "],\"stages\":" + std::to_string(e.stages) +
       ",\"cluster\":" + std::to_string(e.cluster) + ",\"tiles\":" + std::to_string(e.tiles) + ",\"ctas\":" + std::to_string(e.ctas) +
       ",\"tiles_per_cta\":" + std::to_string(e.tiles_per_cta) + ",\"k_iterations\":" + std::to_string(e.k_iterations) + ",\"waves\":" + json_num(e.waves) +
       ",\"wave_efficiency\":" + json_num(e.wave_efficiency) + ",\"tile_fill\":" + json_num(e.tile_fill) + "}";
  o += ",\"parts_us\":{\"launch\":" + json_num(e.launch_us) + ",\"mainloop\":" + json_num(e.mainloop_us) + ",\"epilogue\":" + json_num(e.epilogue_us) +
       ",\"epilogue_per_tile\":" + json_num(e.epilogue_tile_us) + ",\"hbm\":" + json_num(e.hbm_us) + "}";
  o += ",\"traffic_bytes\":{\"hbm_read\":" + json_num(e.hbm_read_bytes) + ",\"hbm_compulsory_read\":" + json_num(e.compulsory_read_bytes) +
       ",\"hbm_write\":" + json_num(e.hbm_write_bytes) + ",\"l2_to_smem\":" + json_num(e.l2_to_smem_bytes) + "}";
  return o + walk_json() + "," + hints_json() + "}";
}

}  // namespace cake::cost
