// libFuzzer target: the monitor config as msmon reads it (parse_monitor_config_text, what read_monitor_config
// does with each read), then check_monitor_config (v1's or monitor_v2's rules), then the render/parse round trip
// that every save goes through.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/config/config_file.hpp"
#include "core/config/config_text_edit.hpp"
#include "core/config/monitor_config_schema.hpp"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    nlohmann::ordered_json doc;
    std::string error;
    if (!msmon::parse_monitor_config_text(std::string_view(reinterpret_cast<const char*>(data), size), doc, error)) {
        check(!error.empty());
        return 0;
    }

    const msmon::ConfigCheck first = msmon::check_monitor_config(doc);

    // What msmon writes must read back as the same document, validate the same, and render the same again.
    const std::string text = msmon::render_monitor_config(doc);
    check(!text.empty() && text.back() == '\n');
    const nlohmann::ordered_json again = nlohmann::ordered_json::parse(text, nullptr, false);
    check(!again.is_discarded());
    check(again == doc);
    check(msmon::render_monitor_config(again) == text);
    const msmon::ConfigCheck second = msmon::check_monitor_config(again);
    check(first.errors == second.errors && first.warnings == second.warnings);

    if (!doc.is_object()) return 0;
    nlohmann::ordered_json edited = doc;
    if (!doc.empty()) edited.erase(doc.begin().key());
    edited["dynamic_on"] = true;
    edited["collect_times"] = 5;
    edited["msmon_fuzz_added"] = nlohmann::ordered_json::array({1, "two"});
    // The edit itself (a save of a large config trusts it without parsing it back).
    const auto in_place =
        msmon::edit_config_text_in_place(std::string_view(reinterpret_cast<const char*>(data), size), doc, edited);
    // Compared as unordered objects: a key the patch removed and set again keeps its place in the text.
    if (in_place) {
        const nlohmann::json back = nlohmann::json::parse(*in_place, nullptr, false);
        check(!back.is_discarded() && back == nlohmann::json::parse(edited.dump()));
    }
    return 0;
}
