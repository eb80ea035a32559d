// libFuzzer target: every whole-file JSON reader in core/parse/json_documents, one target that dispatches on
// the first byte (see README.md in this folder for why one target and not four).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/parse/json_documents.hpp"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

// Selector values (first byte modulo kReaders): the seed builder in scripts/fuzz.sh writes the same bytes.
enum Reader : std::uint8_t {
    anomaly_dump = 0,     // anomaly.json and anomaly_analyse.json (same reader)
    health_ckpts = 1,     // health_ckpts.json
    module_struct = 2,    // module_struct.json
    msprobe_message = 3,  // the "message" string inside an anomaly record
    msprobe_tag = 4,      // the "tag_name" string inside an anomaly record
    checkpoint_name = 5,  // a health_ckpts.json "ckpt_name"
    kReaders = 6,
};

template <typename Record>
void check_outcome(msmon::ParseOutcome r, const std::vector<Record>& out, const std::string& error) {
    if (r != msmon::ParseOutcome::ok) check(out.empty());
    if (r == msmon::ParseOutcome::invalid) check(!error.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const auto reader = static_cast<Reader>(data[0] % kReaders);
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    std::string error;
    switch (reader) {
        case anomaly_dump: {
            std::vector<msmon::AnomalyRecord> out;
            check_outcome(msmon::parse_anomaly_dump(text, out, error), out, error);
            break;
        }
        case health_ckpts: {
            std::vector<msmon::CheckpointRecord> out;
            const auto r = msmon::parse_health_checkpoints(text, "health_ckpts.json", out, error);
            check_outcome(r, out, error);
            for (std::size_t i = 0; i < out.size(); ++i) check(out[i].position == static_cast<std::int64_t>(i));
            break;
        }
        case module_struct: {
            std::vector<msmon::ModuleStructEntry> out;
            check_outcome(msmon::parse_module_struct(text, 0, out, error), out, error);
            // Each entry's text is what the store keeps: it must parse back as JSON.
            for (const auto& e : out) check(nlohmann::json::accept(e.json));
            break;
        }
        case msprobe_message:
            (void)msmon::parse_msprobe_message(text);
            break;
        case msprobe_tag:
            if (auto tag = msmon::split_msprobe_tag(text)) check(tag->name.size() <= text.size());
            break;
        case checkpoint_name:
            (void)msmon::parse_checkpoint_name(text);
            break;
        case kReaders:
            break;
    }
    return 0;
}
