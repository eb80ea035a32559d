// A job written by an earlier msprobe, under a custom MONITOR_OUTPUT_DIR name: its dump's alert (the message ends
// at the step, the tag names the activation's side) is the incident, and Enter charts the series it names.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

TEST(TuiEarlierMsprobe, an_alert_in_the_earlier_form_is_the_incident_and_enter_charts_its_series) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    const std::string out = tmp / "job/probe/run1";  // MONITOR_OUTPUT_DIR=probe/run1
    std::filesystem::create_directories(out + "/Nov22_13-55-47-rank0-426b92d1");
    std::filesystem::create_directories(out + "/anomaly_detected/rank0");
    std::string csv = "vpp_stage,name,step,micro_step,min,max,norm\n";
    for (int s = 0; s < 12; ++s) {
        csv += "0,1.self_attention.core_attention_flash_0.input," + std::to_string(s) + ",0," +
               (s == 7 ? "-40.0" : "-0.5") + ",0.5,1.0\n";
        csv += "0,1.mlp.output," + std::to_string(s) + ",0,-0.3,0.3,0.7\n";
    }
    write_file(out + "/Nov22_13-55-47-rank0-426b92d1/actv_grad_0-11.csv", csv);
    write_file(out + "/anomaly_detected/rank0/anomaly.json", R"({
 "0:1.self_attention.core_attention_flash_0/rank0/input_grad_min_step7": {
  "rank": 0, "step": 7, "micro_step": 0, "pp_stage": 0, "vpp_stage": 0, "call_id": 0,
  "tag_name": "0:1.self_attention.core_attention_flash_0/rank0/input_grad",
  "message": "Rule AnomalyTurbulence reports anomaly signal in ('0:1.self_attention.core_attention_flash_0/rank0/input_grad', 'min') at step 7.",
  "group_mates": [0]
 }
})");
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "s.db"), 120, 32, tmux_env(tmp));
    ASSERT_FALSE(t.wait_for("steps 0-11", TmuxSession::settle_limit()).empty()) << t.capture();
    t.send_keys("3", true);
    std::string screen = t.wait_for("1 incident, 1 anomaly", TmuxSession::settle_limit());
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("7    0 actv_grad    AnomalyTurbulence"), std::string::npos) << screen;
    EXPECT_NE(screen.find("1.self_attention.core_attention_flash_0.input"), std::string::npos) << screen;
    t.send_keys("Enter");
    screen = t.wait_for("step 7: rank 0=-40", TmuxSession::settle_limit());
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("actv_grad min 1.self_attention.core_attention_flash_0.input"), std::string::npos) << screen;
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test
