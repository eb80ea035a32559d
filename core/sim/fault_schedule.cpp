// Faults placed in the simulated model and steps.
#include "core/sim/fault_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace msmon {

std::optional<FaultSchedule> FaultSchedule::make(const SimModel& model, const std::vector<Fault>& faults,
                                                 std::int64_t first_step, std::int64_t steps, int first_rank, int ranks,
                                                 std::string& error) {
    FaultSchedule s;
    s.first_step_ = first_step;
    s.last_step_ = first_step + std::max<std::int64_t>(steps, 1) - 1;
    s.first_rank_ = first_rank;
    s.ranks_ = ranks;
    for (const Fault& f : faults) {
        ScheduledFault sf;
        sf.fault = f;
        if (f.type == Fault::Type::nan || f.type == Fault::Type::drift || f.type == Fault::Type::dead) {
            const int fallback =
                f.type == Fault::Type::dead ? model.default_dead_module() : model.default_fault_module();
            sf.module = f.module.empty() ? fallback : model.find_module(f.module, error);
            if (sf.module < 0) {
                error = std::string(fault_type_name(f.type)) + "@" + std::to_string(f.step) + ": " + error;
                return std::nullopt;
            }
        }
        if (f.type == Fault::Type::sdc || f.type == Fault::Type::sdcgrad) {
            sf.param = f.module.empty() ? model.default_fault_param() : model.find_param(f.module, error);
            if (sf.param < 0) {
                error = std::string(fault_type_name(f.type)) + "@" + std::to_string(f.step) + ": " + error;
                return std::nullopt;
            }
        }
        if (f.type == Fault::Type::stop) continue;  // MindFormers' side: it cuts the run before it gets here
        if (f.step < s.first_step_ || f.step > s.last_step_) continue;
        if (f.rank >= 0 && (f.rank < first_rank || f.rank >= first_rank + ranks)) continue;
        if (f.type == Fault::Type::restart) {
            if (f.step >= s.last_step_) continue;  // nothing left to resume
            sf.resume_step = std::max(first_step, f.resume >= 0 ? f.resume : (f.step - 1) / 10 * 10);
        }
        s.faults_.push_back(std::move(sf));
    }
    return s;
}

StepFaults FaultSchedule::at(std::int64_t step, bool first_pass) const {
    StepFaults out;
    out.ranks.resize(static_cast<std::size_t>(ranks_));
    auto each_rank = [&](int rank, auto&& apply) {
        for (int r = 0; r < ranks_; ++r)
            if (rank < 0 || rank == first_rank_ + r) apply(out.ranks[static_cast<std::size_t>(r)]);
    };
    for (const auto& sf : faults_) {
        const Fault& f = sf.fault;
        if (f.type == Fault::Type::drift) {
            if (step < f.step) continue;
            // Geometric growth to ×factor at the last step.
            const double span = static_cast<double>(last_step_ - f.step + 1);
            out.drift.emplace_back(sf.module, std::pow(f.factor, static_cast<double>(step - f.step + 1) / span));
            continue;
        }
        if (f.type == Fault::Type::lr) {
            if (step >= f.step) out.lr_factor *= f.factor;
            continue;
        }
        if (f.type == Fault::Type::dead) {
            // The earliest death wins: one dead module at a time.
            if (step >= f.step && (out.dead_module < 0 || step - f.step > out.dead_for)) {
                out.dead_module = sf.module;
                out.dead_for = step - f.step;
            }
            continue;
        }
        if (step != f.step || !first_pass) continue;
        switch (f.type) {
            case Fault::Type::spike:
                each_rank(f.rank, [&](StepFaults::Rank& r) { r.grad_factor *= f.factor; });
                break;
            case Fault::Type::baddata:
                each_rank(f.rank, [&](StepFaults::Rank& r) { r.batch_factor *= f.factor; });
                break;
            case Fault::Type::nan:
                each_rank(f.rank, [&](StepFaults::Rank& r) {
                    if (r.nan_module < 0) r.nan_module = sf.module;
                });
                break;
            case Fault::Type::sdc:
            case Fault::Type::sdcgrad:
                out.corruptions.push_back({f.rank - first_rank_, sf.param, f.factor, f.type == Fault::Type::sdcgrad});
                break;
            default:
                break;
        }
    }
    return out;
}

std::int64_t FaultSchedule::restart_after(std::int64_t step) const {
    for (const auto& sf : faults_)
        if (sf.fault.type == Fault::Type::restart && sf.fault.step == step) return sf.resume_step;
    return -1;
}

std::vector<std::int64_t> FaultSchedule::resume_steps() const {
    std::vector<std::int64_t> out;
    for (const auto& sf : faults_)
        if (sf.fault.type == Fault::Type::restart) out.push_back(sf.resume_step);
    return out;
}

std::int64_t FaultSchedule::stall_step(int rank) const {
    std::int64_t first = -1;
    for (const auto& sf : faults_)
        if (sf.fault.type == Fault::Type::stall && sf.fault.rank == rank && (first < 0 || sf.fault.step < first))
            first = sf.fault.step;
    return first;
}

}  // namespace msmon
