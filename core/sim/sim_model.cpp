// The simulated GPT: Megatron parameter names and shapes, modules in forward order, activations between them.
#include "core/sim/sim_model.hpp"

#include <cmath>

#include "core/sim/keyed_noise.hpp"

namespace msmon {

namespace {

constexpr double kSeq = 4096, kHidden = 1024, kFfn = 4096, kVocab = 25216;
constexpr std::int64_t kParamNoise = 0x70617261;  // "para": the noise channel of per-parameter constants

std::string shape_text(double rows, double cols) {
    auto n = [](double v) { return std::to_string(static_cast<long long>(v)); };
    return cols > 0 ? "[" + n(rows) + ", " + n(cols) + "]" : "[" + n(rows) + "]";
}

std::string actv_shape(double width) {
    return "[4096, 1, " + std::to_string(static_cast<long long>(width)) + "]";
}

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

}  // namespace

SimModel::SimModel(int count, std::uint64_t seed) {
    // ---- parameters: the same names, shapes and order as msprobe lists them for a Megatron GPT ----
    struct LayerParam {
        const char* suffix;
        double rows, cols;
    };
    const LayerParam layer[] = {{"input_layernorm.weight", kHidden, 0},
                                {"self_attention.linear_qkv.weight", 3 * kHidden, kHidden},
                                {"self_attention.linear_proj.weight", kHidden, kHidden},
                                {"pre_mlp_layernorm.weight", kHidden, 0},
                                {"mlp.linear_fc1.weight", kFfn, kHidden},
                                {"mlp.linear_fc2.weight", kHidden, kFfn}};
    auto add = [&](std::string name, double rows, double cols, SimParam::Role role) {
        SimParam p;
        p.name = std::move(name);
        p.shape = shape_text(rows, cols);
        p.numel = cols > 0 ? rows * cols : rows;
        p.vector = cols <= 0;
        KeyedNoise noise(seed, {kParamNoise, static_cast<std::int64_t>(params_.size())});
        p.grad_norm = std::pow(10.0, -2.0 + 2.0 * noise.uniform());
        p.update_ratio = std::pow(10.0, -3.3 + 1.0 * noise.uniform());  // drawn after grad_norm: it stays as it was
        p.weight_norm = p.vector ? std::sqrt(p.numel) : std::sqrt(p.numel) * 0.02;
        p.role = role;
        params_.push_back(std::move(p));
    };
    const int n = std::max(count, 1);
    add("module.module.embedding.word_embeddings.weight", kVocab, kHidden, SimParam::Role::embedding);
    for (int li = 0; static_cast<int>(params_.size()) < n - 2; ++li)
        for (const auto& s : layer)
            if (static_cast<int>(params_.size()) < n - 2)
                add("module.module.decoder.layers." + std::to_string(li) + "." + s.suffix, s.rows, s.cols,
                    SimParam::Role::block);
    if (n >= 2) add("module.module.decoder.final_layernorm.weight", kHidden, 0, SimParam::Role::final_norm);
    if (n >= 3) add("module.module.output_layer.weight", kVocab, kHidden, SimParam::Role::head);
    params_.resize(static_cast<std::size_t>(n));
    bool final_norm = false, head = false;
    for (const auto& p : params_) {
        final_norm |= p.role == SimParam::Role::final_norm;
        head |= p.role == SimParam::Role::head;
        if (p.role == SimParam::Role::block) {
            const auto at = p.name.find("layers.") + 7;
            layers_ = std::max(layers_, std::stoi(p.name.substr(at)) + 1);
        }
    }

    // ---- activations and their gradients ----
    using Mix = SimValue::Mix;
    auto grad = [&](ActvType type, double width, bool norm_input = false) {
        grads_.push_back(SimGrad{type, kSeq, width, norm_input, false});
        return static_cast<int>(grads_.size()) - 1;
    };
    auto value = [&](ActvType type, double width, double depth, std::vector<int> inputs, Mix mix, int g) {
        SimValue v;
        v.type = type;
        v.rows = type == ActvType::data ? 1 : kSeq;
        v.width = width;
        v.shape = type == ActvType::data ? shape_text(1, kSeq) : actv_shape(width);
        v.depth = depth;
        v.inputs = std::move(inputs);
        v.mix = mix;
        v.grad = g;
        values_.push_back(std::move(v));
        return static_cast<int>(values_.size()) - 1;
    };
    auto module = [&](std::string name, int in, int out, int in_grad, bool container) {
        SimModule m;
        m.name = std::move(name);
        m.input = in;
        m.output = out;
        m.input_grad = in_grad;
        m.output_grad = values_[static_cast<std::size_t>(out)].grad;
        m.container = container;
        modules_.push_back(std::move(m));
        return static_cast<int>(modules_.size()) - 1;
    };
    auto grad_of = [&](int v) { return values_[static_cast<std::size_t>(v)].grad; };

    const std::string gpt = "module.module";
    const int tokens = value(ActvType::data, kSeq, 0, {}, Mix::rows, -1);
    int resid = value(ActvType::resid, kHidden, 0, {tokens}, Mix::rows, grad(ActvType::resid, kHidden));
    module(gpt + ".embedding.word_embeddings", tokens, resid, -1, false);
    module(gpt + ".embedding", tokens, resid, -1, true);
    const int embedded = resid;
    for (int li = 0; li < layers_; ++li) {
        const std::string at = gpt + ".decoder.layers." + std::to_string(li);
        const double d = li;
        const int r_in = resid;
        const int ln1 = value(ActvType::ln_out, kHidden, d, {r_in}, Mix::rows, grad(ActvType::ln_out, kHidden));
        const int qkv =
            value(ActvType::linear_out, 3 * kHidden, d, {ln1}, Mix::rows, grad(ActvType::linear_out, 3 * kHidden));
        const int ctx = value(ActvType::context, kHidden, d, {qkv}, Mix::sequence, grad(ActvType::context, kHidden));
        // What a block adds to the residual stream has the gradient of the sum it is added to.
        const int g_mid = grad(ActvType::resid, kHidden);
        const int attn = value(ActvType::block_out, kHidden, d, {ctx}, Mix::rows, g_mid);
        const int mid = value(ActvType::resid, kHidden, d + 0.5, {r_in, attn}, Mix::elementwise, g_mid);
        const int ln2 = value(ActvType::ln_out, kHidden, d + 0.5, {mid}, Mix::rows, grad(ActvType::ln_out, kHidden));
        const int fc1 = value(ActvType::linear_out, kFfn, d + 0.5, {ln2}, Mix::rows, grad(ActvType::linear_out, kFfn));
        const int act = value(ActvType::gelu, kFfn, d + 0.5, {fc1}, Mix::elementwise, grad(ActvType::gelu, kFfn));
        const int g_out = grad(ActvType::resid, kHidden);
        const int mlp = value(ActvType::block_out, kHidden, d + 0.5, {act}, Mix::rows, g_out);
        resid = value(ActvType::resid, kHidden, d + 1, {mid, mlp}, Mix::elementwise, g_out);
        module(at + ".input_layernorm", r_in, ln1, grad(ActvType::resid, kHidden, true), false);
        module(at + ".self_attention.linear_qkv", ln1, qkv, grad_of(ln1), false);
        module(at + ".self_attention.linear_proj", ctx, attn, grad_of(ctx), false);
        module(at + ".self_attention", ln1, attn, grad_of(ln1), true);
        module(at + ".pre_mlp_layernorm", mid, ln2, grad(ActvType::resid, kHidden, true), false);
        module(at + ".mlp.linear_fc1", ln2, fc1, grad_of(ln2), false);
        module(at + ".mlp.linear_fc2", act, mlp, grad_of(act), false);
        module(at + ".mlp", ln2, mlp, grad_of(ln2), true);
        module(at, r_in, resid, grad_of(r_in), true);
    }
    int last = resid;
    if (final_norm) {
        last = value(ActvType::ln_out, kHidden, layers_, {resid}, Mix::rows, grad(ActvType::ln_out, kHidden));
        grads_.back().past_stream = true;
        module(gpt + ".decoder.final_layernorm", resid, last, grad_of(resid), false);
    }
    if (final_norm || layers_ > 0) module(gpt + ".decoder", embedded, last, grad_of(embedded), true);
    if (head) {
        const int in = last;
        last = value(ActvType::logits, kVocab, layers_, {in}, Mix::rows, grad(ActvType::logits, kVocab));
        grads_.back().past_stream = true;
        module(gpt + ".output_layer", in, last, grad_of(in), false);
    }
    for (const char* name : {"module.module", "module", ""}) module(name, tokens, last, -1, true);

    // Each parameter belongs to the module its name starts with.
    for (std::size_t p = 0; p < params_.size(); ++p) {
        const std::string owner = params_[p].name.substr(0, params_[p].name.rfind('.'));
        for (std::size_t m = 0; m < modules_.size(); ++m)
            if (modules_[m].name == owner) {
                params_[p].module = static_cast<int>(m);
                modules_[m].params.push_back(static_cast<int>(p));
            }
    }
}

std::string SimModel::row_name(const SimModule& m, bool output) {
    return m.name + (output ? ".output" : ".input");
}

int SimModel::find_module(std::string_view text, std::string& error) const {
    std::vector<std::string_view> wanted = {text};
    for (std::string_view tail : {".output", ".input", ".weight"})
        if (ends_with(text, tail)) wanted.push_back(text.substr(0, text.size() - tail.size()));
    for (std::string_view w : wanted)
        for (std::size_t m = 0; m < modules_.size(); ++m)
            if (modules_[m].name == w) return static_cast<int>(m);
    for (std::string_view w : wanted) {
        std::vector<int> hits;
        for (std::size_t m = 0; m < modules_.size(); ++m)
            if (ends_with(modules_[m].name, std::string(".") + std::string(w))) hits.push_back(static_cast<int>(m));
        if (hits.size() == 1) return hits.front();
        if (hits.size() > 1) {
            error = "module '" + std::string(text) + "' is ambiguous: " + modules_[hits[0]].name + ", " +
                    modules_[hits[1]].name + (hits.size() > 2 ? ", ..." : "");
            return -1;
        }
    }
    error = "no module '" + std::string(text) + "' in the simulated model (e.g. " +
            modules_[static_cast<std::size_t>(default_fault_module())].name + ")";
    return -1;
}

int SimModel::default_fault_module() const {
    std::string want;
    if (layers_ > 0) want = "module.module.decoder.layers." + std::to_string((layers_ - 1) / 2) + ".mlp.linear_fc2";
    else want = params_.back().name.substr(0, params_.back().name.rfind('.'));
    for (std::size_t m = 0; m < modules_.size(); ++m)
        if (modules_[m].name == want) return static_cast<int>(m);
    return 0;
}

int SimModel::default_dead_module() const {
    if (layers_ > 0) {
        const std::string want =
            "module.module.decoder.layers." + std::to_string((layers_ - 1) / 2) + ".mlp.linear_fc1";
        for (std::size_t m = 0; m < modules_.size(); ++m)
            if (modules_[m].name == want) return static_cast<int>(m);
    }
    return default_fault_module();
}

int SimModel::find_param(std::string_view text, std::string& error) const {
    std::vector<std::string> wanted = {std::string(text)};
    if (!ends_with(text, ".weight")) wanted.push_back(std::string(text) + ".weight");
    for (const auto& w : wanted)
        for (std::size_t p = 0; p < params_.size(); ++p)
            if (params_[p].name == w) return static_cast<int>(p);
    for (const auto& w : wanted) {
        std::vector<int> hits;
        for (std::size_t p = 0; p < params_.size(); ++p)
            if (ends_with(params_[p].name, "." + w)) hits.push_back(static_cast<int>(p));
        if (hits.size() == 1) return hits.front();
        if (hits.size() > 1) {
            error = "weight '" + std::string(text) + "' is ambiguous: " + params_[hits[0]].name + ", " +
                    params_[hits[1]].name + (hits.size() > 2 ? ", ..." : "");
            return -1;
        }
    }
    error = "no weight '" + std::string(text) + "' in the simulated model (e.g. " +
            params_[static_cast<std::size_t>(default_fault_param())].name + ")";
    return -1;
}

int SimModel::default_fault_param() const {
    const SimModule& m = modules_[static_cast<std::size_t>(default_fault_module())];
    if (!m.params.empty()) return m.params.front();
    // A small model may stop before that module's weight: the first matrix from the middle on.
    for (std::size_t p = params_.size() / 2; p < params_.size(); ++p)
        if (!params_[p].vector) return static_cast<int>(p);
    return static_cast<int>(params_.size() / 2);
}

}  // namespace msmon
