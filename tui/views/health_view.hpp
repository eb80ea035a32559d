// Health: the checkpoint to resume from, the job's stop, spikes and data skips against thresholds, embedding
// norm, each rank's progress — as one scrollable page.
#pragma once

#include "tui/models/health_model.hpp"
#include "tui/views/view.hpp"

namespace msmon::tui {

class HealthView final : public View {
public:
    HealthView();
    const char* title() const override { return "Health"; }
    const KeyTable& keys() const override { return keys_; }
    void collect(Reader& reader) override;
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) override;

private:
    HealthModel model_;
    KeyTable keys_;
    int scroll_ = 0;
};

}  // namespace msmon::tui
