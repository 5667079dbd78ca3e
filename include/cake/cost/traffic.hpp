#pragma once
// Memory traffic from the tile schedule. Every CTA streams, per output tile, one panel of each operand
// (an A panel per tile row, a B panel per tile column, K deep). The tiles a launch works on at the same
// time are taken from the schedule itself (plan::raster_tile over the cluster-tiles, wave by wave for a
// persistent grid); a panel is read from HBM when it is not still in L2 from an earlier wave. L2 is an LRU
// of whole panels with the measured effective capacity: the CTAs of one wave walk K together, so a panel
// shared inside a wave is read once, and reuse across waves needs the whole panel to survive.
#include <algorithm>
#include <list>
#include <unordered_map>
#include <vector>

#include "../plan/grid.hpp"

namespace cake::cost {

struct panel_stream {
  int tensor = -1;
  int axis = -1;              // parallel axis that selects the panel (0: tile rows, 1: tile columns); -1: one panel
  double bytes_per_panel = 0; // whole panel: the box bytes loaded per K iteration (full box, all CTAs of a multicast) x K iterations
};

struct traffic {
  double hbm_read_bytes = 0;
  double compulsory_read_bytes = 0;  // every panel once
  double hbm_write_bytes = 0;
  long long waves = 0;
};

inline traffic simulate_traffic(const plan::grid_shape& g, raster r, int concurrent_clusters, const std::vector<panel_stream>& streams,
                                double write_bytes, double l2_capacity) {
  traffic t;
  t.hbm_write_bytes = write_bytes;
  if (concurrent_clusters < 1) concurrent_clusters = 1;
  const long long clusters = g.clusters;
  t.waves = (clusters + concurrent_clusters - 1) / concurrent_clusters;
  // LRU of panels keyed by (stream, index).
  std::list<long long> lru;
  std::unordered_map<long long, std::list<long long>::iterator> where;
  std::unordered_map<long long, double> size_of;
  double resident = 0;
  std::vector<char> seen_once;
  const long long per_stream = std::max<long long>(g.tiles[0], g.tiles[1]) + 1;
  seen_once.assign(static_cast<std::size_t>(per_stream * static_cast<long long>(streams.size() + 1)), 0);
  std::vector<long long> wave_panels;
  for (long long w = 0; w < t.waves; ++w) {
    wave_panels.clear();
    const long long first = w * concurrent_clusters, last = std::min(clusters, first + concurrent_clusters);
    for (long long c = first; c < last; ++c) {
      const auto pos = plan::raster_tile(c, g.cluster_tiles[0], g.cluster_tiles[1], r);
      for (int x = 0; x < g.cluster_shape[0]; ++x)
        for (int y = 0; y < g.cluster_shape[1]; ++y) {
          const long long tm = pos.m * g.cluster_shape[0] + x, tn = pos.n * g.cluster_shape[1] + y;
          for (std::size_t s = 0; s < streams.size(); ++s) {
            const long long idx = streams[s].axis == 0 ? tm : streams[s].axis == 1 ? tn : 0;
            wave_panels.push_back(static_cast<long long>(s) * per_stream + idx);
          }
        }
    }
    std::sort(wave_panels.begin(), wave_panels.end());
    wave_panels.erase(std::unique(wave_panels.begin(), wave_panels.end()), wave_panels.end());
    for (long long key : wave_panels) {
      const double bytes = streams[static_cast<std::size_t>(key / per_stream)].bytes_per_panel;
      if (!seen_once[static_cast<std::size_t>(key)]) {
        seen_once[static_cast<std::size_t>(key)] = 1;
        t.compulsory_read_bytes += bytes;
      }
      auto it = where.find(key);
      if (it != where.end()) {
        lru.erase(it->second);
      } else {
        t.hbm_read_bytes += bytes;
        resident += bytes;
        size_of[key] = bytes;
      }
      lru.push_front(key);
      where[key] = lru.begin();
    }
    // Evict the least recently used panels beyond the capacity (this wave's own panels stay: they were
    // streamed together whatever their size).
    const std::size_t keep = wave_panels.size();
    while (resident > l2_capacity && lru.size() > keep) {
      const long long victim = lru.back();
      lru.pop_back();
      where.erase(victim);
      resident -= size_of[victim];
      size_of.erase(victim);
    }
  }
  return t;
}

}  // namespace cake::cost
