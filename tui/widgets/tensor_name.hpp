// A tensor's name cut to fit a column without losing what tells it apart: the layer and expert numbers
// ("layers.0" from "layers.1") and the module at the end, rather than the wrappers in front
// ("module.module.").
#pragma once

#include <string>

namespace msmon::tui {

// `name` in at most `width` columns. Dotted parts are dropped, each run of them shown as one "…" ("~" without
// Unicode) that stands for the parts and the dot after them: first the ones before the first numbered part,
// then those between numbered parts, then the module before the last part loses its front ("linear_fc1" →
// "…fc1"); a numbered part, the word before it and the last part stay. If that is still too wide, the middle
// is cut.
std::string fit_tensor_name(const std::string& name, int width, bool unicode);

}  // namespace msmon::tui
