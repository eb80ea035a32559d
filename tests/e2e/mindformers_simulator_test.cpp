// `msmon simulate --logs/--health` writes what MindFormers writes, and the project's own parser reads all of
// it: every prefixed line, every step-line variant, rotation by rename, restarts that append, the data-skip
// stop with its traceback, health_ckpts.json as json.dump(indent=4) writes it; msprobe's CSVs are unchanged.
#include "core/sim/mindformers_simulator.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "core/parse/mindformers_log.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

CommandResult simulate(const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> argv = {program("msmon"), "simulate", out};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run(argv);
}

std::string info_log(const std::string& out, int rank) {
    return out + "/output/log/rank_" + std::to_string(rank) + "/info.log";
}

std::string worker_log(const std::string& out, int rank) {
    return out + "/output/msrun_log/worker_" + std::to_string(rank) + ".log";
}

// Everything the parser takes out of one log file.
struct ParsedLog {
    std::vector<StepLine> steps;
    std::vector<TsmLine> tsm;
    std::vector<std::pair<std::int64_t, double>> embeddings;  // (last step line seen, value)
    std::vector<SkipLine> skips;
    std::vector<SpikeLine> spikes;
    std::vector<std::string> messages;  // every prefixed message, in order
    std::vector<std::string> raw;       // lines without a MindFormers prefix
    int warnings = 0, progress = 0, mindspore = 0;
};

// Reads one log, checking that every line has the expected prefix or is a known continuation, and that every
// message the simulator writes is one the parser recognises.
ParsedLog parse_log(const std::string& path, LogPrefix expected) {
    ParsedLog p;
    const std::string text = read_file(path);
    EXPECT_FALSE(text.empty()) << path;
    EXPECT_EQ(text.back(), '\n') << path << " ends in a partial line";
    bool in_dump = false, in_traceback = false, in_config = false;
    for (const auto& line : lines_of(text)) {
        const LogLineHead h = parse_log_head(line);
        if (h.prefix == LogPrefix::none) {
            p.raw.push_back(line);
            if (is_traceback_start(line)) in_traceback = true;
            const bool dump_line =
                in_dump && !line.empty() && (line == "local_norm:" || line.front() == '[' || line.front() == ' ');
            // The config pprinted at start-up (rank 0): "{'callbacks': ...", then indented lines.
            in_config = line.rfind("{'", 0) == 0 || (in_config && !line.empty() && line.front() == ' ');
            EXPECT_TRUE(dump_line || in_traceback || in_config) << path << ": stray line without a prefix: " << line;
            if (in_traceback && is_exception_line(line)) {
                auto s = parse_spike_line(line);
                EXPECT_TRUE(s.has_value()) << line;
                if (s) p.spikes.push_back(*s);
                in_traceback = false;
            }
            continue;
        }
        in_dump = false;
        if (h.prefix == LogPrefix::mindspore) {
            EXPECT_EQ(expected, LogPrefix::stdout_sink) << path << ": MindSpore line outside a worker log";
            ++p.mindspore;
            continue;
        }
        EXPECT_EQ(h.prefix, expected) << path << ": " << line;
        EXPECT_EQ(h.time.size(), 23u) << line;
        const std::string m(h.message);
        p.messages.push_back(m);
        if (h.level == "WARNING") {
            EXPECT_TRUE(is_partial_loss_warning(m)) << line;
            ++p.warnings;
            continue;
        }
        EXPECT_EQ(h.level, "INFO") << line;
        if (m.rfind("{ ", 0) == 0) {
            auto s = parse_step_line(m);
            EXPECT_TRUE(s.has_value()) << path << ": step line fails the STEP regex: " << line;
            if (s) p.steps.push_back(*s);
        } else if (m.find(" samples/s/p  ") != std::string::npos) {
            EXPECT_FALSE(parse_step_line(m).has_value());
            static const std::regex prog(
                R"(^ +([0-9.]+|nan|inf)% \|(.*)\| ([-+0-9.eEinfa]+) samples/s/p  (?:(-?\d+) days?, )?(\d+):(\d{2}):(\d{2}) \}$)");
            EXPECT_TRUE(std::regex_match(m, prog)) << "PROG regex: " << line;
            ++p.progress;
        } else if (m.rfind("Epoch:[", 0) == 0) {
            auto t = parse_tsm_line(m);
            EXPECT_TRUE(t.has_value()) << path << ": " << line;
            if (t) p.tsm.push_back(*t);
        } else if (auto e = parse_embedding_line(m)) {
            p.embeddings.emplace_back(p.steps.empty() ? 0 : p.steps.back().global_step, *e);
        } else if (auto k = parse_skip_line(m)) {
            p.skips.push_back(*k);
        } else if (auto c = parse_spike_line(m)) {
            p.spikes.push_back(*c);
        } else if (m.rfind(" norm_size: (", 0) == 0) {
            in_dump = true;
        } else {
            static const std::regex known(
                R"(^(Running MindFormers in GRAPH_MODE\.|set output path to '.*'|=+Trainer Init Success!=+|\.+Build Dataset For Train\.+|Create train dataset finish, dataset size:\d+|Will be Training epochs:\d+, sink_size:1|\.+Build Callbacks For Train\.+|\.+Model Compiling, Please Wait a Moment\.+|\.+Starting Training Model\.+|Full model flops is \d+, Shard model flops is \d+\.|\.+Training Over!\.+|\.+Saving ckpt\.+|global_batch_size: \d+|epoch_num: \d+|step_num: \d+|global_step: \d+|Finish saving (ckpt|network|trainable_params) of epoch (\d+) step (\d+) using ([0-9.]+) seconds)$)");
            EXPECT_TRUE(std::regex_match(m, known)) << path << ": unknown message: " << line;
        }
    }
    return p;
}

std::vector<std::int64_t> step_numbers(const ParsedLog& p) {
    std::vector<std::int64_t> out;
    for (const auto& s : p.steps) out.push_back(s.global_step);
    return out;
}

std::vector<std::int64_t> range(std::int64_t first, std::int64_t last) {
    std::vector<std::int64_t> out;
    for (std::int64_t s = first; s <= last; ++s) out.push_back(s);
    return out;
}

const StepLine* step_at(const ParsedLog& p, std::int64_t step) {
    for (const auto& s : p.steps)
        if (s.global_step == step) return &s;
    return nullptr;
}

// ---- the plan, before anything is written ----

SimOptions sim_options(std::int64_t steps, const std::string& faults) {
    SimOptions o;
    o.ranks = 4;
    o.steps = steps;
    std::string error;
    auto f = parse_fault_list(faults, error);
    EXPECT_TRUE(f.has_value()) << error;
    o.faults = f.value_or(std::vector<Fault>{});
    return o;
}

TEST(MindFormersSimulator, stop_fault_is_part_of_the_fault_grammar) {
    std::string error;
    const auto f = parse_fault_list("spike@3,stop@30,nan@4:r1", error);
    ASSERT_TRUE(f.has_value()) << error;
    ASSERT_EQ(f->size(), 3u);
    EXPECT_EQ((*f)[1].type, Fault::Type::stop);
    EXPECT_EQ((*f)[1].step, 30);
    EXPECT_EQ(first_stop_step(*f), 30);
    EXPECT_EQ(first_stop_step({}), -1);
    EXPECT_FALSE(parse_fault_list("stop", error).has_value());
}

TEST(MindFormersSimulator, plan_turns_a_stop_into_two_spikes_and_cuts_msprobe_at_the_same_step) {
    const SimOptions o = sim_options(50, "spike@11x4,stop@12");
    const MindFormersPlan plan = plan_mindformers_run(o, MindFormersOptions{});
    EXPECT_EQ(plan.pipeline_stages, 2);
    EXPECT_EQ(plan.first_step, 1);
    EXPECT_EQ(plan.last_step, 50);
    EXPECT_EQ(plan.steps_per_epoch, 25);
    EXPECT_EQ(plan.stop_step, 12);
    ASSERT_EQ(plan.implied_spikes.size(), 2u);
    EXPECT_EQ(plan.implied_spikes[0].step, 11);
    EXPECT_DOUBLE_EQ(plan.implied_spikes[0].factor, 25.0) << "x4 given, x100 in all";
    EXPECT_EQ(plan.implied_spikes[1].step, 12);
    EXPECT_DOUBLE_EQ(plan.implied_spikes[1].factor, 100.0);
    const SimOptions m = msprobe_options_for(o, plan);
    EXPECT_EQ(m.steps, 13) << "msprobe steps 0..12";
    for (const auto& f : m.faults) EXPECT_NE(f.type, Fault::Type::stop);
    EXPECT_EQ(m.faults.size(), 3u);

    MfStepSequence seq(plan);
    std::int64_t last = 0, opt = 0;
    while (auto st = seq.next()) {
        last = st->step;
        if (st->step == 10) opt = st->opt_step;
        if (st->step == 11) {
            EXPECT_TRUE(st->skipped);
            EXPECT_EQ(st->spike_count, 1);
            EXPECT_EQ(st->opt_step, opt) << "a skipped step applies no update";
            EXPECT_FALSE(st->stop);
        }
        if (st->step == 12) {
            EXPECT_TRUE(st->stop);
        }
    }
    EXPECT_EQ(last, 12);
}

TEST(MindFormersSimulator, consecutive_spikes_stop_only_when_mindformers_output_is_on) {
    const SimOptions o = sim_options(20, "spike@5,spike@6");
    MindFormersOptions mf;
    EXPECT_EQ(plan_mindformers_run(o, mf).stop_step, 6);
    mf.stop_on_spikes = false;
    const MindFormersPlan plain = plan_mindformers_run(o, mf);
    EXPECT_EQ(plain.stop_step, -1);
    EXPECT_EQ(msprobe_options_for(o, plain).steps, 20);
    EXPECT_EQ(msprobe_options_for(o, plain).faults.size(), 2u);
}

// The relaunch loads the last checkpoint (saved after step 3) and trains step 4 again; the optimizer's count and
// the learning rate come back with it, and the repeat draws new noise.
TEST(MindFormersSimulator, plan_restarts_resume_from_the_last_checkpoint_and_train_its_steps_again) {
    const SimOptions o = sim_options(10, "");
    MindFormersOptions mf;
    mf.restart_at = 4;
    mf.ckpt_every = 3;
    const MindFormersPlan plan = plan_mindformers_run(o, mf);
    EXPECT_EQ(plan.restart_resume, 4);
    MfStepSequence seq(plan);
    std::vector<std::int64_t> steps, firsts, saves, launches, restarts;
    std::vector<MfPlannedStep> step4;
    while (auto st = seq.next()) {
        steps.push_back(st->step);
        launches.push_back(st->launch);
        if (st->first_of_launch) firsts.push_back(st->step);
        if (st->save) saves.push_back(st->step);
        if (st->restart_after) restarts.push_back(st->step);
        if (st->step == 4) step4.push_back(*st);
    }
    EXPECT_EQ(steps, (std::vector<std::int64_t>{1, 2, 3, 4, 4, 5, 6, 7, 8, 9, 10}));
    EXPECT_EQ(launches, (std::vector<std::int64_t>{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1}));
    EXPECT_EQ(firsts, (std::vector<std::int64_t>{1, 4}));
    EXPECT_EQ(restarts, (std::vector<std::int64_t>{4}));
    EXPECT_EQ(saves, (std::vector<std::int64_t>{3, 6, 9, 10})) << "every 3 steps and at the end";
    ASSERT_EQ(step4.size(), 2u);
    EXPECT_EQ(step4[0].opt_step, step4[1].opt_step);
    EXPECT_EQ(step4[0].lr, step4[1].lr);
    EXPECT_NE(step4[0].loss, step4[1].loss);
}

// Restarting on a checkpoint's own step trains nothing twice: the relaunch goes on at the next step.
TEST(MindFormersSimulator, a_restart_right_after_a_checkpoint_resumes_at_the_next_step) {
    const SimOptions o = sim_options(10, "");
    MindFormersOptions mf;
    mf.restart_at = 6;
    mf.ckpt_every = 3;
    const MindFormersPlan plan = plan_mindformers_run(o, mf);
    MfStepSequence seq(plan);
    std::vector<std::int64_t> steps;
    while (auto st = seq.next()) steps.push_back(st->step);
    EXPECT_EQ(steps, range(1, 10));
    const SimOptions msprobe = msprobe_options_for(o, plan);
    ASSERT_EQ(msprobe.faults.size(), 1u);
    EXPECT_EQ(msprobe.faults[0].type, Fault::Type::restart);
    EXPECT_EQ(msprobe.faults[0].step, 6);
    EXPECT_EQ(msprobe.faults[0].resume, 7) << "msprobe's new run folders begin where MindFormers resumes";
}

TEST(MindFormersSimulator, a_huge_msprobe_only_run_plans_nothing_step_by_step) {
    const SimOptions o = sim_options(100000000, "stop@99999999");
    MindFormersOptions mf;
    mf.stop_on_spikes = false;
    const auto t0 = std::chrono::steady_clock::now();
    const MindFormersPlan plan = plan_mindformers_run(o, mf);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
    EXPECT_EQ(plan.stop_step, 99999999);
    EXPECT_EQ(msprobe_options_for(o, plan).steps, 100000000);
}

// ---- the files, through the real program ----

TEST(MindFormersSimulator, every_line_of_every_variant_parses_with_the_project_parser) {
    for (const std::string variant : {"standard", "nonsink", "nolr", "noclip", "moe", "old3"}) {
        SCOPED_TRACE("variant " + variant);
        TempDir tmp;
        const std::string out = tmp / "job";
        auto r = simulate(out, {"--ranks", "4", "--steps", "24", "--params", "4", "--logs", "--log-variant", variant,
                                "--faults", "spike@5,nan@9"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const std::string logger = "mindformers" + fs::canonical(out + "/output/log").string() + "[";
        for (int rank = 0; rank < 4; ++rank) {
            SCOPED_TRACE("rank " + std::to_string(rank));
            const bool stage0 = rank < 2;  // 2 pipeline stages: ranks 0-1 stage 0, ranks 2-3 the last stage
            const ParsedLog info = parse_log(info_log(out, rank), LogPrefix::file_sink);
            EXPECT_EQ(step_numbers(info), range(1, 24));
            EXPECT_EQ(info.progress, 24);
            EXPECT_EQ(info.warnings, 24) << "the pipeline warning precedes every step line";
            EXPECT_GE(info.raw.size(), 24 * 2u) << "the local_norm dump continues on further lines";
            for (const StepLine& s : info.steps) {
                EXPECT_EQ(s.epochs, 2);
                EXPECT_EQ(s.steps_per_epoch, 12);
                EXPECT_EQ(s.global_step, (s.epoch - 1) * 12 + s.step_in_epoch);
                ASSERT_TRUE(s.loss.has_value());
                if (stage0) {
                    EXPECT_EQ(*s.loss, 0.0) << "step " << s.global_step;
                }
                EXPECT_EQ(s.lr.has_value(), variant != "nolr");
                EXPECT_EQ(s.global_norm.has_value(), variant != "noclip");
                EXPECT_EQ(s.loss_epoch_mean.has_value(), variant == "nonsink");
                EXPECT_EQ(s.throughput_tflops.has_value(), variant != "nonsink" && variant != "old3");
                EXPECT_EQ(s.lm_loss.has_value(), variant == "moe");
                EXPECT_EQ(s.mtp_loss.has_value(), variant == "moe");
                EXPECT_EQ(s.load_balancing_loss.has_value(), variant == "moe" && !stage0)
                    << "MindFormers drops load_balancing_loss when it is 0";
                EXPECT_DOUBLE_EQ(s.loss_scale.value_or(-1), 1.0);
            }
            // The faults: a global-norm spike at 5 (skipped, lr held), NaN everywhere at 9.
            const StepLine *s4 = step_at(info, 4), *s5 = step_at(info, 5), *s6 = step_at(info, 6),
                           *s9 = step_at(info, 9);
            ASSERT_TRUE(s4 && s5 && s6 && s9);
            if (variant != "noclip") {
                EXPECT_GE(s5->global_norm.value_or(0), 3.0);
                EXPECT_LT(s4->global_norm.value_or(9), 3.0);
                EXPECT_TRUE(std::isnan(s9->global_norm.value_or(0)));
            }
            if (variant != "nolr") {
                EXPECT_EQ(s5->lr, s4->lr) << "a skipped step does not advance the lr";
            }
            EXPECT_EQ(s9->overflow, std::optional<bool>(true));
            if (!stage0) {
                EXPECT_GT(*s5->loss, *s4->loss * 1.2);
                EXPECT_GT(*s5->loss, *s6->loss * 1.2);
                EXPECT_TRUE(std::isnan(*s9->loss));
            }
            ASSERT_EQ(info.skips.size(), 1u);
            EXPECT_DOUBLE_EQ(info.skips[0].threshold, 3.0);
            EXPECT_TRUE(info.skips[0].is_skip);
            EXPECT_EQ(info.skips[0].opt_global_step, 4);
            ASSERT_EQ(info.spikes.size(), 1u);
            EXPECT_EQ(info.spikes[0].step, 5);
            EXPECT_EQ(info.spikes[0].count, 1);
            EXPECT_FALSE(info.spikes[0].stop);
            if (variant != "noclip") {
                EXPECT_EQ(info.spikes[0].global_norm, s5->global_norm.value_or(0));
            }
            // TrainingStateMonitor: the same steps, local norms on every rank, losses on the last stage.
            std::map<std::string, std::set<std::int64_t>> tags;
            for (const auto& t : info.tsm) tags[t.tag].insert(t.global_step);
            const std::string layer = stage0 ? "model.layers.0." : "model.layers.1.";
            for (const std::string& tag :
                 {"local_norm/" + layer + "attention.wq.weight", "local_norm/" + layer + "feed_forward.w1.weight",
                  std::string("device_local_norm"), "adam_m_norm/" + layer + "attention.wq.weight",
                  "adam_v_norm/" + layer + "attention.wq.weight", std::string("weight_norm"),
                  std::string("throughput_linearity")})
                EXPECT_EQ(tags[tag].size(), 24u) << tag;
            EXPECT_EQ(tags.count("micro_local_lm_loss"), stage0 ? 0u : 1u);
            EXPECT_EQ(tags.count("device_accum_local_lm_loss"), stage0 ? 0u : 1u);
            int micro = 0;
            for (const auto& t : info.tsm) micro += t.tag == "micro_local_lm_loss";
            EXPECT_EQ(micro, stage0 ? 0 : 48) << "two micro-batch losses per step";
            ASSERT_EQ(info.embeddings.size(), 24u);
            for (const auto& [step, e] : info.embeddings) {
                if (!stage0) {
                    EXPECT_EQ(e, 0.0);
                } else if (step != 9) {
                    EXPECT_GT(e, 1.0);
                }
            }
            // The worker log: the same records with the stdout prefix and the absolute log dir as logger
            // name.
            const ParsedLog worker = parse_log(worker_log(out, rank), LogPrefix::stdout_sink);
            EXPECT_EQ(worker.messages, info.messages);
            EXPECT_EQ(worker.mindspore, 1);
            const std::string wtext = read_file(worker_log(out, rank));
            EXPECT_NE(wtext.find(" - " + logger), std::string::npos) << "logger name is not " << logger;
        }
    }
}

TEST(MindFormersSimulator, rotation_renames_info_log_to_five_numbered_backups) {
    TempDir tmp;
    const std::string out = tmp / "job";
    auto r = simulate(out, {"--ranks", "2", "--steps", "40", "--params", "2", "--logs", "--log-max-bytes", "6000"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (int rank = 0; rank < 2; ++rank) {
        const std::string base = info_log(out, rank);
        std::vector<std::string> files;
        for (int i = 5; i >= 1; --i) files.push_back(base + "." + std::to_string(i));
        files.push_back(base);
        EXPECT_FALSE(fs::exists(base + ".6")) << "backupCount is 5";
        std::int64_t previous = -1;
        for (const auto& f : files) {
            ASSERT_TRUE(fs::exists(f)) << f;
            // Rollover happens before a record that would reach maxBytes (counted in characters).
            EXPECT_LT(fs::file_size(f), 6000u + 200u) << f;
            const std::string text = read_file(f);
            EXPECT_EQ(parse_log_head(text.substr(0, text.find('\n'))).prefix, LogPrefix::file_sink)
                << f << " does not start with a whole record";
            const ParsedLog p = parse_log(f, LogPrefix::file_sink);
            for (auto s : step_numbers(p)) {
                if (previous >= 0) {
                    EXPECT_EQ(s, previous + 1) << f << ": steps out of order across rotations";
                }
                previous = s;
            }
        }
        EXPECT_EQ(previous, 40) << "the newest step is in info.log";
        EXPECT_EQ(fs::status(base).permissions() & fs::perms::all,
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    }
    EXPECT_NE(r.out.find("rotations"), std::string::npos) << r.out;
}

// --restart-at 7 with a checkpoint every 5 steps: the relaunch appends to the same logs and trains 6-7 again.
TEST(MindFormersSimulator, restart_appends_startup_markers_and_trains_again_from_the_checkpoint) {
    TempDir tmp;
    const std::string out = tmp / "job";
    auto r = simulate(out, {"--ranks", "2", "--steps", "15", "--params", "2", "--logs", "--health", "--ckpt-every", "5",
                            "--restart-at", "7"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (int rank = 0; rank < 2; ++rank) {
        for (const auto& path : {info_log(out, rank), worker_log(out, rank)}) {
            const ParsedLog p =
                parse_log(path, path == info_log(out, rank) ? LogPrefix::file_sink : LogPrefix::stdout_sink);
            std::vector<std::int64_t> expected = range(1, 7);
            for (std::int64_t s : range(6, 15)) expected.push_back(s);
            EXPECT_EQ(step_numbers(p), expected) << path;
            std::vector<std::size_t> starts, step6;
            std::size_t step7 = 0;
            std::vector<double> per_step_6;
            for (std::size_t i = 0; i < p.messages.size(); ++i) {
                if (p.messages[i] == "Running MindFormers in GRAPH_MODE.") starts.push_back(i);
                const auto s = parse_step_line(p.messages[i]);
                if (s && s->global_step == 7 && !step7) step7 = i;
                if (s && s->global_step == 6) {
                    step6.push_back(i);
                    per_step_6.push_back(s->per_step_ms.value_or(0));
                }
            }
            ASSERT_EQ(starts.size(), 2u) << path;
            ASSERT_EQ(step6.size(), 2u) << path;
            EXPECT_EQ(starts[0], 0u);
            EXPECT_GT(starts[1], step7) << path;
            EXPECT_LT(starts[1], step6[1]) << path;
            EXPECT_EQ(std::count(p.messages.begin(), p.messages.end(), ".........Training Over!............."), 1);
            // The relaunch compiles the graph again: its first step (6, again) is slow, the first launch's was not.
            EXPECT_LT(per_step_6[0], 100000.0);
            EXPECT_GT(per_step_6[1], 100000.0);
        }
    }
    // MindSpore renames the relaunch's checkpoints (_1) because the first launch left some behind.
    auto doc = nlohmann::json::parse(read_file(out + "/output/health_ckpts.json"));
    std::vector<std::string> names;
    for (const auto& e : doc) names.push_back(e["ckpt_name"]);
    EXPECT_EQ(names,
              (std::vector<std::string>{"llama3_1_8b_rank_0-5_1.safetensors", "llama3_1_8b_rank_0_1-10_1.safetensors",
                                        "llama3_1_8b_rank_0_1-15_1.safetensors"}));
}

TEST(MindFormersSimulator, stop_fault_ends_the_job_with_the_value_error_traceback) {
    TempDir tmp;
    const std::string out = tmp / "job";
    auto r = simulate(out, {"--ranks", "4", "--steps", "30", "--params", "3", "--logs", "--faults", "stop@12"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("stopped at step 12"), std::string::npos) << r.out;
    for (int rank = 0; rank < 4; ++rank) {
        const ParsedLog info = parse_log(info_log(out, rank), LogPrefix::file_sink);
        EXPECT_EQ(step_numbers(info), range(1, 12));
        EXPECT_TRUE(std::none_of(info.raw.begin(), info.raw.end(), [](const std::string& l) {
            return is_traceback_start(l);
        })) << "the traceback goes to stderr (the worker log), not to info.log";
        ASSERT_EQ(info.skips.size(), 2u) << "steps 11 and 12 are skipped";
        ASSERT_EQ(info.spikes.size(), 1u) << "only step 11 logs the consecutive count";
        EXPECT_EQ(info.spikes[0].step, 11);
        EXPECT_EQ(info.spikes[0].count, 1);
        EXPECT_EQ(info.messages.back().rfind("opt_global_step: ", 0), 0u) << "the skip line is the last record";
        EXPECT_EQ(std::count(info.messages.begin(), info.messages.end(), ".........Training Over!............."), 0);

        const std::string wtext = read_file(worker_log(out, rank));
        const auto lines = lines_of(wtext);
        const auto tb =
            std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return is_traceback_start(l); });
        ASSERT_NE(tb, lines.end()) << "no traceback in worker_" << rank << ".log";
        EXPECT_EQ(parse_log_head(*(tb - 1)).message.substr(0, 17), "opt_global_step: ");
        EXPECT_TRUE(is_exception_line(lines.back())) << lines.back();
        EXPECT_EQ(lines.back().rfind("ValueError: Current global norm [", 0), 0u) << lines.back();
        for (auto it = tb + 1; it + 1 != lines.end(); ++it) {
            EXPECT_EQ(parse_log_head(*it).prefix, LogPrefix::none) << *it;
            EXPECT_EQ(it->substr(0, 2), "  ") << "traceback frame lines are indented: " << *it;
        }
        const auto stop = parse_spike_line(lines.back());
        ASSERT_TRUE(stop.has_value());
        EXPECT_TRUE(stop->stop);
        EXPECT_EQ(stop->step, 12);
        EXPECT_EQ(stop->count, 2);
        EXPECT_DOUBLE_EQ(stop->threshold, 3.0);
        EXPECT_GE(stop->global_norm, 3.0);
        const ParsedLog worker = parse_log(worker_log(out, rank), LogPrefix::stdout_sink);
        ASSERT_EQ(worker.spikes.size(), 2u);
        EXPECT_TRUE(worker.spikes[1].stop);
    }
    // msprobe's output ends at the same step, with the spikes the stop implies.
    std::int64_t last = -1;
    for (const auto& f : find_files(out + "/monitor_output", ".csv")) {
        const std::string name = fs::path(f).filename().string();
        const auto dash = name.rfind('-');
        last = std::max<std::int64_t>(last, std::stoll(name.substr(dash + 1, name.size() - dash - 5)));
    }
    EXPECT_EQ(last, 12);
}

TEST(MindFormersSimulator, two_consecutive_spikes_stop_the_job_like_mindformers) {
    TempDir tmp;
    const std::string out = tmp / "job";
    auto r = simulate(out, {"--ranks", "2", "--steps", "20", "--params", "2", "--logs", "--faults", "spike@6,spike@7"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const ParsedLog info = parse_log(info_log(out, 1), LogPrefix::file_sink);
    EXPECT_EQ(step_numbers(info), range(1, 7));
    const ParsedLog worker = parse_log(worker_log(out, 1), LogPrefix::stdout_sink);
    ASSERT_FALSE(worker.spikes.empty());
    EXPECT_TRUE(worker.spikes.back().stop);
    EXPECT_EQ(worker.spikes.back().step, 7);
}

TEST(MindFormersSimulator, health_json_is_rank_zeros_indent_4_array_and_a_spike_makes_a_checkpoint_unhealthy) {
    TempDir tmp;
    const std::string out = tmp / "job";
    auto r = simulate(out, {"--ranks", "4", "--steps", "20", "--params", "2", "--logs", "--health", "--ckpt-every", "5",
                            "--faults", "spike@10"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string text = read_file(out + "/output/health_ckpts.json");
    std::string expected = "[";
    const int health[] = {0, 1, 0, 0};
    for (int i = 0; i < 4; ++i) {
        expected += std::string(i ? "," : "") + "\n    {\n        \"is_health\": " + std::to_string(health[i]) +
                    ",\n        \"ckpt_name\": \"llama3_1_8b_rank_0-" + std::to_string(5 * (i + 1)) +
                    "_1.safetensors\"\n    }";
    }
    expected += "\n]";
    EXPECT_EQ(text, expected) << "json.dump(indent=4), no trailing newline";
    EXPECT_FALSE(nlohmann::json::parse(text, nullptr, false).is_discarded());
    // The unhealthy one is where a stage-0 embedding norm crossed 270; the save lines name the same
    // checkpoints.
    for (int rank = 0; rank < 4; ++rank) {
        const ParsedLog info = parse_log(info_log(out, rank), LogPrefix::file_sink);
        for (const auto& [step, e] : info.embeddings) {
            if (rank >= 2) continue;
            if (step == 10) {
                EXPECT_GE(e, 270.0);
            } else {
                EXPECT_LT(e, 270.0) << "step " << step;
            }
        }
        std::vector<std::string> finish;
        for (const auto& m : info.messages)
            if (m.rfind("Finish saving ckpt of epoch ", 0) == 0) finish.push_back(m.substr(0, m.find(" using")));
        EXPECT_EQ(finish, (std::vector<std::string>{
                              "Finish saving ckpt of epoch 5 step 1", "Finish saving ckpt of epoch 10 step 1",
                              "Finish saving ckpt of epoch 15 step 1", "Finish saving ckpt of epoch 20 step 1"}));
    }
    // A second run into the same output keeps the entries (the file is never reset).
    ASSERT_EQ(
        simulate(out, {"--ranks", "4", "--steps", "5", "--params", "2", "--health", "--ckpt-every", "5"}).exit_code, 0);
    EXPECT_EQ(nlohmann::json::parse(read_file(out + "/output/health_ckpts.json")).size(), 5u);
}

// Every rank's CSVs, keyed by rank and file name (run folder names carry the wall-clock time).
std::map<std::string, std::string> msprobe_files(const std::string& out) {
    std::map<std::string, std::string> files;
    const std::regex rank_re(R"(-rank(\d+)-)");
    for (const auto& f : find_files(out + "/monitor_output", ".csv")) {
        const fs::path p(f);
        std::smatch m;
        const std::string dir = p.parent_path().filename().string();
        EXPECT_TRUE(std::regex_search(dir, m, rank_re)) << dir;
        files["rank" + m[1].str() + "/" + p.filename().string()] = read_file(f);
    }
    return files;
}

TEST(MindFormersSimulator, msprobe_csvs_are_the_same_with_or_without_logs) {
    TempDir tmp;
    const std::vector<std::string> common = {"--ranks", "3",      "--steps", "8",        "--params",
                                             "4",       "--seed", "7",       "--faults", "spike@3,nan@5:r1"};
    std::vector<std::string> with_logs = common;
    with_logs.insert(with_logs.end(), {"--logs", "--health", "--log-variant", "moe"});
    ASSERT_EQ(simulate(tmp / "plain", common).exit_code, 0);
    auto r = simulate(tmp / "logs", with_logs);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto plain = msprobe_files(tmp / "plain"), logs = msprobe_files(tmp / "logs");
    EXPECT_EQ(plain.size(), 3u * 8 * 6 - 3 * 2) << "exp_avg/exp_avg_sq start at step 1";
    EXPECT_TRUE(plain == logs) << "--logs changed msprobe's output";
    EXPECT_FALSE(fs::exists(tmp / "plain/output")) << "no MindFormers output without --logs/--health";
    EXPECT_TRUE(fs::exists(info_log(tmp / "logs", 2)));
}

TEST(MindFormersSimulator, health_alone_writes_the_json_but_no_logs) {
    TempDir tmp;
    const std::string out = tmp / "job";
    ASSERT_EQ(
        simulate(out, {"--ranks", "2", "--steps", "10", "--params", "2", "--health", "--ckpt-every", "5"}).exit_code,
        0);
    EXPECT_EQ(nlohmann::json::parse(read_file(out + "/output/health_ckpts.json")).size(), 2u);
    EXPECT_FALSE(fs::exists(out + "/output/log/rank_0/info.log"));
}

TEST(MindFormersSimulator, same_seed_writes_the_same_logs_apart_from_timestamps) {
    TempDir tmp;
    const std::vector<std::string> args = {"--ranks", "2",      "--steps", "12",       "--params", "2",
                                           "--logs",  "--seed", "42",      "--faults", "spike@4"};
    ASSERT_EQ(simulate(tmp / "a", args).exit_code, 0);
    ASSERT_EQ(simulate(tmp / "b", args).exit_code, 0);
    auto strip = [](const std::string& text, const std::string& dir) {
        std::string s =
            std::regex_replace(text, std::regex(R"(\d{4}-\d{2}-\d{2}[ -]\d{2}:\d{2}:\d{2}[,.]\d{3}(\.\d{3})?)"), "T");
        std::size_t at;
        while ((at = s.find(dir)) != std::string::npos) s.replace(at, dir.size(), "DIR");
        return s;
    };
    for (int rank = 0; rank < 2; ++rank) {
        EXPECT_EQ(strip(read_file(info_log(tmp / "a", rank)), fs::canonical(tmp / "a").string()),
                  strip(read_file(info_log(tmp / "b", rank)), fs::canonical(tmp / "b").string()));
        EXPECT_EQ(strip(read_file(worker_log(tmp / "a", rank)), fs::canonical(tmp / "a").string()),
                  strip(read_file(worker_log(tmp / "b", rank)), fs::canonical(tmp / "b").string()));
    }
}

// health_ckpts.json is truncated and then written: a reader polling it sees whole arrays or cut prefixes.
// The writer truncates and rewrites (not atomic, like MindFormers): a racing read may be cut or even mix two
// versions; it then fails to parse and readers retry. Whatever parses is a prefix of the final entry list.
TEST(MindFormersSimulator, health_json_reads_that_parse_are_prefixes_of_the_final_entries) {
    TempDir tmp;
    const std::string out = tmp / "job", path = out + "/output/health_ckpts.json";
    Background sim({program("msmon"), "simulate", out, "--ranks", "2", "--steps", "30", "--params", "2", "--health",
                    "--ckpt-every", "1", "--step-ms", "15"},
                   tmp.path());
    std::vector<std::string> seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    int code = -1000;
    while (std::chrono::steady_clock::now() < deadline) {
        const std::string text = read_file(path);
        if (seen.empty() || seen.back() != text) seen.push_back(text);
        if ((code = sim.wait(std::chrono::milliseconds(0))) != -1000) break;
    }
    ASSERT_EQ(code, 0) << sim.err();
    const std::string final_text = read_file(path);
    const auto final_doc = nlohmann::json::parse(final_text);
    ASSERT_EQ(final_doc.size(), 30u);
    int partial = 0, whole = 0;
    for (const auto& text : seen) {
        const auto doc = nlohmann::json::parse(text, nullptr, false);
        if (doc.is_discarded()) {
            ++partial;
            continue;
        }
        ++whole;
        ASSERT_TRUE(doc.is_array()) << text;
        ASSERT_LE(doc.size(), final_doc.size());
        for (std::size_t i = 0; i < doc.size(); ++i) EXPECT_EQ(doc[i], final_doc[i]) << "entry " << i << " changed";
    }
    EXPECT_GT(whole, 1);
    RecordProperty("partial_reads", partial);
}

TEST(MindFormersSimulator, bad_log_options_are_usage_errors_that_write_nothing) {
    TempDir tmp;
    for (const std::vector<std::string>& bad :
         {std::vector<std::string>{"--logs", "--log-variant", "fancy"},
          std::vector<std::string>{"--logs", "--restart-at", "10"},
          std::vector<std::string>{"--logs", "--restart-at", "0"},
          std::vector<std::string>{"--logs", "--ckpt-every", "0"},
          std::vector<std::string>{"--logs", "--log-max-bytes", "-1"}, std::vector<std::string>{"--faults", "stop@"}}) {
        std::vector<std::string> args = {"--steps", "10"};
        args.insert(args.end(), bad.begin(), bad.end());
        auto r = simulate(tmp / "job", args);
        EXPECT_EQ(r.exit_code, 2) << bad[bad.size() - 1];
        EXPECT_FALSE(r.err.empty());
        EXPECT_FALSE(fs::exists(tmp / "job")) << "wrote output despite a usage error";
    }
}

}  // namespace
}  // namespace msmon::test
