// Anomalies view: table drawing, keys, drill-down.
#include "tui/views/anomalies_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/text/number_text.hpp"

namespace msmon::tui {

namespace {

std::string short_number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

std::string short_rule(const std::string& rule) {
    if (rule == "AnomalyTurbulence") return "Turbulence";
    if (rule == "AnomalyNan") return "Nan";
    if (rule == "CrossRankOutlier") return "RankOutlier";
    if (rule == "GlobalNormSpike") return "GNormSpike";
    if (rule == "EmbeddingNormHigh") return "EmbedHigh";
    if (rule == "StalledRank") return "Stalled";
    return rule;
}

// The end of a long name is the specific part: "…layers.1.fc1.weight" ("~" without Unicode).
std::string tail_of(const std::string& s, int width, bool unicode) {
    if (width <= 0) return "";
    if (static_cast<int>(s.size()) <= width) return s;
    return (unicode ? "\xE2\x80\xA6" : "~") + s.substr(s.size() - static_cast<std::size_t>(width - 1));
}

std::string regex_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out.push_back('\\');
        out.push_back(c);
    }
    return out;
}

}  // namespace

AnomaliesView::AnomaliesView(SharedSelection& shared, std::function<void()> open_chart)
    : shared_(shared), open_chart_(std::move(open_chart)) {
    keys_ = {
        {{kKeyDown, 'j'}, "j/Down", "next anomaly", [this] { return move(1); }},
        {{kKeyUp, 'k'}, "k/Up", "previous anomaly", [this] { return move(-1); }},
        {{kKeyPageDown}, "PgDn", "next page", [this] { return move(rows_visible_); }},
        {{kKeyPageUp}, "PgUp", "previous page", [this] { return move(-rows_visible_); }},
        {{kKeyEnter}, "Enter", "chart at this step: this rank bright, the others faint", [this] { return drill(); }},
        {{'s'}, "s", "sort: rank, first anomaly (msprobe's order), step, rank#, rule, kind, name, value, source",
         [this] {
             options_.sort = static_cast<AnomalySort>((static_cast<int>(options_.sort) + 1) % 9);
             options_.descending = false;
             return changed(true);  // a new order starts at its first row
         }},
        {{'S'}, "S", "reverse the order", [this] {
             options_.descending = !options_.descending;
             return changed(true);
         }},
        {{'g'}, "g", "group repeats of one tensor into one row (count in #)", [this] {
             options_.group = !options_.group;
             return changed(false);
         }},
        {{'f'}, "f", "source: all, msprobe's dumps, msmon's detections", [this] {
             auto& s = options_.filter.source;
             s = !s ? std::optional<std::string>("msprobe") : *s == "msprobe" ? std::optional<std::string>("detected") : std::nullopt;
             return changed(false);
         }},
        {{'u'}, "u", "only this rule (again: all rules)", [this] {
             const auto* a = selected();
             return a ? toggle(options_.filter.rule, a->rule) : Reaction::none;
         }},
        {{'R'}, "R", "only this rank (again: all ranks)", [this] {
             const auto* a = selected();
             return a ? toggle(options_.filter.rank, a->rank) : Reaction::none;
         }},
        {{'K'}, "K", "only this kind (again: all kinds)", [this] {
             const auto* a = selected();
             return a ? toggle(options_.filter.kind, a->kind) : Reaction::none;
         }},
        {{'c'}, "c", "clear every filter", [this] {
             options_.filter = {};
             return changed(false);
         }},
    };
}

template <typename T>
Reaction AnomaliesView::toggle(std::optional<T>& slot, const T& value) {
    if (slot && *slot == value) slot.reset();
    else slot = value;
    return changed(false);
}

bool AnomaliesView::pageable() const {
    return options_.group && options_.sort == AnomalySort::score && !options_.descending && !options_.filter.steps;
}

Reaction AnomaliesView::changed(bool to_top) {
    if (to_top) {
        selected_ = top_ = 0;
        forget_selection_ = true;
    }
    if (paged_ || pageable()) return Reaction::reload;  // the store orders and pages this view: ask it again
    rebuild();
    if (to_top) {
        selected_ = top_ = 0;
        forget_selection_ = false;
    }
    return Reaction::redraw;
}

void AnomaliesView::set_list(std::vector<AnomalyRecord> list) {
    const std::string key = selection_key();  // of the old list: new data may shift every index
    paged_ = false;
    list_ = std::move(list);
    rebuild_keeping(key);
}

void AnomaliesView::rebuild() {
    if (!paged_) rebuild_keeping(selection_key());  // paged: the next collect() asks the store
}

// Grouped, a row is its group (a new, higher-ranked member may become its face); else one anomaly.
std::string AnomaliesView::selection_key() const {
    const AnomalyRecord* a = selected();
    if (!a) return std::string();
    std::string key = a->source + '\x1f' + a->rule + '\x1f' + std::to_string(a->rank) + '\x1f' + a->kind + '\x1f' +
                      a->name + '\x1f' + a->op;
    if (!options_.group) key += '\x1f' + a->tag_name + '\x1f' + std::to_string(a->step);
    return key;
}

void AnomaliesView::rebuild_keeping(const std::string& key) {
    // Keep the selected anomaly selected across re-sorts and new data.
    rows_ = build_anomaly_rows(list_, options_);
    total_rows_ = rows_.size();
    total_anomalies_ = list_.size();
    select_key(key);
}

void AnomaliesView::select_key(const std::string& key) {
    const std::size_t previous = selected_;
    if (!key.empty())
        for (std::size_t i = 0; i < rows_.size(); ++i) {
            selected_ = i;
            if (selection_key() == key) return;
        }
    selected_ = previous;  // gone: stay at the same position
    if (selected_ >= rows_.size()) selected_ = rows_.empty() ? 0 : rows_.size() - 1;
}

const AnomalyRecord* AnomaliesView::selected() const {
    return selected_ < rows_.size() ? &list_[rows_[selected_].first] : nullptr;
}

void AnomaliesView::collect(Reader& reader) {
    reader_ = &reader;
    const std::string key = forget_selection_ ? std::string() : selection_key();
    forget_selection_ = false;
    if (pageable()) {
        // The default view: the store keeps the groups in this order; read what the screen can reach.
        const auto& f = options_.filter;
        AnomalyGroupRequest req{f.source, f.rule, f.kind, f.rank, f.name_regex, 0,
                                std::max(selected_, top_) + 3 * static_cast<std::size_t>(rows_visible_) + 64};
        AnomalyGroupPage page = reader.anomaly_groups(req);
        paged_ = true;
        list_.clear();
        rows_.clear();
        for (auto& g : page.groups) {
            rows_.push_back({list_.size(), g.count, g.first_step, g.last_step, g.rank_score});
            list_.push_back(std::move(g.face));
        }
        total_rows_ = static_cast<std::size_t>(page.total_groups);
        total_anomalies_ = static_cast<std::size_t>(page.total_anomalies);
        select_key(key);
    } else {
        paged_ = false;
        list_ = reader.anomalies({});
        rebuild_keeping(key);
    }
    if (const auto* a = selected(); a && detail_for_ != std::to_string(a->rank) + a->name) {
        detail_ = reader.module_info(a->rank, a->name);
        detail_for_ = std::to_string(a->rank) + a->name;
    }
}

Reaction AnomaliesView::move(long delta) {
    if (total_rows_ == 0) return Reaction::none;
    selected_ = static_cast<std::size_t>(std::clamp<long>(static_cast<long>(selected_) + delta, 0, static_cast<long>(total_rows_) - 1));
    if (selected_ >= rows_.size()) return Reaction::reload;  // paged: beyond what was read
    if (const auto* a = selected(); a && reader_ && detail_for_ != std::to_string(a->rank) + a->name) {
        detail_ = reader_->module_info(a->rank, a->name);  // one indexed lookup; keeps the pane current
        detail_for_ = std::to_string(a->rank) + a->name;
    }
    return Reaction::redraw;
}

Reaction AnomaliesView::drill() {
    const AnomalyRecord* a = selected();
    if (!a || a->kind.empty()) return Reaction::none;
    // The chart's own selection: the Overview's statistic, filter and selected rank stay as they were.
    ChartDrill drill;
    drill.series = {a->kind, a->op == "seconds" ? "norm" : a->op, "^" + regex_escape(a->name) + "$"};
    drill.rank = a->rank;
    shared_.focus_step = a->step;
    std::vector<AnomalyRecord> of_rank;
    if (paged_ && reader_) {  // paged: list_ holds only the faces read; the rank's anomalies give every step
        AnomalyFilter f;
        f.rank = a->rank;
        of_rank = reader_->anomalies(f);
    }
    auto& steps = drill.anomaly_steps;
    for (const auto& b : paged_ ? of_rank : list_)
        if (b.rank == a->rank && b.kind == a->kind && b.name == a->name) steps.push_back(b.step);
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    shared_.drill = std::move(drill);
    open_chart_();
    return Reaction::reload;
}

bool AnomaliesView::set_filter(const std::optional<std::string>& regex) {
    options_.filter.name_regex = regex;
    rebuild();
    return true;
}

bool AnomaliesView::command(const std::string& verb, const std::string& arg, std::string& error) {
    auto& f = options_.filter;
    if (verb == "rule") f.rule = arg.empty() ? std::nullopt : std::optional<std::string>(arg);
    else if (verb == "kind") f.kind = arg.empty() ? std::nullopt : std::optional<std::string>(arg);
    else if (verb == "source") f.source = arg.empty() || arg == "all" ? std::nullopt : std::optional<std::string>(arg);
    else if (verb == "rank") f.rank = arg.empty() ? std::nullopt : std::optional<int>(std::atoi(arg.c_str()));
    else if (verb == "steps") {
        if (arg.empty()) {
            f.steps.reset();
        } else {
            auto list = StepList::parse(arg, error);
            if (!list) return true;
            f.steps = list;
        }
    } else {
        return false;
    }
    rebuild();
    return true;
}

Reaction AnomaliesView::click(int, int y) {
    if (y < list_y_) return Reaction::none;
    const std::size_t row = top_ + static_cast<std::size_t>(y - list_y_);
    if (row >= rows_.size()) return Reaction::none;
    selected_ = row;
    return Reaction::redraw;
}

void AnomaliesView::draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) {
    const Style head{Color::accent, Color::none, kBold};
    const Style dim{Color::dim, Color::none, kPlain};
    const auto& f = options_.filter;
    std::string title = std::string("sort ") + anomaly_sort_name(options_.sort) + (options_.descending ? " (reversed)" : "") +
                        (options_.group ? "  grouped" : "");
    if (f.source) title += "  source " + *f.source;
    if (f.rule) title += "  rule " + *f.rule;
    if (f.rank) title += "  rank " + std::to_string(*f.rank);
    if (f.kind) title += "  kind " + *f.kind;
    if (f.steps) title += "  steps " + std::to_string(f.steps->min()) + "-" + std::to_string(f.steps->max());
    if (f.name_regex) title += "  /" + *f.name_regex + "/";
    title += "  " + std::to_string(total_rows_) + " rows of " + std::to_string(total_anomalies_);
    buf.text(x, y, title, head, width);
    const int detail_h = height >= 16 ? 4 : 0;
    const int list_h = std::max(0, height - 2 - detail_h);
    const int name_w = std::max(8, width - 68);
    char hdr[256];
    std::snprintf(hdr, sizeof hdr, " %6s %4s %-11s %-12s %-5s %9s %9s %-3s %4s %s", "step", "rank", "rule", "kind", "op",
                  "value", "ref", "src", "#", "name");
    buf.text(x, y + 1, hdr, dim, width);
    rows_visible_ = std::max(1, list_h);
    list_y_ = y + 2;
    if (selected_ < top_) top_ = selected_;
    if (selected_ >= top_ + static_cast<std::size_t>(rows_visible_)) top_ = selected_ - static_cast<std::size_t>(rows_visible_) + 1;
    if (rows_.empty()) buf.text(x + 1, y + 2, total_anomalies_ == 0 ? "no anomalies" : "no anomalies match the filters", dim, width - 1);
    for (int r = 0; r < list_h && top_ + static_cast<std::size_t>(r) < rows_.size(); ++r) {
        const std::size_t pos = top_ + static_cast<std::size_t>(r);
        const AnomalyRow& row = rows_[pos];
        const AnomalyRecord& a = list_[row.first];
        const bool sel = pos == selected_;
        const Color c = std::isnan(a.value) || a.rule == "StalledRank" || a.rule == "CrossRankOutlier" ? Color::bad
                        : row.rank_score >= 20                                                          ? Color::warn
                                                                                                        : Color::none;
        const Style st{c, Color::none, static_cast<std::uint8_t>(sel ? kReverse : kPlain)};
        char line[256];
        std::snprintf(line, sizeof line, "%s%6lld %4d %-11.11s %-12.12s %-5.5s %9s %9s %-3s %4d ", sel ? ">" : " ",
                      static_cast<long long>(a.step), a.rank, short_rule(a.rule).c_str(), a.kind.c_str(), a.op.c_str(),
                      short_number(a.value).c_str(), a.reference ? short_number(*a.reference).c_str() : "-",
                      a.source == "msprobe" ? "msp" : "msm", row.count);
        const int used = buf.text(x, y + 2 + r, line, st, width);
        buf.text(x + used, y + 2 + r,
                 tail_of(a.name + (a.micro_step && a.kind.rfind("actv", 0) == 0 ? ":" + std::to_string(*a.micro_step) : ""),
                         name_w, glyphs.unicode),
                 st, width - used);
    }
    if (detail_h == 0) return;
    const int dy = y + height - detail_h;
    buf.fill(x, dy, width, 1, glyphs.unicode ? U'\u2500' : U'-', dim);
    const AnomalyRecord* a = selected();
    if (!a) return;
    buf.text(x, dy + 1, a->message, {}, width);
    std::string where = detail_.module.empty() ? "module: not in module_struct.json or stack_info.csv"
                                               : "module " + detail_.module + "  " + detail_.structure;
    buf.text(x, dy + 2, where, dim, width);
    std::string stack = detail_.stack;
    while (!stack.empty() && (stack.back() == '\n' || stack.back() == ' ')) stack.pop_back();
    const auto cut = stack.rfind("\nFile ");
    buf.text(x, dy + 3, stack.empty() ? "code: no stack_info.csv entry" : "code: " + stack.substr(cut == std::string::npos ? 0 : cut + 1), dim,
             width);
}

}  // namespace msmon::tui
