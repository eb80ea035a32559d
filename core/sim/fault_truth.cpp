// Ground truth of the faults a simulation plants, as JSON.
#include "core/sim/fault_truth.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/sim/dead_module.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

std::string num(double v) {
    return format_double(v);
}

}  // namespace

std::string fault_truth_json(const SimOptions& o, std::int64_t stop_step, std::string& error) {
    const SimModel model(o.params, o.seed);
    auto schedule = FaultSchedule::make(model, o.faults, o.first_step, o.steps, o.first_rank, o.ranks, error);
    if (!schedule) return {};
    const auto& modules = model.modules();
    const std::string first_input = SimModel::row_name(modules[static_cast<std::size_t>(model.first_module())], false);
    nlohmann::ordered_json faults = nlohmann::ordered_json::array();
    for (const ScheduledFault& sf : schedule->faults()) {
        const Fault& f = sf.fault;
        const std::string rank_text = f.rank < 0 ? "every rank" : "rank " + std::to_string(f.rank);
        const std::string step_text = std::to_string(f.step);
        nlohmann::ordered_json t;
        t["kind"] = std::string(fault_type_name(f.type));
        t["step"] = f.step;
        t["rank"] = f.rank;
        std::string tensor_kind, module, description;
        const SimModule* planted = sf.module >= 0 ? &modules[static_cast<std::size_t>(sf.module)] : nullptr;
        switch (f.type) {
            case Fault::Type::spike:
                // The backward pass begins at the output: with activations, its gradient shows the spike first.
                tensor_kind = o.activations ? "actv_grad" : "grad_unreduced";
                if (o.activations) module = SimModel::row_name(modules.back(), true);
                description = "gradients of " + rank_text + " x" + num(f.factor) + " at step " + step_text +
                              " (grad_unreduced" + (o.activations ? ", actv_grad" : "") + "); grad_reduced " +
                              (f.rank < 0 ? "x" + num(f.factor) : "moves on every rank through the mean") +
                              "; Adam's moments follow from step " + std::to_string(f.step + 1);
                break;
            case Fault::Type::nan:
                if (o.activations) {
                    tensor_kind = "actv";
                    module = SimModel::row_name(*planted, true);
                    description = "a NaN in " + module + " on " + rank_text + " at step " + step_text +
                                  " (micro-step 0, nans 0 -> 1); it flows into the modules after it, back through " +
                                  "every activation and weight gradient of that rank, into grad_reduced on every " +
                                  "rank at step " + step_text + ", and everything is NaN from step " +
                                  std::to_string(f.step + 1) + " on";
                } else {
                    tensor_kind = "grad_unreduced";
                    description = "a NaN planted in " + planted->name + "'s output on " + rank_text + " at step " +
                                  step_text + ": without activations every grad_unreduced row of that rank is NaN " +
                                  "at once, grad_reduced on every rank too, and everything from step " +
                                  std::to_string(f.step + 1) + " on";
                }
                break;
            case Fault::Type::baddata:
                if (o.activations) {
                    tensor_kind = "actv";
                    module = first_input;
                } else tensor_kind = "grad_unreduced";
                description = rank_text + "'s batch x" + num(f.factor) + " at step " + step_text +
                              (o.activations ? ": " + first_input + " and the residual stream grow, LayerNorm " +
                                                   "outputs do not; that rank's activation gradients shrink"
                                             : "") +
                              "; that rank's block weight gradients shrink ~" + num(std::min(1.0, 2 / f.factor)) +
                              "x, grad_reduced moves on every rank; normal again at step " + std::to_string(f.step + 1);
                break;
            case Fault::Type::drift:
                if (o.activations) {
                    tensor_kind = "actv";
                    module = SimModel::row_name(*planted, true);
                } else {
                    tensor_kind = "grad_reduced";
                    if (!planted->params.empty())
                        module = model.params()[static_cast<std::size_t>(planted->params.front())].name;
                }
                description = planted->name + "'s output" + (planted->params.empty() ? "" : " and weight gradients") +
                              " grow geometrically from step " + step_text + " to x" + num(f.factor) + " at step " +
                              std::to_string(schedule->last_step()) + ", on every rank";
                t["end_step"] = schedule->last_step();
                break;
            case Fault::Type::stall:
                description = rank_text + " writes nothing after step " + step_text + " while the others go on";
                break;
            case Fault::Type::restart:
                description = "the job restarts after step " + step_text + ": new run folders on every rank, " +
                              "resuming at step " + std::to_string(sf.resume_step);
                t["resume_step"] = sf.resume_step;
                break;
            case Fault::Type::sdc: {
                const std::string& weight = model.params()[static_cast<std::size_t>(sf.param)].name;
                tensor_kind = "param_origin";
                module = weight;
                const std::string before = std::to_string(f.step - 1);
                const bool first = f.step == schedule->first_step();  // no update before it
                description = rank_text + "'s copy of " + weight + " x" + num(f.factor) +
                              (first ? " before step " + step_text : " right after step " + before + "'s update") +
                              ": its param_origin at step " + step_text +
                              (first ? "" : " differs from its param_updated at step " + before + " and") +
                              " departs from its replicas', and it trains its own copy from then on; its " +
                              "grad_reduced and Adam's moments stay the replicas'";
                break;
            }
            case Fault::Type::sdcgrad: {
                const std::string& weight = model.params()[static_cast<std::size_t>(sf.param)].name;
                tensor_kind = "grad_reduced";
                module = weight;
                description = rank_text + "'s all-reduced gradient of " + weight + " x" + num(f.factor) + " at step " +
                              step_text + ", on that rank only: its grad_reduced departs from its " +
                              "replicas' at step " + step_text + ", its param_updated too, its exp_avg, " +
                              "exp_avg_sq and param_origin from step " + std::to_string(f.step + 1) +
                              " (msprobe reads the moments before the update), and they stay apart";
                break;
            }
            case Fault::Type::lr:
                tensor_kind = "derived.update_ratio";
                description = "every rank's learning rate x" + num(f.factor) + " from step " + step_text +
                              ": every weight's update/weight ratio x" + num(f.factor) + " at once" +
                              " (MindFormers' logged lr too)";
                break;
            case Fault::Type::dead: {
                const DeadPath dead = dead_path(model, sf.module);
                std::string silenced;
                for (std::size_t p = 0; p < dead.zero_params.size(); ++p)
                    if (dead.zero_params[p]) silenced += (silenced.empty() ? "" : ", ") + model.params()[p].name;
                if (o.activations) {
                    tensor_kind = "actv";
                    module = SimModel::row_name(*planted, true);
                    description = module + " is all zeros (zeros 0 -> 1) on every rank from step " + step_text +
                                  ", and so is every activation computed from it alone";
                } else {
                    tensor_kind = "grad_unreduced";
                    for (std::size_t p = 0; p < dead.zero_params.size() && module.empty(); ++p)
                        if (dead.zero_params[p]) module = model.params()[p].name;
                    description = planted->name + "'s output is all zeros on every rank from step " + step_text +
                                  " (no activations written: only the weight gradients show it)";
                }
                description += silenced.empty() ? "" : "; no gradient reaches " + silenced;
                break;
            }
            case Fault::Type::stop:
                break;
        }
        t["kind_of_tensor"] = tensor_kind;
        t["module"] = module;
        if (planted) t["planted_module"] = planted->name;
        if (f.type == Fault::Type::spike || f.type == Fault::Type::baddata || f.type == Fault::Type::drift ||
            f.type == Fault::Type::sdc || f.type == Fault::Type::sdcgrad || f.type == Fault::Type::lr)
            t["factor"] = f.factor;
        if ((tensor_kind == "actv" || tensor_kind == "actv_grad") && f.type != Fault::Type::drift &&
            f.type != Fault::Type::dead)
            t["micro_step"] = 0;
        t["description"] = description;
        faults.push_back(std::move(t));
    }
    if (stop_step >= 0) {
        nlohmann::ordered_json t;
        t["kind"] = "stop";
        t["step"] = stop_step;
        t["rank"] = -1;
        t["kind_of_tensor"] = "";
        t["module"] = "";
        t["description"] = "MindFormers' data skip ends the job at step " + std::to_string(stop_step) +
                           " (global-norm spikes at the steps before): no step after it is written";
        faults.push_back(std::move(t));
    }
    // In the order they happen.
    std::stable_sort(faults.begin(), faults.end(), [](const auto& a, const auto& b) {
        return a["step"].template get<std::int64_t>() < b["step"].template get<std::int64_t>();
    });
    nlohmann::ordered_json doc;
    doc["generator"] = "msmon simulate";
    doc["seed"] = o.seed;
    doc["first_rank"] = o.first_rank;
    doc["ranks"] = o.ranks;
    doc["tp"] = o.tp;
    doc["first_step"] = schedule->first_step();
    doc["last_step"] = schedule->last_step();
    doc["activations"] = o.activations;
    doc["faults"] = std::move(faults);
    return doc.dump(2) + "\n";
}

}  // namespace msmon
