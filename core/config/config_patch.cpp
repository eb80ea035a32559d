// Key-path patches over ordered JSON.
#include "core/config/config_patch.hpp"

namespace msmon {

using json = nlohmann::ordered_json;

json apply_patch(json doc, const ConfigPatch& patch) {
    if (!doc.is_object()) doc = json::object();
    for (const auto& change : patch) {
        if (change.path.empty()) continue;
        json* node = &doc;
        for (std::size_t i = 0; i + 1 < change.path.size(); ++i) {
            json& child = (*node)[change.path[i]];
            if (!child.is_object()) child = json::object();
            node = &child;
        }
        const std::string& leaf = change.path.back();
        if (change.value) (*node)[leaf] = *change.value;
        else node->erase(leaf);
    }
    return doc;
}

bool same_config_value(const json& a, const json& b) {
    return a == b && a.is_number_float() == b.is_number_float();
}

namespace {

void diff_into(const json& before, const json& after, std::vector<std::string>& prefix, ConfigPatch& out) {
    for (auto it = after.begin(); it != after.end(); ++it) {
        prefix.push_back(it.key());
        const auto old = before.find(it.key());
        if (old == before.end()) {
            out.push_back({prefix, *it});
        } else if (old->is_object() && it->is_object()) {
            diff_into(*old, *it, prefix, out);
        } else if (!same_config_value(*old, *it)) {
            out.push_back({prefix, *it});
        }
        prefix.pop_back();
    }
    for (auto it = before.begin(); it != before.end(); ++it)
        if (!after.contains(it.key())) {
            prefix.push_back(it.key());
            out.push_back({prefix, std::nullopt});
            prefix.pop_back();
        }
}

}  // namespace

ConfigPatch diff_configs(const json& before, const json& after) {
    ConfigPatch out;
    std::vector<std::string> prefix;
    if (!before.is_object() || !after.is_object()) {
        if (after.is_object())
            for (auto it = after.begin(); it != after.end(); ++it) out.push_back({{it.key()}, *it});
        return out;
    }
    diff_into(before, after, prefix, out);
    return out;
}

std::string path_text(const std::vector<std::string>& path) {
    std::string out;
    for (const auto& p : path) out += (out.empty() ? "" : ".") + p;
    return out;
}

const json* find_path(const json& doc, const std::vector<std::string>& path) {
    const json* node = &doc;
    for (const auto& key : path) {
        if (!node->is_object()) return nullptr;
        const auto it = node->find(key);
        if (it == node->end()) return nullptr;
        node = &*it;
    }
    return node;
}

std::vector<std::string> describe_patch(const json& before, const ConfigPatch& patch) {
    std::vector<std::string> lines;
    for (const auto& change : patch) {
        const json* old = find_path(before, change.path);
        const std::string from = old ? old->dump() : "(absent)";
        const std::string to = change.value ? change.value->dump() : "(removed)";
        lines.push_back(path_text(change.path) + ": " + from + " → " + to);
    }
    return lines;
}

}  // namespace msmon
