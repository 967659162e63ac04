// A sweep spread over machines: each runs one shard of the points (podsim sweep --shard K/N) and writes its rows;
// `podsim sweep merge` puts the shards back together into the files the unsharded sweep writes, byte for byte.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/sweep_report.hpp"

namespace podsim {

// Points i with i % count == index belong to shard index (0-based, as Kubernetes' JOB_COMPLETION_INDEX and a Slurm
// array's SLURM_ARRAY_TASK_ID from 0 give it): shards interleave, so each gets large and small points alike.
struct ShardSpec {
    int index = 0, count = 1;
};
// "K/N" with 0 <= K < N; else std::invalid_argument with the reason.
ShardSpec parse_shard(const std::string& text);
bool in_shard(const ShardSpec& s, size_t point);

// A shard file: the sweep's identity (name, file, a fingerprint of its bytes and of the output's head), the shard,
// the total number of points, and each of its points' CSV line and JSON object with the point's index.
nlohmann::json sweep_shard_json(const Sweep& s, const std::string& sweep_bytes, const ShardSpec& shard,
                                const std::vector<size_t>& indices, const std::vector<SweepRow>& rows);

struct MergedSweep {
    std::string csv;   // == sweep_csv of the whole sweep
    std::string json;  // == sweep_json(...).dump(2) + "\n"
    size_t points = 0, shards = 0;
};
// `files` and their parsed texts: every shard of one sweep (same fingerprint and count, each index once, every point
// present), else InputError naming the file and JSON path.
MergedSweep merge_sweep_shards(const std::vector<std::string>& files, const std::vector<nlohmann::json>& shards);

}  // namespace podsim
