// Anomalies view: incidents and the table, drawing, keys, drill-down.
#include "tui/views/anomalies_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/text/number_text.hpp"
#include "tui/widgets/tensor_name.hpp"

namespace msmon::tui {

namespace {

std::string short_number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

// "1.922 vs 0.01793" in at most `width` columns: fewer digits rather than a number cut short.
std::string value_vs_reference(const AnomalyRecord& a, int width) {
    std::string out;
    for (int digits = 4; digits >= 1; --digits) {
        auto number = [&](double v) {
            if (!std::isfinite(v)) return short_number(v);
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.*g", digits, v);
            std::string t = buf;  // exponents without '+' and leading zeros: "1.2e-5", "3.5e12"
            if (const auto e = t.find('e'); e != std::string::npos) {
                std::size_t d = e + 1;
                if (t[d] == '+') t.erase(d, 1);
                else if (t[d] == '-') ++d;
                while (d + 1 < t.size() && t[d] == '0') t.erase(d, 1);
            }
            return t;
        };
        out = number(a.value) + (a.reference ? " vs " + number(*a.reference) : "");
        if (static_cast<int>(out.size()) <= width) return out;
    }
    return short_number(a.value);  // the reference does not fit even so: the detail pane's message has it
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

// One anomaly, in whichever list it is.
std::string anomaly_identity(const AnomalyRecord& a) {
    return a.source + '\x1f' + a.rule + '\x1f' + std::to_string(a.rank) + '\x1f' + a.kind + '\x1f' + a.name + '\x1f' +
           a.op + '\x1f' + a.tag_name + '\x1f' + std::to_string(a.step);
}

bool same_anomaly(const AnomalyRecord& a, const AnomalyRecord& b) {
    return a.step == b.step && a.rank == b.rank && a.source == b.source && a.rule == b.rule && a.kind == b.kind &&
           a.name == b.name && a.op == b.op && a.tag_name == b.tag_name;
}

// The table's row of an anomaly. Grouped, a row is its group (a new, higher-ranked member may become its face).
std::string table_key(const AnomalyRecord& a, bool grouped) {
    if (!grouped) return anomaly_identity(a);
    return a.source + '\x1f' + a.rule + '\x1f' + std::to_string(a.rank) + '\x1f' + a.kind + '\x1f' + a.name + '\x1f' + a.op;
}

// An incident's row is its origin; a member's row, the origin and the member. Never equal to a table's key.
std::string incident_key(const std::string& origin_identity, const AnomalyRecord* member) {
    return "incident\x1e" + origin_identity + (member ? "\x1e" + anomaly_identity(*member) : std::string());
}

Color row_color(const AnomalyRecord& a, double score) {
    if (std::isnan(a.value) || a.rule == "StalledRank" || a.rule == "CrossRankOutlier") return Color::bad;
    return score >= 20 ? Color::warn : Color::none;
}

std::string steps_text(std::int64_t first, std::int64_t last) {
    if (last <= first) return std::to_string(first);
    std::string s = std::to_string(first) + "-" + std::to_string(last);
    return s.size() <= 7 ? s : std::to_string(first) + "+" + std::to_string(last - first);
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

AnomaliesView::AnomaliesView(SharedSelection& shared, IncidentIndex& incidents, std::function<void()> open_chart)
    : shared_(shared), incidents_(incidents), open_chart_(std::move(open_chart)) {
    // The hint bar shows the first four: what this tab is for comes first.
    keys_ = {
        {{kKeyEnter}, "Enter", "chart (the origin, or the anomaly, on its rank at its step)",
         [this] { return drill(); }},
        {{' '}, "Space", "expand (the origin, then in training order); again: collapse",
         [this] { return toggle_expanded(); }},
        {{'i'}, "i", "incidents or every anomaly (the table s sorts)", [this] { return show_incidents(!incident_mode_, true); }},
        {{'s'}, "s", "sort (incidents, rank, first anomaly: msprobe's order, step, rank#, rule, kind, name, value, source)",
         [this] {
             // A new order starts at its first row.
             if (incident_mode_) {
                 options_.sort = AnomalySort::score;
                 options_.descending = false;
                 return show_incidents(false, false);
             }
             if (options_.sort == AnomalySort::source) return show_incidents(true, false);
             options_.sort = static_cast<AnomalySort>(static_cast<int>(options_.sort) + 1);
             options_.descending = false;
             return changed(true);
         }},
        {{kKeyDown, 'j'}, "j/Down", "next row", [this] { return move(1); }},
        {{kKeyUp, 'k'}, "k/Up", "previous row", [this] { return move(-1); }},
        {{kKeyPageDown}, "PgDn", "next page", [this] { return move(rows_visible_); }},
        {{kKeyPageUp}, "PgUp", "previous page", [this] { return move(-rows_visible_); }},
        {{'S'}, "S", "reverse the table's order", [this] {
             options_.descending = !options_.descending;
             return incident_mode_ ? show_incidents(false, false) : changed(true);
         }},
        {{'g'}, "g", "table: group repeats of one tensor into one row (count in #)", [this] {
             options_.group = !options_.group;
             return incident_mode_ ? show_incidents(false, true) : changed(false);
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
        {{'c'}, "c", "clear every filter (filters keep incidents with a passing anomaly)", [this] {
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
    if (!incidents_shown() && (paged_ || pageable())) return Reaction::reload;  // the store orders and pages this view
    rebuild();
    if (to_top) {
        selected_ = top_ = 0;
        forget_selection_ = false;
    }
    return Reaction::redraw;
}

Reaction AnomaliesView::show_incidents(bool on, bool keep_selection) {
    carried_.reset();
    if (const auto* a = selected(); a && keep_selection) carried_ = *a;  // found again in the other list once read
    incident_mode_ = on;
    incident_rows_stale_ = true;
    selected_ = top_ = 0;
    forget_selection_ = true;
    return Reaction::reload;
}

void AnomaliesView::set_list(std::vector<AnomalyRecord> list) {
    const std::string key = incidents_shown() ? std::string() : selection_key();  // of the old list
    incident_mode_ = false;
    paged_ = false;
    list_ = std::move(list);
    rebuild_keeping(key);
}

void AnomaliesView::rebuild() {
    if (incidents_shown()) {
        rebuild_incidents_keeping(selection_key());
        return;
    }
    incident_rows_stale_ = true;  // the options may have changed: incidents are built again when shown
    if (!paged_) rebuild_keeping(selection_key());  // paged: the next collect() asks the store
}

std::string AnomaliesView::selection_key() const {
    if (incidents_shown()) {
        if (selected_ >= incident_rows_.size() || !shown_) return std::string();
        const IncidentRow& row = incident_rows_[selected_];
        const auto& list = shown_->anomalies;
        return incident_key(anomaly_identity(list[shown_->incidents[row.incident].origin]),
                            row.member ? &list[row.record] : nullptr);
    }
    const AnomalyRecord* a = selected();
    return a ? table_key(*a, options_.group) : std::string();
}

void AnomaliesView::rebuild_keeping(const std::string& key) {
    // Keep the selected anomaly selected across re-sorts and new data.
    rows_ = build_anomaly_rows(list_, options_);
    total_rows_ = rows_.size();
    total_anomalies_ = list_.size();
    select_key(key);
}

void AnomaliesView::rebuild_incidents_keeping(const std::string& key) {
    shown_ = incidents_.set();
    incident_rows_stale_ = false;
    const auto& list = shown_->anomalies;
    const auto& incidents = shown_->incidents;
    incident_rows_ = build_incident_rows(list, incidents, options_.filter, [&](std::size_t i) {
        return !expanded_.empty() && expanded_.count(anomaly_identity(list[incidents[i].origin])) > 0;
    });
    incidents_listed_ = static_cast<std::size_t>(
        std::count_if(incident_rows_.begin(), incident_rows_.end(), [](const IncidentRow& r) { return !r.member; }));
    total_rows_ = incident_rows_.size();
    total_anomalies_ = list.size();
    select_key(key);
}

void AnomaliesView::select_key(const std::string& key) {
    const std::size_t previous = selected_;
    const std::size_t n = rows_in_hand();
    if (!key.empty())
        for (std::size_t i = 0; i < n; ++i) {
            selected_ = i;
            if (selection_key() == key) return;
        }
    selected_ = previous;  // gone: stay at the same position
    if (selected_ >= n) selected_ = n == 0 ? 0 : n - 1;
}

void AnomaliesView::select_carried() {
    if (!carried_) return;
    const AnomalyRecord carried = std::move(*carried_);
    carried_.reset();
    if (!incidents_shown()) {
        select_key(table_key(carried, options_.group));
        return;
    }
    if (!shown_) return;
    // The member's own row under an expanded incident, else its incident's row.
    const auto& list = shown_->anomalies;
    const auto& incidents = shown_->incidents;
    for (std::size_t i = 0; i < incident_rows_.size(); ++i) {
        const IncidentRow& row = incident_rows_[i];
        if (row.member ? same_anomaly(list[row.record], carried)
                       : std::any_of(incidents[row.incident].members.begin(), incidents[row.incident].members.end(),
                                     [&](std::size_t m) { return same_anomaly(list[m], carried); })) {
            selected_ = i;
            if (row.member || !row.expanded) return;  // an expanded incident: its member's row follows
        }
    }
}

const AnomalyRecord* AnomaliesView::selected() const {
    if (incidents_shown())
        return selected_ < incident_rows_.size() && shown_ ? &shown_->anomalies[incident_rows_[selected_].record] : nullptr;
    return selected_ < rows_.size() ? &list_[rows_[selected_].first] : nullptr;
}

void AnomaliesView::read_detail() {
    if (const auto* a = selected(); a && reader_ && detail_for_ != std::to_string(a->rank) + a->name) {
        detail_ = reader_->module_info(a->rank, a->name);  // one indexed lookup; keeps the pane current
        detail_for_ = std::to_string(a->rank) + a->name;
    }
}

void AnomaliesView::collect(Reader& reader) {
    reader_ = &reader;
    const std::string key = forget_selection_ ? std::string() : selection_key();  // before the index changes
    forget_selection_ = false;
    incidents_.update(reader);  // one count unless anomalies came in
    if (incidents_shown()) {
        paged_ = false;
        list_.clear();
        rows_.clear();
        // A refresh with no new anomaly leaves the rows as they are (a filter over every member costs).
        if (incident_rows_stale_ || shown_ != incidents_.set()) rebuild_incidents_keeping(key);
    } else if (pageable()) {
        // The default table: the store keeps the groups in this order; read what the screen can reach.
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
    select_carried();
    read_detail();
}

Reaction AnomaliesView::move(long delta) {
    if (total_rows_ == 0) return Reaction::none;
    selected_ = static_cast<std::size_t>(std::clamp<long>(static_cast<long>(selected_) + delta, 0, static_cast<long>(total_rows_) - 1));
    if (selected_ >= rows_in_hand()) return Reaction::reload;  // paged: beyond what was read
    read_detail();
    return Reaction::redraw;
}

Reaction AnomaliesView::toggle_expanded() {
    if (!incidents_shown() || selected_ >= incident_rows_.size() || !shown_) return Reaction::none;
    const IncidentRow row = incident_rows_[selected_];
    const std::string origin = anomaly_identity(shown_->anomalies[shown_->incidents[row.incident].origin]);
    if (row.member || row.expanded) expanded_.erase(origin);  // from a member: its incident closes, its row selected
    else expanded_.insert(origin);
    rebuild_incidents_keeping(incident_key(origin, nullptr));
    read_detail();
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
    for (const auto& b : paged_ ? of_rank : records())
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
    if (row >= rows_in_hand()) return Reaction::none;
    selected_ = row;
    return Reaction::redraw;
}

void AnomaliesView::draw(ScreenBuffer& buf, int x, int y, int width, int height, const Glyphs& glyphs) {
    const Style head{Color::accent, Color::none, kBold};
    const Style dim{Color::dim, Color::none, kPlain};
    const bool incidents = incidents_shown();
    const auto& f = options_.filter;
    std::string title = incidents ? std::string("incidents, most severe first")
                                  : std::string("sort ") + anomaly_sort_name(options_.sort) +
                                        (options_.descending ? " (reversed)" : "") + (options_.group ? "  grouped" : "");
    if (f.source) title += "  source " + *f.source;
    if (f.rule) title += "  rule " + *f.rule;
    if (f.rank) title += "  rank " + std::to_string(*f.rank);
    if (f.kind) title += "  kind " + *f.kind;
    if (f.steps) title += "  steps " + std::to_string(f.steps->min()) + "-" + std::to_string(f.steps->max());
    if (f.name_regex) title += "  /" + *f.name_regex + "/";
    if (incidents) {
        const std::size_t all = shown_ ? shown_->incidents.size() : 0;
        title += "  " + std::to_string(incidents_listed_) + (incidents_listed_ == all ? "" : " of " + std::to_string(all)) +
                 (all == 1 ? " incident, " : " incidents, ") + std::to_string(total_anomalies_) + " anomalies";
    } else {
        title += "  " + std::to_string(total_rows_) + " rows of " + std::to_string(total_anomalies_);
    }
    buf.text(x, y, title, head, width);
    int top_y = y + 1;
    if (incident_mode_ && incidents_.over_limit()) {  // too many to group: the ranked table instead, said so
        buf.text(x, top_y++,
                 "not grouped into incidents: " + std::to_string(incidents_.total()) + " anomalies, over " +
                     std::to_string(incidents_.max_anomalies()) + "; every anomaly, ranked",
                 {Color::warn, Color::none, kPlain}, width);
    }
    const int detail_h = height >= 16 ? 4 : 0;
    const int list_h = std::max(0, height - (top_y - y) - 1 - detail_h);
    // Incidents: 2 + 57 columns before the origin's name (at 80 columns "…layers.0.…fc1.weight" fits); the table:
    // 73 before the tensor's.
    const int name_w = std::max(4, width - (incidents ? 59 : 73));
    char hdr[256];
    if (incidents)
        std::snprintf(hdr, sizeof hdr, "  %6s %4s %-12s %-11s %5s %5s %-7s %s", "step", "rank", "kind", "rule", "anoms",
                      "ranks", "steps", "origin");
    else
        std::snprintf(hdr, sizeof hdr, " %6s %4s %-11s %-12s %-5s %9s %9s %-3s %4s %s", "step", "rank", "rule", "kind", "op",
                      "value", "ref", "src", "#", "name");
    buf.text(x, top_y, hdr, dim, width);
    rows_visible_ = std::max(1, list_h);
    list_y_ = top_y + 1;
    if (selected_ < top_) top_ = selected_;
    if (selected_ >= top_ + static_cast<std::size_t>(rows_visible_)) top_ = selected_ - static_cast<std::size_t>(rows_visible_) + 1;
    if (rows_in_hand() == 0)
        buf.text(x + 1, list_y_,
                 total_anomalies_ == 0 ? "no anomalies" : incidents ? "no incidents match the filters" : "no anomalies match the filters",
                 dim, width - 1);
    for (int r = 0; r < list_h && top_ + static_cast<std::size_t>(r) < rows_in_hand(); ++r) {
        const std::size_t pos = top_ + static_cast<std::size_t>(r);
        const bool sel = pos == selected_;
        const std::uint8_t attr = sel ? kReverse : kPlain;
        char line[256];
        if (incidents) {
            const IncidentRow& row = incident_rows_[pos];
            const Incident& inc = shown_->incidents[row.incident];
            const AnomalyRecord& a = shown_->anomalies[row.record];
            std::string name = a.name;
            if (!row.member) {
                std::snprintf(line, sizeof line, "%s%s%6lld %4d %-12.12s %-11.11s %5zu %5zu %-7.7s ", sel ? ">" : " ",
                              row.expanded ? (glyphs.unicode ? "\xE2\x96\xBE" : "-") : (glyphs.unicode ? "\xE2\x96\xB8" : "+"),
                              static_cast<long long>(a.step), a.rank, a.kind.c_str(), short_rule(a.rule).c_str(),
                              inc.members.size(), inc.ranks.size(), steps_text(inc.first_step, inc.last_step).c_str());
            } else {
                // Indented under its incident; the last member closes the branch.
                const bool last = pos + 1 >= incident_rows_.size() || !incident_rows_[pos + 1].member;
                const std::string value = value_vs_reference(a, 17);
                std::snprintf(line, sizeof line, "%s %s %6lld %4d %-12.12s %-11.11s %-17.17s ", sel ? ">" : " ",
                              last ? (glyphs.unicode ? "\xE2\x94\x94" : "`") : (glyphs.unicode ? "\xE2\x94\x9C" : "|"),
                              static_cast<long long>(a.step), a.rank, a.kind.c_str(), short_rule(a.rule).c_str(), value.c_str());
            }
            const Style st{row_color(a, row.member ? a.score : inc.score), Color::none, attr};
            const int used = buf.text(x, list_y_ + r, line, st, width);
            buf.text(x + used, list_y_ + r, fit_tensor_name(name, name_w, glyphs.unicode), st, width - used);
            continue;
        }
        const AnomalyRow& row = rows_[pos];
        const AnomalyRecord& a = list_[row.first];
        const Style st{row_color(a, row.rank_score), Color::none, attr};
        std::snprintf(line, sizeof line, "%s%6lld %4d %-11.11s %-12.12s %-5.5s %9s %9s %-3s %4d ", sel ? ">" : " ",
                      static_cast<long long>(a.step), a.rank, short_rule(a.rule).c_str(), a.kind.c_str(), a.op.c_str(),
                      short_number(a.value).c_str(), a.reference ? short_number(*a.reference).c_str() : "-",
                      a.source == "msprobe" ? "msp" : "msm", row.count);
        const int used = buf.text(x, list_y_ + r, line, st, width);
        buf.text(x + used, list_y_ + r,
                 fit_tensor_name(a.name + (a.micro_step && a.kind.rfind("actv", 0) == 0 ? ":" + std::to_string(*a.micro_step) : ""),
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
