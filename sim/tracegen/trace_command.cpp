#include "sim/tracegen/trace_command.h"

#include <boost/program_options.hpp>
#include <charconv>
#include <fstream>
#include <functional>
#include <sstream>

#include "sim/input_error.h"
#include "sim/output/output_file.h"
#include "models/common/op_checks.h"
#include "sim/tracegen/models.h"
#include "sim/tracegen/trace_writer.h"

namespace accelsim {

namespace po = boost::program_options;

namespace {

// Bad usage: one message, printed by run_trace_command as "accelsim trace MODEL: message".
struct UsageError {
    std::string message;
};

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t best_distance = 0;
    for (const std::string& c : candidates) {
        const std::size_t d = edit_distance(word, c);
        if (best.empty() || d < best_distance) {
            best = c;
            best_distance = d;
        }
    }
    return best_distance <= std::max<std::size_t>(2, best.size() / 3) ? best : std::string();
}

std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
    const std::string best = nearest(word, candidates);
    return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

std::int64_t positive_option(const po::variables_map& vm, const char* name, std::int64_t fallback) {
    if (!vm.count(name)) return fallback;
    const std::string& text = vm[name].as<std::string>();
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v <= 0)
        throw UsageError{std::string("--") + name + " must be a positive integer, got '" + text +
                         "'"};
    return v;
}

// The value of a --name option among choices (in order), or its index in choices.
std::size_t choice_option(const po::variables_map& vm, const char* name,
                          const std::vector<std::string>& choices, std::size_t fallback) {
    if (!vm.count(name)) return fallback;
    const std::string& text = vm[name].as<std::string>();
    for (std::size_t i = 0; i < choices.size(); ++i)
        if (choices[i] == text) return i;
    std::string list;
    for (const std::string& c : choices) list += (list.empty() ? "" : "|") + c;
    throw UsageError{std::string("--") + name + " must be one of " + list + ", got '" + text + "'" +
                     suggestion(text, choices)};
}

// A generated trace and the canonical command that regenerates it (all options explicit).
struct Generated {
    std::vector<Op> ops;
    std::string command;
    std::string description;
};

// Each op's counts fit in 64 bits (checked when it was built), but their sums need not; a trace
// that could not be read back is refused here.
std::int64_t checked_total_macs(const std::vector<Op>& ops) {
    TraceTotals totals;
    std::int64_t macs = 0;
    for (const Op& op : ops) {
        if (const std::string problem = totals.add(op); !problem.empty()) throw InputError(problem);
        macs += op.macs();
    }
    return macs;
}

const std::vector<std::string> kBertSizes = {"base", "large"};
const std::vector<std::string> kGpt2Sizes = {"small", "medium", "large", "xl"};
const std::vector<std::string> kGpt2Phases = {"prefill", "decode"};

Generated generate_bert(const po::variables_map& vm) {
    BertParams p;
    p.size = static_cast<BertSize>(choice_option(vm, "size", kBertSizes, 0));
    p.seq = positive_option(vm, "seq", p.seq);
    p.batch = positive_option(vm, "batch", p.batch);
    const bool large = p.size == BertSize::large;
    p.layers = positive_option(vm, "layers", large ? 24 : 12);
    p.training = vm["training"].as<bool>();
    Generated g;
    g.ops = bert_ops(p);
    g.command = "accelsim trace bert --size " + kBertSizes[static_cast<std::size_t>(p.size)] +
                " --seq " + std::to_string(p.seq) + " --batch " + std::to_string(p.batch) +
                " --layers " + std::to_string(p.layers) + (p.training ? " --training" : "");
    std::ostringstream d;
    d << "BERT-" << (large ? "large" : "base") << " encoder (post-LN): hidden "
      << (large ? 1024 : 768) << ", " << (large ? 16 : 12) << " heads, FFN "
      << (large ? 4096 : 3072) << ", " << p.layers << (p.layers == 1 ? " layer; seq " : " layers; seq ") << p.seq << ", batch "
      << p.batch << ".\n"
      << "13 ops per layer: QKV projection, scores bmm, scale+mask, softmax, context bmm, output\n"
      << "projection, residual add, layernorm, FFN1, GELU, FFN2, residual add, layernorm.\n"
      << "Embeddings, pooler and task head are not included.\n"
      << (p.training ? "Training: the backward GEMMs (dX, dW of each matmul; dA, dB of each bmm)\n"
                       "follow the forward pass in reverse order; vector-op backward passes and\n"
                       "the optimizer step are not included.\n"
                     : "Inference: forward pass only.\n");
    g.description = d.str();
    return g;
}

Generated generate_resnet50(const po::variables_map& vm) {
    ResNet50Params p;
    p.batch = positive_option(vm, "batch", p.batch);
    Generated g;
    g.ops = resnet50_ops(p);
    g.command = "accelsim trace resnet50 --batch " + std::to_string(p.batch);
    g.description = "ResNet-50 v1.5 (torchvision layout), inference, batch " +
                    std::to_string(p.batch) +
                    " of 224x224x3 images.\n"
                    "Batch norm is folded into the convolutions; the 3x3/2 max pool after conv1\n"
                    "(112x112 -> 56x56) and the global average pool before fc are pool ops.\n";
    return g;
}

Generated generate_gpt2(const po::variables_map& vm) {
    Gpt2Params p;
    p.size = static_cast<Gpt2Size>(choice_option(vm, "size", kGpt2Sizes, 0));
    p.phase = static_cast<Gpt2Phase>(choice_option(vm, "phase", kGpt2Phases, 0));
    p.seq = positive_option(vm, "seq", p.seq);
    p.batch = positive_option(vm, "batch", p.batch);
    const std::int64_t default_layers[] = {12, 24, 36, 48};
    p.layers = positive_option(vm, "layers", default_layers[static_cast<int>(p.size)]);
    Generated g;
    g.ops = gpt2_ops(p);
    const std::string size = kGpt2Sizes[static_cast<std::size_t>(p.size)];
    const bool decode = p.phase == Gpt2Phase::decode;
    g.command = "accelsim trace gpt2 --size " + size + " --phase " +
                kGpt2Phases[static_cast<std::size_t>(p.phase)] + " --seq " + std::to_string(p.seq) +
                " --batch " + std::to_string(p.batch) + " --layers " + std::to_string(p.layers);
    g.description =
        "GPT-2 " + size + " (pre-LN decoder), " + std::to_string(p.layers) + " layers, batch " +
        std::to_string(p.batch) + ".\n" +
        (decode ? "Decode: one new token per sequence attending to a KV cache of " +
                      std::to_string(p.seq) + " tokens plus itself.\n"
                : "Prefill: " + std::to_string(p.seq) +
                      " prompt tokens, logits for every position.\n") +
        "Token and position embeddings (lookups) and KV-cache writes are not included.\n";
    return g;
}

struct Model {
    std::string name;
    std::function<void(po::options_description&)> add_options;
    std::function<Generated(const po::variables_map&)> generate;
};

const std::vector<Model>& models() {
    static const std::vector<Model> list = {
        {"bert",
         [](po::options_description& o) {
             o.add_options()("size", po::value<std::string>(), "base|large (default base)")(
                 "seq", po::value<std::string>(), "tokens per sequence (default 128)")(
                 "batch", po::value<std::string>(), "sequences (default 1)")(
                 "layers", po::value<std::string>(), "encoder layers (default 12 base, 24 large)")(
                 "training", po::bool_switch(), "add the backward GEMMs (dX and dW)");
         },
         generate_bert},
        {"resnet50",
         [](po::options_description& o) {
             o.add_options()("batch", po::value<std::string>(), "images (default 1)");
         },
         generate_resnet50},
        {"gpt2",
         [](po::options_description& o) {
             o.add_options()("size", po::value<std::string>(),
                             "small|medium|large|xl (default small)")(
                 "phase", po::value<std::string>(), "prefill|decode (default prefill)")(
                 "seq", po::value<std::string>(),
                 "prefill: prompt tokens; decode: tokens in the KV cache (default 512)")(
                 "batch", po::value<std::string>(), "sequences (default 1)")(
                 "layers", po::value<std::string>(), "decoder layers (default: the size's)");
         },
         generate_gpt2},
    };
    return list;
}

std::string usage() {
    return "usage: accelsim trace MODEL [options] [-o FILE]\n"
           "models: bert, resnet50, gpt2 ('accelsim trace MODEL --help' lists the options)\n";
}

}  // namespace

int run_trace_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    if (args.empty()) {
        err << "accelsim trace: missing model\n" << usage();
        return 2;
    }
    if (args[0] == "--help" || args[0] == "-h") {
        out << usage();
        return 0;
    }
    const Model* model = nullptr;
    std::vector<std::string> names;
    for (const Model& m : models()) {
        names.push_back(m.name);
        if (m.name == args[0]) model = &m;
    }
    if (!model) {
        err << "accelsim trace: unknown model '" << args[0] << "'" << suggestion(args[0], names)
            << " (models: bert, resnet50, gpt2)\n";
        return 2;
    }
    const std::string prefix = "accelsim trace " + model->name + ": ";

    po::options_description options("accelsim trace " + model->name + " options");
    model->add_options(options);
    options.add_options()("output,o", po::value<std::string>(), "write the trace to FILE")(
        "help,h", "show this help");
    try {
        po::variables_map vm;
        const std::vector<std::string> rest(args.begin() + 1, args.end());
        po::store(po::command_line_parser(rest).options(options).run(), vm);
        po::notify(vm);
        if (vm.count("help")) {
            out << options;
            return 0;
        }
        const Generated g = model->generate(vm);
        std::ostringstream comment;
        comment << "generated by: " << g.command << '\n'
                << g.description << g.ops.size() << " ops, " << checked_total_macs(g.ops)
                << " MACs.\n"
                << "No dtype on the op lines: they take the config's default dtype.";
        std::ostringstream text;
        write_trace(text, g.ops, comment.str(), kGeneratedDtype);
        write_text_output("-o", vm.count("output") ? vm["output"].as<std::string>() : "", text.str(), out);
        return 0;
    } catch (const po::unknown_option& e) {
        std::vector<std::string> known;
        for (const auto& o : options.options()) known.push_back("--" + o->long_name());
        err << prefix << "unknown option '" << e.get_option_name() << "'"
            << suggestion(e.get_option_name(), known) << "\n";
    } catch (const po::error& e) {
        err << prefix << e.what() << "\n";
    } catch (const UsageError& e) {
        err << prefix << e.message << "\n";
    } catch (const InputError& e) {
        err << "accelsim trace: " << e.what() << "\n";
    }
    return 2;
}

}  // namespace accelsim
