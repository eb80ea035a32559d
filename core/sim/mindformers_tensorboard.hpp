// The TensorBoard side of a simulated MindFormers job: what MFLossMonitor, TrainingStateMonitor and
// TopkBiasBalanceCallback write to <tensorboard_dir>/rank_<R>/events.out.tfevents.* (the scalars the log also prints),
// with the same values the logs print.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/sim/mindformers_records.hpp"
#include "core/sim/mindformers_simulator.hpp"
#include "core/sim/tensorboard_writer.hpp"

namespace msmon {

class MfTensorboard {
public:
    MfTensorboard(std::string dir, const MindFormersPlan& plan, const MindFormersOptions& options, std::uint64_t seed);
    // A launch opens new event files (a relaunched SummaryWriter names its file by its start time).
    bool start_launch(int launch, std::string& error);
    bool write_step(const MfPlannedStep& st, int rank, const MfRankStep& rs, std::string& error);
    // The load of each expert of `layer` at `step`: what the simulator plants.
    std::vector<double> expert_loads(std::int64_t step, int rank, int layer) const;
    std::int64_t bytes() const;

private:
    TfEventWriter& writer(int rank, const std::string& sub);
    std::string dir_;
    const MindFormersPlan& plan_;
    MindFormersOptions options_;
    std::uint64_t seed_;
    int launch_ = 0;
    double wall_ = 0;
    std::map<std::pair<int, std::string>, std::unique_ptr<TfEventWriter>> writers_;
};

}  // namespace msmon
