// The Config tab's model on a monitor_v2 config: its nested fields are rows of their own, edited by key path, keys
// msprobe does not know kept at any depth, and no dynamic collection to start.
#include <gtest/gtest.h>

#include "core/config/config_editor.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using json = nlohmann::ordered_json;

const char* kV2 = R"({
    "output_dir": "./monitor_v2_out",
    "collect_times": 100,
    "monitors": {
        "weight_grad": {"enabled": false, "eps": 1e-8, "my_note": "kept"},
        "fsdp_grad": {"enabled": true}
    },
    "my_own_key": 1
}
)";

const ConfigRow* row(const std::vector<ConfigRow>& rows, const std::string& key) {
    for (const auto& r : rows)
        if (r.key == key) return &r;
    return nullptr;
}

TEST(ConfigEditorV2, nested_fields_are_rows_edited_by_path_and_unknown_keys_are_kept_rows) {
    TempDir tmp;
    write_file(tmp / "v2.json", kV2);
    ConfigEditor editor(ConfigTarget(tmp / "v2.json"));
    ASSERT_TRUE(editor.loaded()) << editor.load_error();
    EXPECT_EQ(editor.version(), MonitorConfigVersion::v2);
    auto rows = editor.rows();
    EXPECT_EQ(row(rows, "dynamic_on"), nullptr) << "v2 has no dynamic_on";
    const ConfigRow* enabled = row(rows, "monitors.weight_grad.enabled");
    ASSERT_NE(enabled, nullptr);
    EXPECT_TRUE(enabled->present);
    EXPECT_EQ(enabled->value, false);
    EXPECT_EQ(enabled->path, (std::vector<std::string>{"monitors", "weight_grad", "enabled"}));
    const ConfigRow* mbs = row(rows, "monitors.weight_grad.monitor_mbs_grad");
    ASSERT_NE(mbs, nullptr);
    EXPECT_FALSE(mbs->present);
    // Keys msprobe does not read, at their depth: kept and shown as such.
    for (const char* kept : {"monitors.weight_grad.my_note", "monitors.fsdp_grad", "my_own_key"}) {
        const ConfigRow* r = row(rows, kept);
        ASSERT_NE(r, nullptr) << kept;
        EXPECT_EQ(r->field, nullptr) << kept;
    }

    editor.toggle(enabled->path);
    std::string error;
    ASSERT_TRUE(editor.set(std::vector<std::string>{"monitors", "weight_grad", "grad_acc_steps"}, "8", error)) << error;
    editor.remove(std::vector<std::string>{"monitors", "module", "targets"});  // absent: creates nothing
    rows = editor.rows();
    EXPECT_TRUE(row(rows, "monitors.weight_grad.enabled")->changed);
    EXPECT_TRUE(row(rows, "monitors.weight_grad.grad_acc_steps")->changed);
    EXPECT_FALSE(row(rows, "monitors.weight_grad.eps")->changed);
    EXPECT_FALSE(editor.edited()["monitors"].contains("module"));
    EXPECT_EQ(editor.pending_lines(), (std::vector<std::string>{"monitors.weight_grad.enabled: false → true",
                                                                "monitors.weight_grad.grad_acc_steps: (absent) → 8"}));
    // v1's dynamic collection does not apply.
    const json before = editor.edited();
    EXPECT_FALSE(editor.start_collection(5));
    EXPECT_FALSE(editor.stop_collection());
    EXPECT_EQ(editor.edited(), before);

    // cc_log_only turned on (with cc on) asks for the capital Y, as v1's aborting fields do.
    EXPECT_FALSE(editor.pending_aborts_training());
    editor.toggle(std::vector<std::string>{"monitors", "cc", "enabled"});
    editor.toggle(std::vector<std::string>{"monitors", "cc", "cc_log_only"});
    EXPECT_TRUE(editor.pending_aborts_training());
    editor.discard_edits();

    // Saved through guarded_save: only the edited values' text changes.
    editor.toggle(std::vector<std::string>{"monitors", "weight_grad", "enabled"});
    const SaveReport report = editor.save();
    ASSERT_TRUE(report.in_effect) << report.error;
    std::string expected = kV2;
    expected.replace(expected.find("\"enabled\": false"), 16, "\"enabled\": true");
    EXPECT_EQ(read_file(tmp / "v2.json"), expected);
}

TEST(ConfigEditorV2, a_change_monitor_v2_would_refuse_is_not_saved) {
    TempDir tmp;
    write_file(tmp / "v2.json", kV2);
    ConfigEditor editor(ConfigTarget(tmp / "v2.json"));
    std::string error;
    ASSERT_TRUE(editor.set("format", "tensorboard", error));
    EXPECT_FALSE(editor.check().ok());
    const SaveReport report = editor.save();
    EXPECT_FALSE(report.in_effect);
    EXPECT_NE(report.error.find("format must be csv"), std::string::npos) << report.error;
    EXPECT_EQ(read_file(tmp / "v2.json"), kV2);
}

// A v2 file stays v2 while it is edited: removing the key that told it apart (output_dir, no `monitors`) would
// have switched the form, the rules and the save's check to v1's, while msprobe's v2 still reads the file.
TEST(ConfigEditorV2, an_edit_does_not_switch_the_files_version) {
    TempDir tmp;
    write_file(tmp / "v2.json", R"({"output_dir": "./out", "start_step": 0, "format": "csv"})");
    ConfigEditor editor(ConfigTarget(tmp / "v2.json"));
    ASSERT_TRUE(editor.loaded()) << editor.load_error();
    ASSERT_EQ(editor.version(), MonitorConfigVersion::v2);
    editor.remove("output_dir");
    EXPECT_EQ(editor.version(), MonitorConfigVersion::v2);
    EXPECT_EQ(row(editor.rows(), "dynamic_on"), nullptr);
    EXPECT_NE(row(editor.rows(), "stop_step"), nullptr);
}

}  // namespace
}  // namespace msmon::test
