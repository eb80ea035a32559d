// Anomalies view: incidents and the table, drawing, keys, drill-down.
#include "tui/views/anomalies_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/detect/rules.hpp"
#include "core/text/counted.hpp"
#include "core/text/name_pattern.hpp"
#include "core/text/number_text.hpp"
#include "tui/glyph_stand_ins.hpp"
#include "tui/tab_table.hpp"
#include "tui/views/view_deps.hpp"
#include "tui/widgets/tensor_name.hpp"
#include "tui/widgets/text_wrap.hpp"

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

// A kind in `width` columns, padded to them: whole when it fits; msprobe's long kinds by a short form that still
// reads apart (grad_unreduced as grad_unred…, not grad_unredu…), others cut; either way the cut is marked.
std::string short_kind(const std::string& kind, int width, bool unicode) {
    const auto padded = [width](std::string s) {
        return s + std::string(static_cast<std::size_t>(std::max(0, width - display_width(s))), ' ');
    };
    if (static_cast<int>(kind.size()) <= width) return padded(kind);
    const std::string mark = glyph_text(kCutMark, unicode);
    static const std::pair<const char*, const char*> kShort[] = {
        {"grad_unreduced", "grad_unred"},       {"param_updated", "param_upd"},
        {"param_origin", "param_orig"},         {"actv_grad", "actv_grad"},
        {"embedding_local_norm", "embed_norm"}, {"device_local_norm", "dev_norm"},
        {"device_accum_local_loss", "dev_loss"}};
    for (const auto& [full, brief] : kShort)
        if (kind == full && static_cast<int>(std::string(brief).size()) < width) return padded(brief + mark);
    return padded(kind.substr(0, static_cast<std::size_t>(std::max(0, width - 1))) + mark);
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
    return a.source + '\x1f' + a.rule + '\x1f' + std::to_string(a.rank) + '\x1f' + a.kind + '\x1f' + a.name + '\x1f' +
           a.op;
}

// An incident's row is its origin; a member's row, the origin and the member. Never equal to a table's key.
std::string incident_key(const std::string& origin_identity, const AnomalyRecord* member) {
    return "incident\x1e" + origin_identity + (member ? "\x1e" + anomaly_identity(*member) : std::string());
}

Color row_color(const AnomalyRecord& a, double score) {
    if (std::isnan(a.value) || rule_info(a).colour == RuleColour::bad) return Color::bad;
    return score >= 20 ? Color::warn : Color::none;
}

std::string steps_text(std::int64_t first, std::int64_t last) {
    if (last <= first) return std::to_string(first);
    std::string s = std::to_string(first) + "-" + std::to_string(last);
    return s.size() <= 7 ? s : std::to_string(first) + "+" + std::to_string(last - first);
}

// The anomalies table's columns before the name; the optional ones are dropped when the name needs the room.
struct TableColumns {
    int kind = 4;  // the longest kind shown (at most 18)
    int rule = 4;  // the longest rule shown, whole: the names `msmon anomalies` prints (at most 17)
    bool op = true, value = true, ref = true, src = true, count = true;
    bool unicode = true;  // the cut mark of a long kind
    int before_name() const {
        return 1 + 6 + 1 + 4 + 1 + rule + 1 + kind + 1 + (op ? 6 : 0) + (value ? 10 : 0) + (ref ? 10 : 0) +
               (src ? 4 : 0) + (count ? 5 : 0);
    }
    void fit(int width, int name_min) {
        for (bool* optional : {&count, &ref, &op, &src})
            if (width - before_name() < name_min) *optional = false;
    }
    std::string header() const {
        char buf[256];
        std::string out;
        std::snprintf(buf, sizeof buf, " %6s %4s %-*s %-*s ", "step", "rank", rule, "rule", kind, "kind");
        out = buf;
        if (op) out += "op    ";
        if (value) out += "    value ";
        if (ref) out += "      ref ";
        if (src) out += "src ";
        if (count) out += "   # ";
        return out + "name";
    }
    std::string row(bool selected, const AnomalyRecord& a, int repeats) const {
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s%6lld %4d %-*.*s ", selected ? ">" : " ", static_cast<long long>(a.step),
                      a.rank, rule, rule, a.rule.c_str());
        std::string out = buf + short_kind(a.kind, kind, unicode) + " ";
        if (op) {
            std::snprintf(buf, sizeof buf, "%-5.5s ", a.op.c_str());
            out += buf;
        }
        if (value) {
            std::snprintf(buf, sizeof buf, "%9s ", short_number(a.value).c_str());
            out += buf;
        }
        if (ref) {
            std::snprintf(buf, sizeof buf, "%9s ", a.reference ? short_number(*a.reference).c_str() : "-");
            out += buf;
        }
        if (src) out += a.source == "msprobe" ? "msp " : "msm ";
        if (count) {
            std::snprintf(buf, sizeof buf, "%4d ", repeats);
            out += buf;
        }
        return out;
    }
};

}  // namespace

AnomaliesView::AnomaliesView(SharedSelection& shared, IncidentIndex& incidents, std::function<void()> open_chart)
    : shared_(shared), incidents_(incidents), open_chart_(std::move(open_chart)) {
    // The hint bar shows the first four: what this tab is for comes first.
    // One binding per line reads as a table.
    // clang-format off
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
        {{kKeyHome, 'g'}, "g/Home", "first row", [this] { return move(-1000000000L); }},
        {{kKeyEnd, 'G'}, "G/End", "last row", [this] { return move(1000000000L); }},
        {{'S'}, "S", "reverse the table's order", [this] {
             options_.descending = !options_.descending;
             return incident_mode_ ? show_incidents(false, false) : changed(true);
         }},
        {{'m'}, "m", "table: merge repeats of one tensor into one row (count in #)", [this] {
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
    // clang-format on
    // Each filter command: its argument, or none to clear it.
    const auto filter = [this](auto set) {
        return [this, set](const std::string& arg, std::string& message) {
            if (!set(arg, message)) return Reaction::redraw;
            rebuild();
            return Reaction::reload;  // the store pages the table: read its rows again
        };
    };
    const auto text = [](std::optional<std::string>& slot, const std::string& arg) {
        slot = arg.empty() ? std::nullopt : std::optional<std::string>(arg);
        return true;
    };
    // One binding per line reads as a table.
    // clang-format off
    commands_ = {
        {"rule", "[R]", "only anomalies of rule R (none: every rule)",
         filter([this, text](const std::string& arg, std::string&) { return text(options_.filter.rule, arg); })},
        {"rank", "[R]", "only rank R (none: every rank)", filter([this](const std::string& arg, std::string& message) {
             const auto rank = parse_rank(arg);
             if (!arg.empty() && !rank) {
                 message = "not a rank (0 to 2147483647): " + arg;
                 return false;
             }
             options_.filter.rank = rank;
             return true;
         })},
        {"kind", "[K]", "only kind K (none: every kind)",
         filter([this, text](const std::string& arg, std::string&) { return text(options_.filter.kind, arg); })},
        {"steps", "[A-B]", "only steps A-B (also 5,7,10-20; none: every step)",
         filter([this](const std::string& arg, std::string& message) {
             if (arg.empty()) {
                 options_.filter.steps.reset();
                 return true;
             }
             auto list = StepList::parse(arg, message);
             if (!list) return false;
             options_.filter.steps = list;
             return true;
         })},
        {"source", "[S]", "only msprobe (its dumps) or detected (msmon's detectors); none or all: both",
         filter([this](const std::string& arg, std::string&) {
             options_.filter.source = arg.empty() || arg == "all" ? std::nullopt : std::optional<std::string>(arg);
             return true;
         })},
    };
    // clang-format on
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
        return selected_ < incident_rows_.size() && shown_ ? &shown_->anomalies[incident_rows_[selected_].record]
                                                           : nullptr;
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
        AnomalyGroupRequest req{f.source,
                                f.rule,
                                f.kind,
                                f.rank,
                                f.name_regex,
                                0,
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
    selected_ = static_cast<std::size_t>(
        std::clamp<long>(static_cast<long>(selected_) + delta, 0, static_cast<long>(total_rows_) - 1));
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
    drill.series = {a->kind, a->op == "seconds" ? "norm" : a->op, exact_name_pattern(a->name)};
    drill.rank = a->rank;
    shared_.focus_step = a->step;
    std::vector<AnomalyRecord> of_rank;
    if (paged_ && reader_) {  // paged: list_ holds only the faces read; the rank's anomalies give every step
        AnomalyFilter f;
        f.rank = a->rank;
        of_rank = reader_->anomalies(f);
    }
    auto& steps = drill.anomaly_steps;
    for (const auto& b : paged_ ? of_rank : records()) {
        if (b.rank != a->rank || b.kind != a->kind || b.name != a->name) continue;
        steps.push_back(b.step);
        // The replicas this copy departed from, whichever finding of that copy was selected (a ContinuityBreak
        // on the same weight, say).
        if (b.step == a->step && rule_of(b) == Rule::ReplicaDivergence && drill.replicas.empty())
            drill.replicas = b.group_mates;
    }
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    shared_.drill = std::move(drill);
    ++shared_.drills;
    open_chart_();
    return Reaction::reload;
}

bool AnomaliesView::set_filter(const std::optional<std::string>& regex) {
    options_.filter.name_regex = regex;
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
    std::string title = incidents
                            ? std::string("incidents, most severe first")
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
        title += "  " + std::to_string(incidents_listed_) +
                 (incidents_listed_ == all ? "" : " of " + std::to_string(all)) +
                 (all == 1 ? " incident, " : " incidents, ") + counted(total_anomalies_, "anomaly", "anomalies");
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
    // The detail pane: a rule, the message wrapped (up to 3 lines; it says what happened), the module, the code.
    std::vector<std::string> message;
    if (const AnomalyRecord* a = selected()) message = wrap_text(a->message, width);
    if (message.size() > 3) {  // cut, and said so
        message.resize(3);
        message.back() = wrap_text(message.back(), width - 1).front() + glyph_text(kCutMark, glyphs.unicode);
    }
    const int detail_h = height >= 16 ? 3 + static_cast<int>(std::max<std::size_t>(message.size(), 1)) : 0;
    const int list_h = std::max(0, height - (top_y - y) - 1 - detail_h);
    // Incidents: 2 + 57 columns before the origin's name with a 12-column kind and an 11-column rule. The table:
    // its columns give way to the name (#, ref, op, src, in that order) until the name has kTableNameMin columns,
    // so that at 80 columns layers.0 and layers.1 still read apart; kinds are never cut (grad_unreduced).
    constexpr int kTableNameMin = 30;
    TableColumns cols;
    for (const auto& r : rows_) cols.kind = std::max<int>(cols.kind, static_cast<int>(list_[r.first].kind.size()));
    cols.kind = std::min(cols.kind, 18);
    for (const auto& r : rows_) cols.rule = std::max<int>(cols.rule, static_cast<int>(list_[r.first].rule.size()));
    cols.rule = std::min(cols.rule, 17);
    cols.unicode = glyphs.unicode;
    cols.fit(width, kTableNameMin);
    // Incidents: the kind column as wide as the longest kind of any anomaly grouped (12 to 18), never cut; the same
    // whether an incident is expanded or not, so that rows do not move.
    // At 80 columns the origin's name keeps its room and a long kind is shown by its short form (grad_unred).
    int kind_w = 12;
    if (incidents && shown_)
        for (const auto& a : shown_->anomalies) kind_w = std::max<int>(kind_w, static_cast<int>(a.kind.size()));
    kind_w = std::clamp(kind_w, 12, std::min(18, 12 + std::max(0, width - 80)));
    // The rule column as wide as the longest rule of the rows listed, whole (9 for NonFinite, 17 for
    // AnomalyTurbulence): a long rule deep in an incident takes no room from the origins until it is listed.
    int rule_w = 4;
    if (incidents && shown_)
        for (const auto& row : incident_rows_)
            rule_w = std::max<int>(rule_w, static_cast<int>(shown_->anomalies[row.record].rule.size()));
    rule_w = std::min(rule_w, 17);
    // A long rule at 80 columns: the ranks column gives way so that the origin keeps 22 columns (its layer).
    int before_origin = 59 + kind_w - 12 + rule_w - 11;
    const bool show_ranks = !(incidents && width - before_origin < 22);
    if (!show_ranks) before_origin -= 6;
    const int value_w = show_ranks ? 17 : 11;  // a member's "value vs reference", where an incident has its counts
    const int name_w = std::max(4, width - (incidents ? before_origin : cols.before_name()));
    char hdr[256];
    if (incidents)
        std::snprintf(hdr, sizeof hdr, "  %6s %4s %-*s %-*s %5s %s%-7s %s", "step", "rank", kind_w, "kind", rule_w,
                      "rule", "anoms", show_ranks ? "ranks " : "", "steps", "origin");
    else std::snprintf(hdr, sizeof hdr, "%s", cols.header().c_str());
    buf.text(x, top_y, hdr, dim, width);
    rows_visible_ = std::max(1, list_h);
    list_y_ = top_y + 1;
    if (selected_ < top_) top_ = selected_;
    if (selected_ >= top_ + static_cast<std::size_t>(rows_visible_))
        top_ = selected_ - static_cast<std::size_t>(rows_visible_) + 1;
    if (rows_in_hand() == 0)
        buf.text(x + 1, list_y_,
                 total_anomalies_ == 0 ? "no anomalies"
                 : incidents           ? "no incidents match the filters"
                                       : "no anomalies match the filters",
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
                char ranks[24] = "";
                if (show_ranks) std::snprintf(ranks, sizeof ranks, "%5zu ", inc.ranks.size());
                std::snprintf(line, sizeof line, "%s%s%6lld %4d %s %-*.*s %5zu %s%-7.7s ", sel ? ">" : " ",
                              glyph_text(row.expanded ? U'▾' : U'▸', glyphs.unicode).c_str(),
                              static_cast<long long>(a.step), a.rank,
                              short_kind(a.kind, kind_w, glyphs.unicode).c_str(), rule_w, rule_w, a.rule.c_str(),
                              inc.members.size(), ranks, steps_text(inc.first_step, inc.last_step).c_str());
            } else {
                // Indented under its incident; the last member closes the branch.
                const bool last = pos + 1 >= incident_rows_.size() || !incident_rows_[pos + 1].member;
                const std::string value = value_vs_reference(a, value_w);
                std::snprintf(line, sizeof line, "%s %s %6lld %4d %s %-*.*s %-*.*s ", sel ? ">" : " ",
                              last ? (glyphs.unicode ? "\xE2\x94\x94" : "`") : (glyphs.unicode ? "\xE2\x94\x9C" : "|"),
                              static_cast<long long>(a.step), a.rank,
                              short_kind(a.kind, kind_w, glyphs.unicode).c_str(), rule_w, rule_w, a.rule.c_str(),
                              value_w, value_w, value.c_str());
            }
            const Style st{row_color(a, row.member ? a.score : inc.score), Color::none, attr};
            const int used = buf.text(x, list_y_ + r, line, st, width);
            buf.text(x + used, list_y_ + r, fit_tensor_name(name, name_w, glyphs.unicode), st, width - used);
            continue;
        }
        const AnomalyRow& row = rows_[pos];
        const AnomalyRecord& a = list_[row.first];
        const Style st{row_color(a, row.rank_score), Color::none, attr};
        const std::string cells = cols.row(sel, a, row.count);
        const int used = buf.text(x, list_y_ + r, cells, st, width);
        buf.text(x + used, list_y_ + r,
                 fit_tensor_name(
                     a.name + (a.micro_step && a.kind.rfind("actv", 0) == 0 ? ":" + std::to_string(*a.micro_step) : ""),
                     name_w, glyphs.unicode),
                 st, width - used);
    }
    if (detail_h == 0) return;
    const int dy = y + height - detail_h;
    buf.fill(x, dy, width, 1, glyphs.unicode ? U'\u2500' : U'-', dim);
    const AnomalyRecord* a = selected();
    if (!a) return;
    for (std::size_t i = 0; i < message.size(); ++i) buf.text(x, dy + 1 + static_cast<int>(i), message[i], {}, width);
    const int below = dy + 1 + static_cast<int>(message.size());
    std::string where = detail_.module.empty() ? "module: not in module_struct.json or stack_info.csv"
                                               : "module " + detail_.module + "  " + detail_.structure;
    buf.text(x, below, where, dim, width);
    std::string stack = detail_.stack;
    while (!stack.empty() && (stack.back() == '\n' || stack.back() == ' ')) stack.pop_back();
    const auto cut = stack.rfind("\nFile ");
    buf.text(x, below + 1,
             stack.empty() ? "code: no stack_info.csv entry"
                           : "code: " + stack.substr(cut == std::string::npos ? 0 : cut + 1),
             dim, width);
}

std::unique_ptr<View> make_anomalies_view(ViewDeps& deps) {
    return std::make_unique<AnomaliesView>(deps.shared, deps.incidents, deps.open_chart);
}

}  // namespace msmon::tui
