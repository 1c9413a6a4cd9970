#include "sim/tracegen/models.h"

#include <string>

#include "sim/input_error.h"
#include "models/common/op_checks.h"

namespace accelsim {

namespace {

// Builds a model's op list; every count goes through checked arithmetic and every finished op
// through shape_problem(), so no parameter combination can produce an overflowing shape.
class OpListBuilder {
  public:
    explicit OpListBuilder(std::string model) : model_(std::move(model)) {}

    std::int64_t mul(std::initializer_list<std::int64_t> factors) const {
        const auto p = checked_product(factors);
        if (!p) throw InputError(model_ + ": the requested size overflows a 64-bit integer");
        return *p;
    }

    void matmul(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k) {
        Op op = base(OpKind::matmul, name);
        op.gemm = GemmShape{1, m, n, k};
        push(std::move(op));
    }
    void bmm(const std::string& name, std::int64_t b, std::int64_t m, std::int64_t n,
             std::int64_t k) {
        Op op = base(OpKind::bmm, name);
        op.gemm = GemmShape{b, m, n, k};
        push(std::move(op));
    }
    void rows_cols(OpKind kind, const std::string& name, std::int64_t rows, std::int64_t cols) {
        Op op = base(kind, name);
        op.rows = rows;
        op.cols = cols;
        push(std::move(op));
    }
    void elementwise(OpKind kind, const std::string& name, std::int64_t elements) {
        Op op = base(kind, name);
        op.elements = elements;
        push(std::move(op));
    }
    void conv(const std::string& name, const Conv2dShape& shape) {
        Op op = base(OpKind::conv2d, name);
        op.conv = shape;
        push(std::move(op));
    }
    void pool(const std::string& name, const PoolShape& shape) {
        Op op = base(OpKind::pool, name);
        op.pool = shape;
        push(std::move(op));
    }

    std::vector<Op>& ops() { return ops_; }

  private:
    static Op base(OpKind kind, const std::string& name) {
        Op op;
        op.kind = kind;
        op.name = name;
        op.dtype = kGeneratedDtype;
        return op;
    }
    void push(Op op) {
        if (const std::string problem = shape_problem(op); !problem.empty())
            throw InputError(model_ + ": " + op.name + ": " + problem);
        ops_.push_back(std::move(op));
    }

    std::string model_;
    std::vector<Op> ops_;
};

void require_positive(const std::string& model, const char* option, std::int64_t v) {
    if (v <= 0)
        throw InputError(model + ": " + option + " must be a positive integer, got " +
                         std::to_string(v));
}

// Ten thousand layers is ~130k ops, far beyond any real network; the cap keeps a mistyped count
// from exhausting memory instead of failing.
constexpr std::int64_t kMaxLayers = 10000;

void check_layers(const std::string& model, std::int64_t layers) {
    if (layers < 0) require_positive(model, "--layers", layers);
    if (layers > kMaxLayers)
        throw InputError(model + ": --layers " + std::to_string(layers) + " exceeds the limit of " +
                         std::to_string(kMaxLayers));
}

struct TransformerDims {
    std::int64_t hidden, heads, ffn;
    std::int64_t batch;
    std::int64_t queries;  // tokens computed per sequence (T)
    std::int64_t keys;     // tokens attended to per sequence (S)
};

// The attention core shared by BERT and GPT-2: QKV projection to output projection.
void attention(OpListBuilder& b, const std::string& p, const TransformerDims& d) {
    const std::int64_t tokens = b.mul({d.batch, d.queries});
    const std::int64_t bh = b.mul({d.batch, d.heads});
    const std::int64_t head_dim = d.hidden / d.heads;
    b.matmul(p + "attn.qkv", tokens, b.mul({3, d.hidden}), d.hidden);
    b.bmm(p + "attn.scores", bh, d.queries, d.keys, head_dim);
    b.elementwise(OpKind::mul, p + "attn.scale_mask", b.mul({bh, d.queries, d.keys}));
    b.rows_cols(OpKind::softmax, p + "attn.softmax", b.mul({bh, d.queries}), d.keys);
    b.bmm(p + "attn.context", bh, d.queries, head_dim, d.keys);
    b.matmul(p + "attn.proj", tokens, d.hidden, d.hidden);
}

void feed_forward(OpListBuilder& b, const std::string& p, const TransformerDims& d) {
    const std::int64_t tokens = b.mul({d.batch, d.queries});
    b.matmul(p + "ffn.fc1", tokens, d.ffn, d.hidden);
    b.elementwise(OpKind::gelu, p + "ffn.act", b.mul({tokens, d.ffn}));
    b.matmul(p + "ffn.fc2", tokens, d.hidden, d.ffn);
}

}  // namespace

std::vector<Op> bert_ops(const BertParams& params) {
    const std::string model = "bert";
    require_positive(model, "--seq", params.seq);
    require_positive(model, "--batch", params.batch);
    check_layers(model, params.layers);
    const bool large = params.size == BertSize::large;
    TransformerDims d;
    d.hidden = large ? 1024 : 768;
    d.heads = large ? 16 : 12;
    d.ffn = 4 * d.hidden;
    d.batch = params.batch;
    d.queries = params.seq;
    d.keys = params.seq;
    const std::int64_t layers = params.layers > 0 ? params.layers : (large ? 24 : 12);
    constexpr std::int64_t kPositions = 512;  // max_position_embeddings of both sizes
    if (params.seq > kPositions)
        throw InputError(model + ": --seq " + std::to_string(params.seq) +
                         " exceeds BERT's 512 positions");

    OpListBuilder b(model);
    const std::int64_t tokens = b.mul({d.batch, d.queries});
    const std::int64_t activations = b.mul({tokens, d.hidden});
    for (std::int64_t l = 0; l < layers; ++l) {
        // Post-LN encoder layer (Devlin et al. 2019; Vaswani et al. 2017).
        const std::string p = "L" + std::to_string(l) + ".";
        attention(b, p, d);
        b.elementwise(OpKind::add, p + "resid1", activations);
        b.rows_cols(OpKind::layernorm, p + "ln1", tokens, d.hidden);
        feed_forward(b, p, d);
        b.elementwise(OpKind::add, p + "resid2", activations);
        b.rows_cols(OpKind::layernorm, p + "ln2", tokens, d.hidden);
    }
    if (params.training) {
        const std::vector<Op> forward = b.ops();
        for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
            const GemmShape& g = it->gemm;
            if (it->kind == OpKind::matmul) {
                b.matmul(it->name + ".dx", g.m, g.k, g.n);  // dX[m,k] = dY[m,n] * W^T[n,k]
                b.matmul(it->name + ".dw", g.k, g.n, g.m);  // dW[k,n] = X^T[k,m] * dY[m,n]
            } else if (it->kind == OpKind::bmm) {
                b.bmm(it->name + ".da", g.batch, g.m, g.k, g.n);  // dA = dC * B^T
                b.bmm(it->name + ".db", g.batch, g.k, g.n, g.m);  // dB = A^T * dC
            }
        }
    }
    return std::move(b.ops());
}

std::vector<Op> resnet50_ops(const ResNet50Params& params) {
    const std::string model = "resnet50";
    require_positive(model, "--batch", params.batch);
    OpListBuilder b(model);
    const std::int64_t n = params.batch;

    // One convolution on an NHWC input; returns the output spatial size.
    const auto conv = [&](const std::string& name, std::int64_t size, std::int64_t in_ch,
                          std::int64_t out_ch, std::int64_t kernel, std::int64_t stride,
                          std::int64_t pad) {
        Conv2dShape s;
        s.n = n;
        s.h = s.w = size;
        s.c = in_ch;
        s.k = out_ch;
        s.r = s.s = kernel;
        s.stride_h = s.stride_w = stride;
        s.pad_h = s.pad_w = pad;
        b.conv(name, s);
        return s.out_h();
    };
    const auto relu = [&](const std::string& name, std::int64_t size, std::int64_t channels) {
        b.elementwise(OpKind::relu, name, b.mul({n, size, size, channels}));
    };

    std::int64_t size = conv("conv1", 224, 3, 64, 7, 2, 3);  // 112
    relu("relu", size, 64);
    PoolShape maxpool;  // 3x3 stride 2 pad 1: 112 -> 56
    maxpool.n = n;
    maxpool.h = maxpool.w = size;
    maxpool.c = 64;
    maxpool.r = maxpool.s = 3;
    maxpool.stride_h = maxpool.stride_w = 2;
    maxpool.pad_h = maxpool.pad_w = 1;
    b.pool("maxpool", maxpool);
    size = maxpool.out_h();

    struct Stage {
        std::int64_t blocks, width, stride;
    };
    const Stage stages[] = {{3, 64, 1}, {4, 128, 2}, {6, 256, 2}, {3, 512, 2}};
    std::int64_t channels = 64;
    for (int si = 0; si < 4; ++si) {
        const Stage& st = stages[si];
        const std::int64_t out_ch = st.width * 4;
        for (std::int64_t bi = 0; bi < st.blocks; ++bi) {
            const std::string p = "layer" + std::to_string(si + 1) + "." + std::to_string(bi) + ".";
            const std::int64_t stride = bi == 0 ? st.stride : 1;
            conv(p + "conv1", size, channels, st.width, 1, 1, 0);
            relu(p + "relu1", size, st.width);
            // v1.5: the stride sits on the 3x3 convolution, not on the first 1x1.
            const std::int64_t out = conv(p + "conv2", size, st.width, st.width, 3, stride, 1);
            relu(p + "relu2", out, st.width);
            conv(p + "conv3", out, st.width, out_ch, 1, 1, 0);
            if (bi == 0) conv(p + "downsample", size, channels, out_ch, 1, stride, 0);
            b.elementwise(OpKind::add, p + "add", b.mul({n, out, out, out_ch}));
            relu(p + "relu3", out, out_ch);
            size = out;
            channels = out_ch;
        }
    }
    // Global average pool (7x7 -> 1x1), then the classifier.
    PoolShape avgpool;
    avgpool.mode = PoolMode::avg;
    avgpool.global = true;
    avgpool.n = n;
    avgpool.h = avgpool.w = avgpool.r = avgpool.s = size;
    avgpool.c = channels;
    b.pool("avgpool", avgpool);
    b.matmul("fc", n, 1000, channels);
    return std::move(b.ops());
}

std::vector<Op> gpt2_ops(const Gpt2Params& params) {
    const std::string model = "gpt2";
    require_positive(model, "--seq", params.seq);
    require_positive(model, "--batch", params.batch);
    check_layers(model, params.layers);
    // Radford et al. 2019, Table 2, and the released configs (n_head).
    struct Size {
        std::int64_t layers, hidden, heads;
    };
    const Size sizes[] = {{12, 768, 12}, {24, 1024, 16}, {36, 1280, 20}, {48, 1600, 25}};
    const Size& sz = sizes[static_cast<int>(params.size)];
    constexpr std::int64_t kPositions = 1024;  // n_ctx
    constexpr std::int64_t kVocabulary = 50257;
    const bool decode = params.phase == Gpt2Phase::decode;
    const std::int64_t keys = decode ? params.seq + 1 : params.seq;
    if (keys > kPositions)
        throw InputError(model + ": --seq " + std::to_string(params.seq) +
                         (decode ? " plus the new token exceeds" : " exceeds") +
                         " GPT-2's 1024 positions");

    TransformerDims d;
    d.hidden = sz.hidden;
    d.heads = sz.heads;
    d.ffn = 4 * sz.hidden;
    d.batch = params.batch;
    d.queries = decode ? 1 : params.seq;
    d.keys = keys;
    const std::int64_t layers = params.layers > 0 ? params.layers : sz.layers;

    OpListBuilder b(model);
    const std::int64_t tokens = b.mul({d.batch, d.queries});
    const std::int64_t activations = b.mul({tokens, d.hidden});
    for (std::int64_t l = 0; l < layers; ++l) {
        const std::string p = "L" + std::to_string(l) + ".";
        b.rows_cols(OpKind::layernorm, p + "ln1", tokens, d.hidden);
        attention(b, p, d);
        b.elementwise(OpKind::add, p + "resid1", activations);
        b.rows_cols(OpKind::layernorm, p + "ln2", tokens, d.hidden);
        feed_forward(b, p, d);
        b.elementwise(OpKind::add, p + "resid2", activations);
    }
    b.rows_cols(OpKind::layernorm, "ln_f", tokens, d.hidden);
    b.matmul("lm_head", tokens, kVocabulary, d.hidden);
    return std::move(b.ops());
}

}  // namespace accelsim
