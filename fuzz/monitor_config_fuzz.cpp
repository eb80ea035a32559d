// libFuzzer target: the monitor config as msmon reads it (BOM strip + nlohmann parse, the same steps as
// read_monitor_config, which only takes a path), then validate_monitor_config, then the render/parse round trip
// that every save goes through.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/config/config_file.hpp"
#include "core/config/monitor_config_fields.hpp"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view body(reinterpret_cast<const char*>(data), size);
    if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return 0;  // "being written"
    if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(body.begin(), body.end(), nullptr, false);
    if (doc.is_discarded()) return 0;

    const msmon::ConfigCheck first = msmon::validate_monitor_config(doc);

    // What msmon writes must read back as the same document, validate the same, and render the same again.
    const std::string text = msmon::render_monitor_config(doc);
    check(!text.empty() && text.back() == '\n');
    const nlohmann::ordered_json again = nlohmann::ordered_json::parse(text, nullptr, false);
    check(!again.is_discarded());
    check(again == doc);
    check(msmon::render_monitor_config(again) == text);
    const msmon::ConfigCheck second = msmon::validate_monitor_config(again);
    check(first.errors == second.errors && first.warnings == second.warnings);
    return 0;
}
