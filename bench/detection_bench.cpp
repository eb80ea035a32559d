// Detection benchmark: msmon's detectors measured as a detector is — on a labelled corpus, how many planted
// faults are found, whether the incident's origin (step, rank, kind, module) is exact, and how many false alarms
// healthy steps raise. The corpus: simulated runs (healthy ones of several seeds and sizes, and planted faults)
// made here, plus the real runs of ../shared/fixtures/msprobe-faults when present. Prints JSON on stdout (a
// summary on stderr).
//
//   detection_bench [--work DIR] [--shared DIR] [--quick]
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/detect/incidents.hpp"
#include "core/ingest/ingest_engine.hpp"
#include "core/sim/fault_plan.hpp"
#include "core/sim/msprobe_simulator.hpp"
#include "store/reader.hpp"
#include "store/sqlite_ingest_store.hpp"

namespace fs = std::filesystem;
using namespace msmon;

namespace {

// What was planted, and where its incident must begin. rank -1: every rank (any rank may be the origin);
// empty kind or module: not judged.
struct Planted {
    std::string fault;  // the fault's kind: nan, baddata, spike, ...
    std::int64_t step = 0;
    int rank = -1;
    std::string kind, module;
};

struct Case {
    std::string name;
    std::string source;  // simulated | real
    std::string dir;     // the job folder
    std::int64_t steps = 0;
    int ranks = 0;
    std::vector<Planted> planted;
};

struct Outcome {
    std::size_t anomalies = 0, incidents = 0, found = 0, exact = 0, false_alarms = 0;
    bool top_is_planted = false;
    std::int64_t healthy_steps = 0;
    double seconds = 0;
    nlohmann::ordered_json detail = nlohmann::ordered_json::array();
};

void remove_store(const std::string& db) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
}

bool covers(const Incident& inc, const std::vector<AnomalyRecord>& list, const Planted& p) {
    if (p.step < inc.first_step || p.step > inc.last_step) return false;
    return p.rank < 0 || std::binary_search(inc.ranks.begin(), inc.ranks.end(), p.rank);
    (void)list;
}

bool exact_origin(const AnomalyRecord& o, const Planted& p) {
    return o.step == p.step && (p.rank < 0 || o.rank == p.rank) && (p.kind.empty() || o.kind == p.kind) &&
           (p.module.empty() || o.name == p.module);
}

Outcome judge(const Case& c, const std::string& work, std::string& error) {
    Outcome out;
    const std::string db = work + "/" + c.name + ".db";
    remove_store(db);
    const auto t0 = std::chrono::steady_clock::now();
    {
        SqliteIngestStore store(db);
        IngestOptions o;
        o.roots = {c.dir};
        IngestEngine engine(store, o);
        if (!engine.run(error)) return out;
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto reader = open_sqlite_reader(db);
    AnomalyFilter mine;  // msmon's detections: a job's own msprobe dumps are not what is measured here
    mine.source = "detected";
    const auto list = reader->anomalies(mine);
    const auto incidents = group_incidents(list);
    out.anomalies = list.size();
    out.incidents = incidents.size();
    std::vector<bool> matched(incidents.size(), false);
    for (const auto& p : c.planted) {
        nlohmann::ordered_json d = {{"fault", p.fault}, {"step", p.step}, {"rank", p.rank}, {"kind", p.kind},
                                    {"module", p.module}, {"found", false}, {"exact_origin", false}};
        for (std::size_t k = 0; k < incidents.size(); ++k) {
            if (!covers(incidents[k], list, p)) continue;
            const AnomalyRecord& o = list[incidents[k].origin];
            matched[k] = true;
            d["found"] = true;
            d["exact_origin"] = exact_origin(o, p);
            d["incident_rank"] = k + 1;
            d["origin"] = {{"step", o.step}, {"rank", o.rank}, {"kind", o.kind}, {"name", o.name}, {"rule", o.rule}};
            ++out.found;
            out.exact += exact_origin(o, p);
            break;
        }
        out.detail.push_back(std::move(d));
    }
    for (std::size_t k = 0; k < incidents.size(); ++k)
        if (!matched[k]) {
            ++out.false_alarms;
            const AnomalyRecord& o = list[incidents[k].origin];
            out.detail.push_back({{"false_alarm", true}, {"step", o.step}, {"rank", o.rank}, {"kind", o.kind},
                                  {"name", o.name}, {"rule", o.rule}, {"anomalies", incidents[k].members.size()}});
        }
    out.top_is_planted = !incidents.empty() && matched[0];
    // Healthy steps: every step but the planted ones and the two after each (what an event spreads into).
    std::vector<bool> touched(static_cast<std::size_t>(std::max<std::int64_t>(c.steps, 0)), false);
    for (const auto& p : c.planted)
        for (std::int64_t s = p.step; s <= p.step + 2 && s < c.steps; ++s)
            if (s >= 0) touched[static_cast<std::size_t>(s)] = true;
    out.healthy_steps = static_cast<std::int64_t>(std::count(touched.begin(), touched.end(), false));
    return out;
}

bool simulate(const std::string& dir, int ranks, std::int64_t steps, int params, bool activations, std::uint64_t seed,
              const std::string& faults, std::string& error) {
    fs::remove_all(dir);
    SimOptions s;
    s.outdir = dir;
    s.ranks = ranks;
    s.steps = steps;
    s.params = params;
    s.activations = activations;
    s.seed = seed;
    if (!faults.empty()) {
        auto f = parse_fault_list(faults, error);
        if (!f) return false;
        s.faults = *f;
    }
    std::atomic<bool> no_stop{false};
    SimResult r;
    return run_msprobe_simulation(s, no_stop, r, error);
}

}  // namespace

int main(int argc, char** argv) {
    std::string work = (fs::temp_directory_path() / "msmon-detection-bench").string();
    std::string shared = "../shared";
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--work" && i + 1 < argc) work = argv[++i];
        else if (a == "--shared" && i + 1 < argc) shared = argv[++i];
        else if (a == "--quick") quick = true;
        else {
            std::fprintf(stderr, "usage: detection_bench [--work DIR] [--shared DIR] [--quick]\n");
            return 2;
        }
    }
    fs::remove_all(work);
    fs::create_directories(work);
    std::string error;
    std::vector<Case> corpus;
    // Simulated: healthy runs of several seeds and sizes, then one planted fault per run.
    struct SimCase {
        std::string name;
        int ranks;
        std::int64_t steps;
        int params;
        bool activations;
        std::uint64_t seed;
        std::string faults;
        std::vector<Planted> planted;
    };
    std::vector<SimCase> sims = {
        {"healthy_8r_s1", 8, 300, 16, true, 1, "", {}},
        {"healthy_8r_s2", 8, 300, 16, true, 2, "", {}},
        {"healthy_32r_s3", 32, 200, 16, false, 3, "", {}},
        {"healthy_64r_s4", 64, 150, 8, false, 4, "", {}},
        {"spike_all_64r", 64, 150, 8, false, 5, "spike@120", {{"spike", 120, -1, "grad_unreduced", ""}}},
        {"spike_one_rank_16r", 16, 120, 16, false, 6, "spike@80:r5x50", {{"spike", 80, 5, "", ""}}},
        {"nan_one_rank_8r", 8, 120, 16, true, 7, "nan@70:r3", {{"nan", 70, 3, "", ""}}},
    };
    if (quick) sims.resize(3);
    for (const auto& s : sims) {
        const std::string dir = work + "/" + s.name;
        if (!simulate(dir, s.ranks, s.steps, s.params, s.activations, s.seed, s.faults, error)) {
            std::fprintf(stderr, "simulate %s: %s\n", s.name.c_str(), error.c_str());
            return 1;
        }
        corpus.push_back({s.name, "simulated", dir, s.steps, s.ranks, s.planted});
    }
    // Real runs written by the real msprobe (FAULT.txt in each folder says what was planted).
    const std::string real = shared + "/fixtures/msprobe-faults";
    if (fs::is_directory(real)) {
        corpus.push_back({"real_healthy", "real", real + "/healthy", 50, 4, {}});
        corpus.push_back({"real_nan", "real", real + "/nan", 50, 4, {{"nan", 11, 3, "actv", "module.layers.0.fc2.output"}}});
        corpus.push_back({"real_baddata", "real", real + "/baddata", 50, 4, {{"baddata", 44, 0, "actv", "module.embed.input"}}});
    } else {
        std::fprintf(stderr, "%s is absent: real runs left out\n", real.c_str());
    }
    // msprobe's alert scenario, read without its alert rules: loss x100 at step 12 (the backward pass shows it
    // first, at the output's gradient), a NaN written into layers.1.fc1.weight's gradient at step 20.
    const std::string alert = shared + "/fixtures/msprobe-real/alert";
    if (fs::is_directory(alert)) {
        corpus.push_back({"real_alert_no_rules", "real", alert, 30, 1,
                          {{"spike", 12, 0, "actv_grad", ".output"}, {"nan", 20, 0, "grad_reduced", "layers.1.fc1.weight"}}});
    }

    nlohmann::ordered_json cases = nlohmann::ordered_json::array();
    std::map<std::string, std::array<std::size_t, 4>> by_fault;  // planted, found, exact, top
    std::int64_t healthy_steps = 0;
    std::size_t false_alarms = 0;
    for (const auto& c : corpus) {
        Outcome o = judge(c, work, error);
        if (!error.empty()) {
            std::fprintf(stderr, "ingest %s: %s\n", c.name.c_str(), error.c_str());
            return 1;
        }
        healthy_steps += o.healthy_steps;
        false_alarms += o.false_alarms;
        for (const auto& p : c.planted) {
            auto& f = by_fault[p.fault];
            ++f[0];
        }
        for (const auto& d : o.detail)
            if (d.contains("fault")) {
                auto& f = by_fault[d["fault"].get<std::string>()];
                f[1] += d["found"].get<bool>();
                f[2] += d["exact_origin"].get<bool>();
                f[3] += d.value("incident_rank", 0) == 1;
            }
        cases.push_back({{"case", c.name}, {"source", c.source}, {"ranks", c.ranks}, {"steps", c.steps},
                         {"planted", c.planted.size()}, {"found", o.found}, {"exact_origin", o.exact},
                         {"top_incident_is_planted", c.planted.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(o.top_is_planted)},
                         {"anomalies", o.anomalies}, {"incidents", o.incidents}, {"false_alarms", o.false_alarms},
                         {"healthy_steps", o.healthy_steps}, {"ingest_seconds", o.seconds}, {"detail", o.detail}});
        std::fprintf(stderr, "%-22s %-9s planted %zu found %zu exact %zu | %5zu anomalies %3zu incidents %2zu false | %.2f s\n",
                     c.name.c_str(), c.source.c_str(), c.planted.size(), o.found, o.exact, o.anomalies, o.incidents,
                     o.false_alarms, o.seconds);
    }
    nlohmann::ordered_json faults = nlohmann::ordered_json::object();
    for (const auto& [name, f] : by_fault)
        faults[name] = {{"planted", f[0]}, {"found", f[1]}, {"exact_origin", f[2]}, {"top_incident", f[3]}};
    nlohmann::ordered_json out;
    out["benchmark"] = "detection";
    out["by_fault"] = faults;
    out["healthy_steps"] = healthy_steps;
    out["false_alarms"] = false_alarms;
    out["false_alarms_per_1000_healthy_steps"] =
        healthy_steps ? 1000.0 * static_cast<double>(false_alarms) / static_cast<double>(healthy_steps) : 0.0;
    out["cases"] = cases;
    std::printf("%s\n", out.dump(1).c_str());
    fs::remove_all(work);
    return 0;
}
