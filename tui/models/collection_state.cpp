// The trailing run of collected steps (spaced by the config's step_interval) is the latest collection.
#include "tui/models/collection_state.hpp"

namespace msmon::tui {

using json = nlohmann::ordered_json;

namespace {

std::int64_t int_field(const json& c, const char* key, std::int64_t fallback, std::int64_t min) {
    const auto it = c.find(key);
    if (it == c.end() || !it->is_number_integer() || it->get<std::int64_t>() < min) return fallback;
    return it->get<std::int64_t>();
}

}  // namespace

CollectionState describe_collection(const std::vector<std::int64_t>& steps_desc, const json& config,
                                    std::optional<std::int64_t> steps_at_save,
                                    const std::optional<std::string>& write_back_at) {
    CollectionState s;
    const bool on = config.is_object() && config.value("dynamic_on", json(false)) == json(true);
    // Steps of one collection are step_interval apart (msprobe's default 1); a wider gap is a pause between two.
    const std::int64_t interval = config.is_object() ? int_field(config, "step_interval", 1, 1) : 1;
    s.of = config.is_object() ? int_field(config, "collect_times", -1, 0) : -1;
    // The latest run: newest step back while the gap is step_interval; while collecting, only steps after the
    // collection began (steps_at_save).
    std::size_t n = 0;
    while (n < steps_desc.size() && (!on || !steps_at_save || steps_desc[n] > *steps_at_save) &&
           (n == 0 || steps_desc[n - 1] - steps_desc[n] == interval))
        ++n;
    if (n > 0) {
        s.last_step = steps_desc.front();
        s.since_step = steps_desc[n - 1];
        s.collected = static_cast<std::int64_t>(n);
    }
    const std::string of = s.of < 0 ? "the default 1e8" : std::to_string(s.of == 0 ? 1 : s.of);
    if (on && n == 0) {
        s.phase = CollectionState::Phase::waiting;
        s.text =
            "dynamic_on is true: collection starts at the trainer's next step (the job must run with "
            "DYNAMIC_MONITOR=True)";
    } else if (on) {
        s.phase = CollectionState::Phase::collecting;
        s.text = "collecting since step " + std::to_string(s.since_step) + ": collected " +
                 std::to_string(s.collected) + " of " + of + ", latest step " + std::to_string(s.last_step);
        if (s.of >= 0 && s.collected > std::max<std::int64_t>(s.of, 1))
            s.text += " — more than collect_times: is the job in static mode (no DYNAMIC_MONITOR=True)?";
    } else if (n > 0) {
        const std::string run = "steps " + std::to_string(s.since_step) + "-" + std::to_string(s.last_step) + ", " +
                                std::to_string(s.collected) + " collected";
        if (write_back_at) {
            s.phase = CollectionState::Phase::finished;
            s.text = "collection finished at step " + std::to_string(s.last_step) +
                     "? msprobe set dynamic_on → false at " + *write_back_at + " (" + run + ")";
        } else {
            s.phase = CollectionState::Phase::idle;
            s.text = "not collecting (dynamic_on false); the latest collection in the data: " + run;
        }
    } else {
        s.phase = CollectionState::Phase::no_data;
        s.text = steps_desc.empty() ? "no msprobe data collected yet; c starts a collection"
                                    : "not collecting; c starts a collection";
    }
    return s;
}

}  // namespace msmon::tui
