// Experts: MoE expert load per layer — a heatmap of experts × steps, the latest load of each expert and the
// layer's imbalance (max / mean), flagged when the router sends most tokens to a few experts.
#pragma once

#include <optional>

#include "tui/models/expert_load_model.hpp"
#include "tui/views/view.hpp"

namespace msmon::tui {

class ExpertLoadView final : public View {
public:
    ExpertLoadView();
    const char* title() const override { return "Experts"; }
    const KeyTable& keys() const override { return keys_; }
    KeyTable& own_keys() override { return keys_; }
    void collect(Reader& reader) override;
    void draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) override;
    const ExpertLoadModel& model() const { return model_; }

private:
    ExpertLoadModel model_;
    KeyTable keys_;
    std::size_t layer_ = 0;
    std::optional<int> rank_;      // nullopt: every rank summed
    bool jump_to_flagged_ = true;  // until a layer is chosen (j, k, f), the first flagged layer is shown
};

}  // namespace msmon::tui
