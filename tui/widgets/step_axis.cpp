#include "tui/widgets/step_axis.hpp"

#include <string>

namespace msmon::tui {

void draw_step_axis(ScreenBuffer& buf, int x0, int y, const StepColumns& split, const Style& style) {
    const int columns = split.columns();
    const std::string left = std::to_string(split.lo()), right = std::to_string(split.hi());
    const int left_w = static_cast<int>(left.size()), right_w = static_cast<int>(right.size());
    buf.text(x0, y, left, style, columns);
    const int right_x = x0 + columns - right_w;
    const int mid_col = columns / 2;
    const std::string mid = std::to_string(split.first_step(mid_col));
    const int mid_x = x0 + mid_col - static_cast<int>(mid.size()) / 2;
    if (mid_x > x0 + left_w + 1 && mid_x + static_cast<int>(mid.size()) + 1 < right_x)
        buf.text(mid_x, y, mid, style, static_cast<int>(mid.size()));
    if (right_x > x0 + left_w) buf.text(right_x, y, right, style, right_w);
}

}  // namespace msmon::tui
