#include "core/text/shared_text.hpp"

#include <mutex>
#include <unordered_map>

namespace msmon {

SharedText share_text(std::string_view text) {
    static std::mutex mutex;
    static std::unordered_map<std::string_view, SharedText> pool;  // keys view the pooled strings
    if (text.empty()) return nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = pool.find(text); it != pool.end()) return it->second;
    auto shared = std::make_shared<const std::string>(text);
    pool.emplace(std::string_view(*shared), shared);
    return shared;
}

}  // namespace msmon
