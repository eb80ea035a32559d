// A SAX handler that builds the ordered_json itself: keys are appended to the object's vector, and a hash index
// per object (made once it holds more than a few keys) finds a repeated key.
#include "core/config/ordered_json_parse.hpp"

#include <memory>
#include <unordered_map>
#include <vector>

namespace msmon {

namespace {

using ojson = nlohmann::ordered_json;

class Builder final : public nlohmann::json_sax<ojson> {
public:
    explicit Builder(ojson& root) : root_(root) {}
    std::string error;

    bool null() override { return put(ojson(nullptr)) != nullptr; }
    bool boolean(bool v) override { return put(ojson(v)) != nullptr; }
    bool number_integer(number_integer_t v) override { return put(ojson(v)) != nullptr; }
    bool number_unsigned(number_unsigned_t v) override { return put(ojson(v)) != nullptr; }
    bool number_float(number_float_t v, const string_t&) override { return put(ojson(v)) != nullptr; }
    bool string(string_t& v) override { return put(ojson(std::move(v))) != nullptr; }
    bool binary(binary_t& v) override { return put(ojson::binary(v)) != nullptr; }
    bool start_object(std::size_t) override {
        ojson* o = put(ojson::object());
        open_.push_back({o, {}});
        return true;
    }
    bool key(string_t& k) override {
        Open& top = open_.back();
        // The object is a vector of (key, value) under ordered_map: appended to directly, found through the index.
        auto& items = static_cast<ojson::object_t::Container&>(*top.value->get_ptr<ojson::object_t*>());
        if (items.size() >= kIndexFrom && top.index.empty())
            for (std::size_t i = 0; i < items.size(); ++i) top.index.emplace(items[i].first, i);
        std::size_t at = items.size();
        if (!top.index.empty() || items.size() >= kIndexFrom) {
            if (auto it = top.index.find(k); it != top.index.end()) at = it->second;
        } else {
            for (std::size_t i = 0; i < items.size(); ++i)
                if (items[i].first == k) at = i;
        }
        if (at == items.size()) {
            if (items.size() >= kIndexFrom) top.index.emplace(k, at);
            items.emplace_back(std::move(k), nullptr);
        }
        slot_ = &items[at].second;
        return true;
    }
    bool end_object() override {
        open_.pop_back();
        return true;
    }
    bool start_array(std::size_t) override {
        ojson* a = put(ojson::array());
        open_.push_back({a, {}});
        return true;
    }
    bool end_array() override {
        open_.pop_back();
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
        error = e.what();
        return false;
    }

private:
    static constexpr std::size_t kIndexFrom = 16;
    struct Open {
        ojson* value;
        std::unordered_map<std::string, std::size_t> index;
    };
    // Places a value where the parse stands: the root, an array's next element, or the slot the last key made.
    ojson* put(ojson&& v) {
        if (open_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        ojson* parent = open_.back().value;
        if (parent->is_array()) {
            parent->get_ptr<ojson::array_t*>()->push_back(std::move(v));
            return &parent->get_ptr<ojson::array_t*>()->back();
        }
        *slot_ = std::move(v);
        return slot_;
    }
    ojson& root_;
    std::vector<Open> open_;
    ojson* slot_ = nullptr;
};

}  // namespace

bool parse_ordered_json(std::string_view text, nlohmann::ordered_json& out, std::string& error) {
    ojson doc;
    Builder b(doc);
    try {
        if (!ojson::sax_parse(text.begin(), text.end(), &b)) {
            error = b.error.empty() ? "not valid JSON" : b.error;
            return false;
        }
    } catch (const ojson::exception& e) {
        error = e.what();
        return false;
    }
    out = std::move(doc);
    return true;
}

}  // namespace msmon
