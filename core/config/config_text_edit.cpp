// Edits in place: the text is scanned for the byte spans of its objects' members, and each change becomes one
// replacement of a span. The replacements are applied from the end of the text backwards.
#include "core/config/config_text_edit.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "core/config/config_file.hpp"
#include "core/config/config_patch.hpp"
#include "core/config/ordered_json_parse.hpp"

namespace msmon {

namespace {

using json = nlohmann::ordered_json;

struct Member {
    std::string key;
    std::size_t begin = 0;        // the key's opening quote
    std::size_t key_end = 0;      // one past its closing quote
    std::size_t value_begin = 0;  // the value's first byte
    std::size_t value_end = 0;    // one past the value's last byte
};

struct Replacement {
    std::size_t begin, end;
    std::string text;
};

// A scanner over text already known to be one JSON document: it finds where values begin and end.
class Spans {
public:
    explicit Spans(std::string_view text) : text_(text) {}

    std::size_t skip_space(std::size_t p) const {
        while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t' || text_[p] == '\n' || text_[p] == '\r')) ++p;
        return p;
    }

    // One past the end of the value starting at p (nullopt if the text is not what it should be).
    std::optional<std::size_t> value_end(std::size_t p) const {
        if (p >= text_.size()) return std::nullopt;
        const char c = text_[p];
        if (c == '"') return string_end(p);
        if (c == '{' || c == '[') {
            const char close = c == '{' ? '}' : ']';
            p = skip_space(p + 1);
            if (p < text_.size() && text_[p] == close) return p + 1;
            while (true) {
                if (c == '{') {
                    const auto k = string_end(p);
                    if (!k) return std::nullopt;
                    p = skip_space(*k);
                    if (p >= text_.size() || text_[p] != ':') return std::nullopt;
                    p = skip_space(p + 1);
                }
                const auto v = value_end(p);
                if (!v) return std::nullopt;
                p = skip_space(*v);
                if (p >= text_.size()) return std::nullopt;
                if (text_[p] == close) return p + 1;
                if (text_[p] != ',') return std::nullopt;
                p = skip_space(p + 1);
            }
        }
        while (p < text_.size() && std::string_view(",]} \t\r\n").find(text_[p]) == std::string_view::npos) ++p;
        return p;
    }

    // The members of the object whose '{' is at p, in text order.
    std::optional<std::vector<Member>> members(std::size_t p) const {
        std::vector<Member> out;
        p = skip_space(p + 1);
        if (p < text_.size() && text_[p] == '}') return out;
        while (p < text_.size()) {
            Member m;
            m.begin = p;
            const auto k = string_end(p);
            if (!k) return std::nullopt;
            m.key_end = *k;
            try {
                m.key = nlohmann::json::parse(text_.substr(p, *k - p)).get<std::string>();
            } catch (const std::exception&) {
                return std::nullopt;
            }
            p = skip_space(*k);
            if (p >= text_.size() || text_[p] != ':') return std::nullopt;
            m.value_begin = skip_space(p + 1);
            const auto v = value_end(m.value_begin);
            if (!v) return std::nullopt;
            m.value_end = *v;
            out.push_back(std::move(m));
            p = skip_space(*v);
            if (p < text_.size() && text_[p] == '}') return out;
            if (p >= text_.size() || text_[p] != ',') return std::nullopt;
            p = skip_space(p + 1);
        }
        return std::nullopt;
    }

    // The blanks that start the line holding p.
    std::string line_indent(std::size_t p) const {
        std::size_t start = text_.rfind('\n', p == 0 ? 0 : p - 1);
        start = start == std::string_view::npos ? 0 : start + 1;
        std::size_t end = start;
        while (end < text_.size() && (text_[end] == ' ' || text_[end] == '\t')) ++end;
        return std::string(text_.substr(start, end - start));
    }

    std::string_view slice(std::size_t b, std::size_t e) const { return text_.substr(b, e - b); }

private:
    std::optional<std::size_t> string_end(std::size_t p) const {
        if (p >= text_.size() || text_[p] != '"') return std::nullopt;
        for (++p; p < text_.size(); ++p) {
            if (text_[p] == '\\') ++p;
            else if (text_[p] == '"') return p + 1;
        }
        return std::nullopt;
    }

    std::string_view text_;
};

// How the file writes things, learnt from its text.
struct Style {
    std::string unit = "  ";     // one level of indentation
    std::string newline = "\n";  // "\r\n" in a file written on Windows
};

// A value in the file's style: on one line as Python's json.dumps writes it ("[\"min\", \"max\"]"), or over
// several lines indented from `indent` by the file's unit.
std::string render_value(const json& v, bool multiline, const std::string& indent, const Style& style) {
    if (!v.is_structured() || v.empty()) return v.dump();
    const bool object = v.is_object();
    std::string out(1, object ? '{' : '[');
    const std::string inner = indent + style.unit;
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += multiline ? "," : ", ";
        first = false;
        if (multiline) out += style.newline + inner;
        if (object) out += json(it.key()).dump() + ": ";
        out += render_value(*it, multiline, inner, style);
    }
    if (multiline) out += style.newline + indent;
    out += object ? '}' : ']';
    return out;
}

class Editor {
public:
    Editor(std::string_view text, Style style) : spans_(text), style_(std::move(style)) {}

    // Adds the replacements that turn the value spanning [begin, end) from `before` into `after`.
    bool edit(std::size_t begin, std::size_t end, const json& before, const json& after, bool in_multiline) {
        if (same_config_value(before, after)) return true;
        const bool multiline = spans_.slice(begin, end).find('\n') != std::string_view::npos;
        if (before.is_object() && after.is_object() && !before.empty()) return edit_object(begin, before, after);
        out_.push_back({begin, end,
                        render_value(after, multiline || (!before.is_structured() && in_multiline),
                                     spans_.line_indent(begin), style_)});
        return true;
    }

    std::vector<Replacement>& replacements() { return out_; }

private:
    bool edit_object(std::size_t begin, const json& before, const json& after) {
        const auto found = spans_.members(begin);
        if (!found || found->size() != before.size()) return false;  // a repeated key: not edited in place
        const std::vector<Member>& m = *found;
        // How this object separates its members, and whether it spans lines.
        const std::string sep = m.size() > 1 ? std::string(spans_.slice(m[0].value_end, m[1].begin))
                                             : "," + std::string(spans_.slice(begin + 1, m[0].begin));
        const std::string colon(spans_.slice(m[0].key_end, m[0].value_begin));
        const bool multiline = sep.find('\n') != std::string::npos;
        std::optional<std::size_t> last_kept;
        for (std::size_t i = 0; i < m.size(); ++i) {
            const auto now = after.find(m[i].key);
            if (now == after.end()) continue;
            if (!edit(m[i].value_begin, m[i].value_end, before.at(m[i].key), *now, multiline)) return false;
            last_kept = i;
        }
        if (!last_kept) {  // every key removed (and maybe others added): the object is written anew
            out_.push_back(
                {begin, *spans_.value_end(begin), render_value(after, multiline, spans_.line_indent(begin), style_)});
            return true;
        }
        // Removed members: a leading run goes with the separator after it, any other with the separator before.
        std::size_t first_kept = 0;
        while (!after.contains(m[first_kept].key)) ++first_kept;
        if (first_kept > 0) out_.push_back({m[0].begin, m[first_kept].begin, ""});
        for (std::size_t i = first_kept + 1; i < m.size(); ++i)
            if (!after.contains(m[i].key)) out_.push_back({m[i - 1].value_end, m[i].value_end, ""});
        // Added keys go after the last kept one, as msprobe's own write-back appends them.
        std::string added;
        const std::string indent = spans_.line_indent(m[*last_kept].begin);
        for (auto it = after.begin(); it != after.end(); ++it)
            if (!before.contains(it.key()))
                added += sep + json(it.key()).dump() + colon + render_value(*it, multiline, indent, style_);
        if (!added.empty()) out_.push_back({m[*last_kept].value_end, m[*last_kept].value_end, added});
        return true;
    }

    Spans spans_;
    Style style_;
    std::vector<Replacement> out_;
};

Style style_of(std::string_view text, std::size_t root) {
    Style s;
    if (text.find("\r\n") != std::string_view::npos) s.newline = "\r\n";
    const Spans spans(text);
    if (const auto m = spans.members(root); m && !m->empty()) {
        const std::string indent = spans.line_indent((*m)[0].begin);
        if (!indent.empty() && indent.size() < 16 && spans.slice(root, (*m)[0].begin).find('\n') != std::string::npos)
            s.unit = indent;
    }
    return s;
}

}  // namespace

std::optional<std::string> edit_config_text_in_place(std::string_view text, const json& before, const json& after) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // msprobe's json.load would reject it
    const Spans spans(text);
    const std::size_t root = spans.skip_space(0);
    const auto root_end = spans.value_end(root);
    if (!before.is_object() || !after.is_object() || !root_end || text[root] != '{') return std::nullopt;
    Editor editor(text, style_of(text, root));
    if (!editor.edit(root, *root_end, before, after, true)) return std::nullopt;
    auto& reps = editor.replacements();
    // From the end backwards; at one position a removal is applied before the insertion that precedes it.
    std::stable_sort(reps.begin(), reps.end(), [](const Replacement& a, const Replacement& b) {
        return a.begin != b.begin ? a.begin > b.begin : a.end > b.end;
    });
    std::string out(text);
    for (const auto& r : reps) out.replace(r.begin, r.end - r.begin, r.text);
    return out;
}

std::string edit_config_text(std::string_view text, const json& before, const json& after) {
    auto out = edit_config_text_in_place(text, before, after);
    if (!out) return render_monitor_config(after);
    if (out->size() <= kVerifiedEditBytes) {
        json check;
        std::string error;
        if (!parse_ordered_json(*out, check, error) || check != after) return render_monitor_config(after);
    }
    return std::move(*out);
}

}  // namespace msmon
