// Health: the checkpoint to resume from, the job's stop, spikes and data skips against thresholds, embedding
// norm, each rank's progress — as one scrollable page; `c` turns it to the run's config (text summaries).
#pragma once

#include "tui/models/health_model.hpp"
#include "tui/models/run_config_model.hpp"
#include "tui/views/view.hpp"

namespace msmon::tui {

class HealthView final : public View {
public:
    HealthView();
    const char* title() const override { return "Health"; }
    const KeyTable& keys() const override { return keys_; }
    KeyTable& own_keys() override { return keys_; }
    bool back() override;
    void collect(Reader& reader) override;
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) override;

private:
    HealthModel model_;
    RunConfigModel config_;
    KeyTable keys_;
    int scroll_ = 0;
    bool show_config_ = false;  // the run-config page instead of the health page
    int health_scroll_ = 0;
    int page_rows_ =
        10;  // PgDn/PgUp: the last height drawn     // where the health page was when the run-config page opened
};

}  // namespace msmon::tui
