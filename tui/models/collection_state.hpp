// What msprobe's dynamic collection is doing, derived from the data it wrote and the config on disk:
// "collecting since step 41, collected 3 of 5", "waiting for the trainer's next step", "finished at step 45?".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace msmon::tui {

struct CollectionState {
    enum class Phase { no_data, waiting, collecting, finished, idle } phase = Phase::no_data;
    std::int64_t since_step = -1, last_step = -1;
    std::int64_t collected = 0;
    std::int64_t of = -1;  // collect_times from the config; -1: msprobe's default (1e8)
    std::string text;      // one line for the form
};

// `steps_desc`: the latest collected steps, newest first (Reader::collected_steps). `steps_at_save`: the newest
// collected step when a collection last began (this editor saved dynamic_on true, or the view saw the trainer's
// write-back end the one before): while dynamic_on is true, only steps after it belong to the collection.
// `write_back_at`: when the trainer turned dynamic_on false on disk ("14:02:11"), if it did since the editor
// read the file. A collection's steps are the config's step_interval apart (1 when it has none): a wider gap
// ends it.
CollectionState describe_collection(const std::vector<std::int64_t>& steps_desc, const nlohmann::ordered_json& config,
                                    std::optional<std::int64_t> steps_at_save,
                                    const std::optional<std::string>& write_back_at);

}  // namespace msmon::tui
