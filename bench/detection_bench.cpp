// Detection benchmark: msmon's detectors measured as a detector is — on a labelled corpus, how many planted
// faults are found, whether the incident's origin (step, rank, kind, module) is exact, and how many false alarms
// healthy steps raise. The corpus: simulated runs (healthy ones of several seeds and sizes, and planted faults,
// their labels taken from the simulator's own --truth) made here, two of them written live and followed as
// `msmon ingest --follow` does (a rank stalling; a healthy job attached mid-run and msmon restarted), plus the
// real runs of ../shared/fixtures/msprobe-faults when present. A restart of the job is an event that must stay
// quiet: any incident in its run is a false alarm. Prints JSON on stdout (a summary on stderr).
//
//   detection_bench [--work DIR] [--shared DIR] [--quick]
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/detect/incidents.hpp"
#include "core/ingest/ingest_engine.hpp"
#include "core/sim/fault_plan.hpp"
#include "core/sim/fault_truth.hpp"
#include "core/sim/msprobe_simulator.hpp"
#include "store/reader.hpp"
#include "store/sqlite_ingest_store.hpp"

namespace fs = std::filesystem;
using namespace msmon;

namespace {

// What was planted, and where its incident must begin. rank -1: every rank (any rank may be the origin);
// empty kind or module: not judged. A drift has no single step: its incident must begin within
// [step, end_step] on the drifting tensor. A quiet event (a restart of the job) must raise nothing.
struct Planted {
    std::string fault;  // the fault's kind: nan, baddata, spike, ...
    std::int64_t step = 0;
    int rank = -1;
    std::string kind, module;
    std::int64_t end_step = -1;  // drift: the last step it grows to
    bool quiet = false;
};

struct Case {
    std::string name;
    std::string source;  // simulated | live (written and followed at once) | real
    std::string dir;     // the job folder
    std::int64_t steps = 0;
    int ranks = 0;
    std::vector<Planted> planted;
    double seconds = 0;  // live: how long it was followed
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

bool covers(const Incident& inc, const Planted& p) {
    if (p.end_step >= 0 ? (inc.last_step < p.step || inc.first_step > p.end_step)
                        : (p.step < inc.first_step || p.step > inc.last_step))
        return false;
    return p.rank < 0 || std::binary_search(inc.ranks.begin(), inc.ranks.end(), p.rank);
}

bool exact_origin(const AnomalyRecord& o, const Planted& p) {
    const bool step_ok = p.end_step >= 0 ? o.step >= p.step && o.step <= p.end_step : o.step == p.step;
    return step_ok && (p.rank < 0 || o.rank == p.rank) && (p.kind.empty() || o.kind == p.kind) &&
           (p.module.empty() || o.name == p.module);
}

// Reads the job into a new store at once (what `msmon ingest` does).
bool ingest_whole(const Case& c, const std::string& db, std::string& error) {
    remove_store(db);
    SqliteIngestStore store(db);
    IngestOptions o;
    o.roots = {c.dir};
    IngestEngine engine(store, o);
    return engine.run(error);
}

Outcome judge(const Case& c, const std::string& db, double seconds) {
    Outcome out;
    out.seconds = seconds;
    auto reader = open_sqlite_reader(db);
    AnomalyFilter mine;  // msmon's detections: a job's own msprobe dumps are not what is measured here
    mine.source = "detected";
    const auto list = reader->anomalies(mine);
    const auto incidents = group_incidents(list);
    out.anomalies = list.size();
    out.incidents = incidents.size();
    std::vector<bool> matched(incidents.size(), false);
    for (const auto& p : c.planted) {
        nlohmann::ordered_json d = {{"fault", p.fault},   {"step", p.step}, {"rank", p.rank},       {"kind", p.kind},
                                    {"module", p.module}, {"found", false}, {"exact_origin", false}};
        if (p.quiet) {  // judged by the false alarms of its run
            d.erase("exact_origin");
            d.erase("found");
            d["quiet"] = true;
            out.detail.push_back(std::move(d));
            continue;
        }
        if (p.end_step >= 0) d["end_step"] = p.end_step;
        for (std::size_t k = 0; k < incidents.size(); ++k) {
            if (matched[k] || !covers(incidents[k], p)) continue;
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
            out.detail.push_back({{"false_alarm", true},
                                  {"step", o.step},
                                  {"rank", o.rank},
                                  {"kind", o.kind},
                                  {"name", o.name},
                                  {"rule", o.rule},
                                  {"anomalies", incidents[k].members.size()}});
        }
    out.top_is_planted = !incidents.empty() && matched[0];
    // Healthy steps: every step but the planted ones and the two after each (what an event spreads into; a
    // drift: every step it grows over). A quiet event's steps count as healthy.
    std::vector<bool> touched(static_cast<std::size_t>(std::max<std::int64_t>(c.steps, 0)), false);
    for (const auto& p : c.planted) {
        if (p.quiet) continue;
        for (std::int64_t s = p.step; s <= std::max(p.step + 2, p.end_step) && s < c.steps; ++s)
            if (s >= 0) touched[static_cast<std::size_t>(s)] = true;
    }
    out.healthy_steps = static_cast<std::int64_t>(std::count(touched.begin(), touched.end(), false));
    return out;
}

// A simulated run of the corpus. Live: written `step_ms` apart and followed while it is written.
struct SimCase {
    std::string name;
    int ranks;
    std::int64_t steps;
    int params;
    bool activations;
    std::uint64_t seed;
    std::string faults;
    int step_ms = 0;
    int tp = 1;  // tensor-parallel degree: ranks are ranks/tp data-parallel replicas of each shard
};

SimOptions sim_options(const SimCase& c, const std::string& dir, std::string& error) {
    SimOptions s;
    s.outdir = dir;
    s.ranks = c.ranks;
    s.steps = c.steps;
    s.params = c.params;
    s.activations = c.activations;
    s.seed = c.seed;
    s.step_ms = c.step_ms;
    s.tp = c.tp;
    if (!c.faults.empty()) {
        if (auto f = parse_fault_list(c.faults, error)) s.faults = *f;
    }
    return s;
}

// The labels: where the simulator's --truth says each fault shows first.
std::vector<Planted> planted_from_truth(const SimOptions& s, std::string& error) {
    std::vector<Planted> out;
    const std::string text = fault_truth_json(s, -1, error);
    if (text.empty()) return out;
    const auto doc = nlohmann::json::parse(text);
    for (const auto& f : doc["faults"]) {
        Planted p;
        p.fault = f["kind"].get<std::string>();
        p.step = f["step"].get<std::int64_t>();
        p.rank = f["rank"].get<int>();
        p.kind = f["kind_of_tensor"].get<std::string>();
        p.module = f["module"].get<std::string>();
        if (f.contains("end_step")) p.end_step = f["end_step"].get<std::int64_t>();
        if (p.fault == "stall") p.kind.clear();  // a stall is a rank's, not a tensor's
        p.quiet = p.fault == "restart";
        out.push_back(std::move(p));
    }
    return out;
}

bool simulate(const SimOptions& s, std::string& error) {
    fs::remove_all(s.outdir);
    std::atomic<bool> no_stop{false};
    SimResult r;
    return run_msprobe_simulation(s, no_stop, r, error);
}

// A live job followed as `msmon ingest --follow` follows it: attached `attach_after` into the run (what it has
// written by then is backlog), and, with `restart_msmon`, msmon stopped half-way through and started again on
// the same store; followed until `linger` after the job's last step.
bool simulate_and_follow(const SimOptions& s, const std::string& db, std::chrono::milliseconds attach_after,
                         bool restart_msmon, std::chrono::milliseconds linger, std::string& error) {
    fs::remove_all(s.outdir);
    remove_store(db);
    std::atomic<bool> no_stop{false};
    std::string sim_error;
    bool sim_ok = false;
    std::thread job([&] {
        SimResult r;
        sim_ok = run_msprobe_simulation(s, no_stop, r, sim_error);
    });
    std::this_thread::sleep_for(attach_after);
    const auto run_for = std::chrono::milliseconds(static_cast<std::int64_t>(s.step_ms) * s.steps);
    // One msmon session: follows from now until `until` says stop.
    auto follow = [&](const std::function<void()>& until) {
        SqliteIngestStore store(db);
        IngestOptions o;
        o.roots = {s.outdir};
        o.follow = true;
        IngestEngine engine(store, o);
        std::string e;
        bool ok = true;
        std::thread t([&] { ok = engine.run(e); });
        until();
        engine.stop();
        t.join();
        if (!ok) error = e;
        return ok;
    };
    bool ok = true;
    if (restart_msmon) ok = follow([&] { std::this_thread::sleep_for((run_for - attach_after) / 2); });
    if (ok)
        ok = follow([&] {
            job.join();
            std::this_thread::sleep_for(linger);
        });
    if (job.joinable()) job.join();
    if (!sim_ok) error = sim_error;
    return ok && sim_ok;
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
    // Simulated: healthy runs of several seeds and sizes, then planted faults of each kind.
    std::vector<SimCase> sims = {
        {"healthy_8r_s1", 8, 300, 16, true, 1, ""},
        {"healthy_8r_s2", 8, 300, 16, true, 2, ""},
        {"healthy_32r_s3", 32, 200, 16, false, 3, ""},
        {"healthy_64r_s4", 64, 150, 8, false, 4, ""},
        {"spike_all_64r", 64, 150, 8, false, 5, "spike@120"},
        {"spike_all_xy_8r", 8, 120, 16, true, 11, "spike@90x30"},
        {"spike_one_rank_16r", 16, 120, 16, false, 6, "spike@80:r5x50"},
        {"nan_one_rank_8r", 8, 120, 16, true, 7, "nan@70:r3"},
        {"nan_module_16r", 16, 100, 24, true, 12, "nan@55:r9:mlayers.0.self_attention.linear_qkv"},
        {"nan_no_actv_8r", 8, 100, 16, false, 13, "nan@60:r2"},
        {"baddata_8r", 8, 120, 16, true, 8, "baddata@75:r2x25"},
        {"baddata_16r_x40", 16, 100, 16, true, 14, "baddata@50:r11x40"},
        {"drift_8r", 8, 200, 16, true, 9, "drift@60:mlayers.1.mlp.linear_fc2x200"},
        {"restart_8r", 8, 120, 16, true, 10, "restart@64"},
        // Faults between ranks: one replica's weights or reduced gradient corrupted, every rank's learning rate,
        // a module that dies; data x tensor parallel (ranks of one shard are replicas, shards differ).
        {"sdc_weight_8r", 8, 100, 16, false, 17, "sdc@45:r5"},
        {"sdc_grad_16r_tp2", 16, 100, 16, false, 18, "sdcgrad@50:r9", 0, 2},
        {"lr_blowup_8r", 8, 100, 16, false, 19, "lr@60"},
        {"dead_module_8r_xy", 8, 100, 16, true, 20, "dead@40"},
        {"healthy_16r_tp4_xy", 16, 120, 16, true, 21, "", 0, 4},
        // At scale: 1,024 ranks, 128 data-parallel replicas of 8 tensor-parallel shards.
        {"healthy_1024r_tp8", 1024, 60, 8, false, 22, "", 0, 8},
        {"sdc_weight_1024r_tp8", 1024, 60, 8, false, 23, "sdc@30:r77", 0, 8},
        {"sdc_grad_1024r_tp8", 1024, 60, 8, false, 24, "sdcgrad@35:r1000", 0, 8},
        {"lr_blowup_1024r_tp8", 1024, 60, 8, false, 25, "lr@40", 0, 8},
        {"dead_module_128r_tp8_xy", 128, 60, 8, true, 26, "dead@40", 0, 8},
    };
    if (quick) sims.resize(3);
    for (const auto& sc : sims) {
        const std::string dir = work + "/" + sc.name;
        const SimOptions s = sim_options(sc, dir, error);
        auto planted = planted_from_truth(s, error);
        if (!error.empty() || !simulate(s, error)) {
            std::fprintf(stderr, "simulate %s: %s\n", sc.name.c_str(), error.c_str());
            return 1;
        }
        corpus.push_back({sc.name, "simulated", dir, sc.steps, sc.ranks, std::move(planted)});
    }
    // Live: a step every 100 ms, msmon attached 1.5 s in (15 steps of backlog), following as new steps arrive.
    // A healthy job with msmon restarted half-way; a rank that stops writing at step 30 while the others go on.
    if (!quick) {
        const std::vector<std::pair<SimCase, bool>> live = {
            {{"live_healthy_msmon_restarted_8r", 8, 60, 16, false, 15, "", 100}, true},
            {{"live_stall_8r", 8, 60, 16, false, 16, "stall@30:r5", 100}, false},
        };
        for (const auto& [sc, restart_msmon] : live) {
            const std::string dir = work + "/" + sc.name;
            const SimOptions s = sim_options(sc, dir, error);
            auto planted = planted_from_truth(s, error);
            const auto t0 = std::chrono::steady_clock::now();
            if (!error.empty() || !simulate_and_follow(s, work + "/" + sc.name + ".db", std::chrono::milliseconds(1500),
                                                       restart_msmon, std::chrono::milliseconds(4000), error)) {
                std::fprintf(stderr, "live %s: %s\n", sc.name.c_str(), error.c_str());
                return 1;
            }
            corpus.push_back({sc.name, "live", dir, sc.steps, sc.ranks, std::move(planted),
                              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
        }
    }
    // Real runs written by the real msprobe (FAULT.txt in each folder says what was planted).
    const std::string real = shared + "/fixtures/msprobe-faults";
    if (fs::is_directory(real)) {
        corpus.push_back({"real_healthy", "real", real + "/healthy", 50, 4, {}});
        corpus.push_back(
            {"real_nan", "real", real + "/nan", 50, 4, {{"nan", 11, 3, "actv", "module.layers.0.fc2.output"}}});
        corpus.push_back(
            {"real_baddata", "real", real + "/baddata", 50, 4, {{"baddata", 44, 0, "actv", "module.embed.input"}}});
        // Faults between ranks (param_distribution on): silent data corruption of one replica's weights and of
        // its reduced gradient, every rank's learning rate x20, a layer that dies; and the healthy run with every
        // weight collected.
        corpus.push_back({"real_params_healthy", "real", real + "/params-healthy", 50, 4, {}});
        corpus.push_back({"real_sdc_weight",
                          "real",
                          real + "/sdc-weight",
                          50,
                          4,
                          {{"sdc", 31, 1, "param_origin", "module.layers.0.fc2.weight"}}});
        corpus.push_back({"real_sdc_grad",
                          "real",
                          real + "/sdc-grad",
                          50,
                          4,
                          {{"sdcgrad", 22, 3, "grad_reduced", "module.layers.2.fc1.weight"}}});
        corpus.push_back(
            {"real_lr_blowup", "real", real + "/lr-blowup", 50, 4, {{"lr", 35, -1, "derived.update_ratio", ""}}});
        corpus.push_back({"real_dead_layer",
                          "real",
                          real + "/dead-layer",
                          50,
                          4,
                          {{"dead", 18, -1, "actv", "module.layers.1.fc1.output"}}});
    } else {
        std::fprintf(stderr, "%s is absent: real runs left out\n", real.c_str());
    }
    // msprobe's alert scenario, read without its alert rules: loss x100 at step 12 (the backward pass shows it
    // first, at the output's gradient), a NaN written into layers.1.fc1.weight's gradient at step 20.
    const std::string alert = shared + "/fixtures/msprobe-real/alert";
    if (fs::is_directory(alert)) {
        corpus.push_back(
            {"real_alert_no_rules",
             "real",
             alert,
             30,
             1,
             {{"spike", 12, 0, "actv_grad", ".output"}, {"nan", 20, 0, "grad_reduced", "layers.1.fc1.weight"}}});
    }

    nlohmann::ordered_json cases = nlohmann::ordered_json::array();
    std::map<std::string, std::array<std::size_t, 4>> by_fault;  // planted, found (quiet: stayed quiet), exact, top
    std::int64_t healthy_steps = 0;
    std::size_t false_alarms = 0;
    for (const auto& c : corpus) {
        const std::string db = work + "/" + c.name + ".db";
        const auto t0 = std::chrono::steady_clock::now();
        if (c.source != "live" && !ingest_whole(c, db, error)) {
            std::fprintf(stderr, "ingest %s: %s\n", c.name.c_str(), error.c_str());
            return 1;
        }
        Outcome o =
            judge(c, db,
                  c.source == "live" ? c.seconds
                                     : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        healthy_steps += o.healthy_steps;
        false_alarms += o.false_alarms;
        for (const auto& p : c.planted) {
            auto& f = by_fault[p.fault];
            ++f[0];
        }
        for (const auto& d : o.detail)
            if (d.contains("quiet")) {
                by_fault[d["fault"].get<std::string>()][1] += o.false_alarms == 0;
            } else if (d.contains("fault")) {
                auto& f = by_fault[d["fault"].get<std::string>()];
                f[1] += d["found"].get<bool>();
                f[2] += d["exact_origin"].get<bool>();
                f[3] += d.value("incident_rank", 0) == 1;
            }
        const auto quiet = static_cast<std::size_t>(
            std::count_if(c.planted.begin(), c.planted.end(), [](const Planted& p) { return p.quiet; }));
        const std::size_t to_find = c.planted.size() - quiet;
        cases.push_back({{"case", c.name},
                         {"source", c.source},
                         {"ranks", c.ranks},
                         {"steps", c.steps},
                         {"planted", to_find},
                         {"quiet_events", quiet},
                         {"found", o.found},
                         {"exact_origin", o.exact},
                         {"top_incident_is_planted",
                          to_find == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(o.top_is_planted)},
                         {"anomalies", o.anomalies},
                         {"incidents", o.incidents},
                         {"false_alarms", o.false_alarms},
                         {"healthy_steps", o.healthy_steps},
                         {"ingest_seconds", o.seconds},
                         {"detail", o.detail}});
        std::fprintf(stderr,
                     "%-32s %-9s planted %zu found %zu exact %zu quiet events %zu | %5zu anomalies %3zu incidents %2zu "
                     "false | %.2f s\n",
                     c.name.c_str(), c.source.c_str(), to_find, o.found, o.exact, quiet, o.anomalies, o.incidents,
                     o.false_alarms, o.seconds);
    }
    nlohmann::ordered_json faults = nlohmann::ordered_json::object();
    for (const auto& [name, f] : by_fault)
        faults[name] = name == "restart"
                           ? nlohmann::ordered_json{{"planted", f[0]}, {"stayed_quiet", f[1]}}
                           : nlohmann::ordered_json{
                                 {"planted", f[0]}, {"found", f[1]}, {"exact_origin", f[2]}, {"top_incident", f[3]}};
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
