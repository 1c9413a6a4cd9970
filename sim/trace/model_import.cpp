#include "sim/trace/model_import.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "models/common/op_checks.h"
#include "sim/input_error.h"

namespace accelsim {

namespace {

std::int64_t sum(const std::map<std::string, std::int64_t>& counts) {
    std::int64_t total = 0;
    for (const auto& [name, n] : counts) total += n;
    return total;
}

std::string counts_text(const std::map<std::string, std::int64_t>& counts) {
    std::string text;
    for (const auto& [name, n] : counts) text += (text.empty() ? "" : ", ") + name + " x" + std::to_string(n);
    return text;
}

// Trace names are one word of printable ASCII without '#' or '=' (the trace syntax's separators).
std::string one_word(const std::string& name) {
    std::string out;
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        out += (u <= ' ' || u >= 0x7f || c == '#' || c == '=') ? '_' : c;
    }
    while (!out.empty() && out.front() == '/') out.erase(out.begin());  // ONNX scopes start with '/'
    return out;
}

}  // namespace

std::int64_t ImportSummary::unmapped_count() const { return sum(unmapped); }

nlohmann::json ImportSummary::to_json() const {
    return {{"format", format},     {"file", file},     {"source_ops", source_ops}, {"ops", ops},
            {"mapped", mapped},     {"fused", fused},   {"folded", folded},         {"shape_only", shape_only},
            {"nested", nested},     {"unmapped", unmapped}, {"patterns", patterns}, {"notes", notes}};
}

std::string ImportSummary::text() const {
    std::ostringstream s;
    s << "import: " << format << " " << file << ": " << source_ops << " source ops -> " << ops << " accelsim ops ("
      << sum(mapped) << " mapped, " << sum(fused) << " fused into patterns, " << sum(folded) << " folded, "
      << sum(shape_only) << " shape-only at no cost";
    if (!nested.empty()) s << ", " << sum(nested) << " outer events of an inner one taken";
    s << ", " << unmapped_count() << " unmapped)\n";
    if (!patterns.empty()) s << "import: patterns: " << counts_text(patterns) << "\n";
    if (!unmapped.empty()) s << "import: UNMAPPED (not simulated): " << counts_text(unmapped) << "\n";
    for (const std::string& note : notes) s << "import: note: " << note << "\n";
    return s.str();
}

std::string numpy_matmul(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b, OpKind& kind,
                         GemmShape& gemm) {
    using Shape = std::vector<std::int64_t>;
    if (a.empty() || b.empty()) return "a 0-D operand";
    const Shape sa = a.size() == 1 ? Shape{1, a[0]} : a;
    const Shape sb = b.size() == 1 ? Shape{b[0], 1} : b;
    const std::int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
    if (sb[sb.size() - 2] != k)
        return "inner dimensions differ (" + std::to_string(k) + " and " + std::to_string(sb[sb.size() - 2]) + ")";
    const std::size_t ba = sa.size() - 2, bb = sb.size() - 2, rank = std::max(ba, bb);
    std::int64_t batch = 1, batch_b = 1;
    for (std::size_t j = 0; j < rank; ++j) {
        // Aligned from the right; a missing dimension is 1.
        const std::int64_t da = j + ba >= rank ? sa[j + ba - rank] : 1;
        const std::int64_t db = j + bb >= rank ? sb[j + bb - rank] : 1;
        if (da != db && da != 1 && db != 1)
            return "batch dimensions " + std::to_string(da) + " and " + std::to_string(db) + " do not broadcast";
        const auto next = checked_mul(batch, std::max(da, db));
        const auto next_b = checked_mul(batch_b, db);
        if (!next || !next_b) return "element count overflows a 64-bit integer";
        batch = *next;
        batch_b = *next_b;
    }
    if (batch_b == 1) {
        // One B for every row of A (weights, or an activation all rows share): rows stack into M.
        const auto rows = checked_mul(batch, m);
        if (!rows) return "element count overflows a 64-bit integer";
        kind = OpKind::matmul;
        gemm = {1, *rows, n, k};
    } else {
        kind = OpKind::bmm;
        gemm = {batch, m, n, k};
    }
    return "";
}

std::string conv_channels_problem(std::int64_t channels, std::int64_t weight_channels, std::int64_t groups) {
    const auto product = checked_mul(weight_channels, groups);  // fuzzed sizes can overflow
    if (groups > 0 && product && *product == channels) return "";
    return "weight has " + std::to_string(weight_channels) + " input channels per group, input has " +
           std::to_string(channels) + " channels in " + std::to_string(groups) + " group(s)";
}

void finish_imported_ops(ImportedModel& model, bool strict) {
    const std::string& file = model.summary.file;
    if (strict && !model.summary.unmapped.empty())
        throw InputError(file + ": --strict: " + std::to_string(model.summary.unmapped_count()) +
                         " operator(s) have no accelsim mapping: " + counts_text(model.summary.unmapped));
    if (model.ops.empty())
        throw InputError(file + ": no operator accelsim can simulate (" + std::to_string(model.summary.source_ops) +
                         " source ops" +
                         (model.summary.unmapped.empty() ? std::string()
                                                         : "; unmapped: " + counts_text(model.summary.unmapped)) +
                         ")");
    std::set<std::string> used;
    TraceTotals totals;
    for (Op& op : model.ops) {
        std::string name = one_word(op.name);
        if (name.empty()) name = std::string(to_string(op.kind));
        // Repeated names (unnamed nodes, profiler events of one kind) get .2, .3, ...
        if (!used.insert(name).second) {
            for (int i = 2;; ++i)
                if (used.insert(name + "." + std::to_string(i)).second) {
                    name += "." + std::to_string(i);
                    break;
                }
        }
        op.name = name;
        op.file = file;
        const std::string where = file + ":" + std::to_string(op.line) + ": " + std::string(to_string(op.kind)) + " '" +
                                  op.name + "': ";
        if (const std::string problem = shape_problem(op); !problem.empty()) throw InputError(where + problem);
        if (const std::string problem = totals.add(op); !problem.empty()) throw InputError(where + problem);
    }
    model.summary.ops = static_cast<std::int64_t>(model.ops.size());
}

}  // namespace accelsim
