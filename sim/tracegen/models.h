#pragma once
// Workload generators: standard networks as architecture-neutral Op lists, so that traces are
// produced rather than typed. Generated ops carry kGeneratedDtype as a placeholder; traces write
// them without dtype= so they take the config's default dtype when read (see write_trace).
// Every generator throws InputError for a parameter out of range or a shape whose counts would
// overflow 64 bits. docs/trace-format.md lists the ops each generator emits.
#include <cstdint>
#include <vector>

#include "models/common/op.h"

namespace accelsim {

constexpr DType kGeneratedDtype = DType::bf16;

enum class BertSize { base, large };

struct BertParams {
    BertSize size = BertSize::base;  // base: hidden 768, 12 heads, 12 layers; large: 1024, 16, 24
    std::int64_t seq = 128;          // tokens per sequence, at most BERT's 512 positions
    std::int64_t batch = 1;          // sequences
    std::int64_t layers = 0;         // encoder layers; 0 means the size's own count (12 or 24)
    bool training = false;           // append the backward GEMMs (dX and dW of every GEMM)
};

// 13 ops per layer, in this order (names for layer 0):
//   L0.attn.qkv (matmul m=seq*batch n=3*hidden k=hidden), L0.attn.scores (bmm b=batch*heads
//   m=seq n=seq k=head_dim), L0.attn.scale_mask (mul), L0.attn.softmax, L0.attn.context (bmm
//   m=seq n=head_dim k=seq), L0.attn.proj (matmul hidden x hidden), L0.resid1 (add), L0.ln1,
//   L0.ffn.fc1 (matmul n=4*hidden), L0.ffn.act (gelu), L0.ffn.fc2, L0.resid2, L0.ln2.
// With training, the backward GEMMs follow in reverse order: for a matmul Y[m,n] = X[m,k]*W[k,n],
//   NAME.dx = dY*W^T (m, n=k, k=n) and NAME.dw = X^T*dY (m=k, n, k=m); for a bmm C = A*B,
//   NAME.da = dC*B^T and NAME.db = A^T*dC with the same shape rule per batch.
std::vector<Op> bert_ops(const BertParams& params);

struct ResNet50Params {
    std::int64_t batch = 1;  // images of 224x224x3
};

// torchvision ResNet-50 v1.5 for inference (batch norm folded into the convolutions): conv1 7x7/2
// pad 3 + relu, max pool 3x3/2 (not represented: accelsim has no pooling op, see the trace's
// header), 3+4+6+3 bottleneck blocks (1x1, 3x3 carrying the stride, 1x1; a 1x1 projection
// "downsample" on each stage's first block; residual add; relus), global average pool (not
// represented), fc 2048 -> 1000 as matmul. 4,089,184,256 MACs per image.
std::vector<Op> resnet50_ops(const ResNet50Params& params);

enum class Gpt2Size { small, medium, large, xl };
enum class Gpt2Phase { prefill, decode };

struct Gpt2Params {
    Gpt2Size size = Gpt2Size::small;  // small 12x768 (12 heads), medium 24x1024 (16),
                                      // large 36x1280 (20), xl 48x1600 (25)
    Gpt2Phase phase = Gpt2Phase::prefill;
    std::int64_t seq = 512;  // prefill: prompt tokens; decode: tokens already in the KV cache
    std::int64_t batch = 1;
    std::int64_t layers = 0;  // 0 means the size's own count
};

// Pre-LN decoder, 13 ops per layer: L0.ln1, L0.attn.qkv, L0.attn.scores, L0.attn.scale_mask,
// L0.attn.softmax, L0.attn.context, L0.attn.proj, L0.resid1, L0.ln2, L0.ffn.fc1, L0.ffn.act,
// L0.ffn.fc2, L0.resid2; then ln_f and lm_head (matmul n=50257, the vocabulary). Prefill runs T=seq
// query tokens against S=seq keys (logits for every position, as Hugging Face's GPT2LMHeadModel);
// decode runs T=1 new token per sequence against S=seq+1 keys (the KV cache plus itself), so its
// matmuls have m=batch. seq (prefill) or seq+1 (decode) may not exceed GPT-2's 1024 positions.
std::vector<Op> gpt2_ops(const Gpt2Params& params);

}  // namespace accelsim
