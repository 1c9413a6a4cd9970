#include "models/gpu/repeated_ops.h"

#include <utility>

namespace accelsim::gpu {

namespace {

// The shapes' fields are all listed in append_op_shape_key; a struct that grows fails here first.
static_assert(sizeof(GemmShape) == 4 * sizeof(std::int64_t), "GemmShape grew: add the field to append_op_shape_key");
static_assert(sizeof(Conv2dShape) == 14 * sizeof(std::int64_t),
              "Conv2dShape grew: add the field to append_op_shape_key");
static_assert(sizeof(PoolShape) == 12 * sizeof(std::int64_t) + 8, "PoolShape grew: add the field to append_op_shape_key");

void append_word(std::string& key, std::int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); }

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    // splitmix64's finalizer over h ^ v: every input bit reaches every output bit.
    std::uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

bool same_lines(const L2Lines& a, const L2Lines& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].line_address != b[i].line_address || a[i].valid != b[i].valid || a[i].dirty != b[i].dirty)
            return false;
    return true;
}

bool same_allocation(const std::optional<simt::GlobalMemory::Allocation>& a,
                     const std::optional<simt::GlobalMemory::Allocation>& b) {
    if (a.has_value() != b.has_value()) return false;
    return !a || (a->address == b->address && a->bytes == b->bytes);
}

bool same_start(const OpStart& a, const OpStart& b) {
    return a.shape == b.shape && same_allocation(a.previous_output, b.previous_output) &&
           (a.l2 == b.l2 || same_lines(*a.l2, *b.l2));
}

}  // namespace

void append_op_shape_key(std::string& key, const Op& op) {
    append_word(key, static_cast<std::int64_t>(op.kind));
    append_word(key, static_cast<std::int64_t>(op.dtype));
    append_word(key, op.b_dtype ? static_cast<std::int64_t>(*op.b_dtype) : -1);
    for (const std::int64_t v : {op.gemm.batch, op.gemm.m, op.gemm.n, op.gemm.k}) append_word(key, v);
    const Conv2dShape& c = op.conv;
    for (const std::int64_t v : {c.n, c.h, c.w, c.c, c.k, c.r, c.s, c.stride_h, c.stride_w, c.pad_h, c.pad_w,
                                 c.dilation_h, c.dilation_w, c.groups})
        append_word(key, v);
    const PoolShape& p = op.pool;
    for (const std::int64_t v : {p.n, p.h, p.w, p.c, p.r, p.s, p.stride_h, p.stride_w, p.pad_h, p.pad_w,
                                 p.dilation_h, p.dilation_w})
        append_word(key, v);
    append_word(key, static_cast<std::int64_t>(p.mode));
    append_word(key, (p.ceil_mode ? 1 : 0) | (p.count_pad ? 2 : 0) | (p.global ? 4 : 0));
    for (const std::int64_t v : {op.rows, op.cols, op.elements}) append_word(key, v);
}

std::uint64_t RepeatedOpCache::digest(const OpStart& start) {
    std::uint64_t h = std::hash<std::string>{}(start.shape);
    if (start.previous_output) h = mix(mix(h, start.previous_output->address), start.previous_output->bytes);
    for (const auto& line : *start.l2)
        h = mix(h, line.line_address ^ (static_cast<std::uint64_t>(line.valid) << 48) ^
                       (static_cast<std::uint64_t>(line.dirty) << 56));
    return h;
}

const OpOutcome* RepeatedOpCache::find(const OpStart& start) {
    const auto it = entries_by_digest_.find(digest(start));
    if (it == entries_by_digest_.end()) return nullptr;
    for (const Entry& e : it->second)
        if (same_start(e.start, start)) {
            ++hits_;
            return &e.outcome;
        }
    return nullptr;
}

std::size_t RepeatedOpCache::lines_bytes(const std::shared_ptr<const L2Lines>& lines) {
    if (!lines || counted_.count(lines.get())) return 0;
    return lines->size() * sizeof(memory::L2Cache::ResidentLine);
}

void RepeatedOpCache::keep(const OpStart& start, OpOutcome outcome) {
    const std::size_t more = lines_bytes(start.l2) + (start.l2 == outcome.l2 ? 0 : lines_bytes(outcome.l2));
    if (held_bytes_ + more > budget_bytes_) return;
    held_bytes_ += more;
    counted_.insert(start.l2.get());
    counted_.insert(outcome.l2.get());
    entries_by_digest_[digest(start)].push_back(Entry{start, std::move(outcome)});
}

}  // namespace accelsim::gpu
