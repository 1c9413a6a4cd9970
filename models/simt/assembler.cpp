// Text assembler for the SIMT ISA (docs/simt-isa.md). Two passes: parse every line (labels may be
// used before they are defined), then resolve branch targets, compute reconvergence points from
// the CFG and check which instructions carry floating-point payload only.
#include <algorithm>
#include <bitset>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "models/simt/isa.h"

namespace accelsim::simt {

namespace {

std::string trim(const std::string& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            out.push_back(trim(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(trim(cur));
    return out;
}

bool is_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Parses "r12" / "p3" style names: prefix letter + decimal index.
bool parse_indexed(const std::string& s, char prefix, int& index) {
    if (s.size() < 2 || s[0] != prefix) return false;
    for (std::size_t i = 1; i < s.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    if (s.size() > 5) return false;
    index = std::stoi(s.substr(1));
    return true;
}

class Parser {
public:
    Parser(const std::string& file) { kernel_.file = file; }

    [[noreturn]] void fail(int line, const std::string& msg) const {
        throw AssemblyError(kernel_.file + ":" + std::to_string(line) + ": " + msg);
    }

    void parse_line(std::string text, int line) {
        for (const char* marker : {"//", "#"}) {
            const auto pos = text.find(marker);
            if (pos != std::string::npos) text.erase(pos);
        }
        text = trim(text);
        if (text.empty()) return;
        if (text[0] == '.') return parse_directive(text, line);
        // Labels: "name:" possibly followed by an instruction.
        const auto colon = text.find(':');
        if (colon != std::string::npos && is_identifier(trim(text.substr(0, colon)))) {
            const std::string label = trim(text.substr(0, colon));
            if (kernel_.labels.count(label)) fail(line, "label '" + label + "' defined twice");
            kernel_.labels[label] = static_cast<int>(kernel_.code.size());
            text = trim(text.substr(colon + 1));
            if (text.empty()) return;
        }
        parse_instruction(text, line);
    }

    Kernel finish() {
        if (kernel_.code.empty()) fail(last_line_, "kernel has no instructions");
        for (std::size_t i = 0; i < kernel_.code.size(); ++i) {
            Instruction& in = kernel_.code[i];
            if (in.op != Opcode::bra) continue;
            const auto it = kernel_.labels.find(branch_labels_[i]);
            if (it == kernel_.labels.end()) fail(in.line, "unknown label '" + branch_labels_[i] + "'");
            in.target = it->second;
        }
        const std::vector<int> ipdom = immediate_post_dominators(kernel_.code);
        for (std::size_t i = 0; i < kernel_.code.size(); ++i)
            if (kernel_.code[i].op == Opcode::bra) kernel_.code[i].reconverge = ipdom[i];
        check_fp_dependence();
        return std::move(kernel_);
    }

    void set_last_line(int l) { last_line_ = l; }

private:
    void parse_directive(const std::string& text, int line) {
        std::istringstream in(text);
        std::string name;
        in >> name;
        std::string rest;
        std::getline(in, rest);
        rest = trim(rest);
        if (name == ".kernel") {
            if (!is_identifier(rest)) fail(line, ".kernel needs a name");
            kernel_.name = rest;
        } else if (name == ".param") {
            for (std::string p : split(rest, ',')) {
                std::istringstream words(p);
                std::string w;
                while (words >> w) {
                    if (!is_identifier(w)) fail(line, "bad parameter name '" + w + "'");
                    if (std::find(kernel_.params.begin(), kernel_.params.end(), w) != kernel_.params.end())
                        fail(line, "parameter '" + w + "' declared twice");
                    kernel_.params.push_back(w);
                }
            }
        } else if (name == ".reg") {
            const long long n = parse_integer(rest, line);
            if (n < 1 || n > kMaxRegisters) fail(line, ".reg must be between 1 and 255");
            if (!kernel_.code.empty()) fail(line, ".reg must come before the first instruction");
            kernel_.registers = static_cast<int>(n);
        } else if (name == ".shared") {
            const long long n = parse_integer(rest, line);
            if (n < 0 || n > (1LL << 30)) fail(line, ".shared must be a byte count");
            kernel_.shared_bytes = n;
        } else if (name == ".cluster") {
            // PTX .reqnctapercluster / CUDA __cluster_dims__: blocks per cluster (one dimension).
            const long long n = parse_integer(rest, line);
            if (n < 1 || n > 8) fail(line, ".cluster must be between 1 and 8 blocks");
            kernel_.cluster = static_cast<int>(n);
        } else {
            fail(line, "unknown directive '" + name + "' (expected .kernel, .param, .reg, .shared or .cluster)");
        }
    }

    long long parse_integer(const std::string& s, int line) const {
        std::size_t used = 0;
        long long v = 0;
        try {
            v = std::stoll(s, &used, 0);
        } catch (const std::exception&) {
            fail(line, "expected an integer, got '" + s + "'");
        }
        if (used != s.size()) fail(line, "expected an integer, got '" + s + "'");
        return v;
    }

    Operand parse_source(const std::string& s, int line) const {
        Operand o;
        int index = 0;
        if (s.empty()) fail(line, "missing operand");
        if (parse_indexed(s, 'r', index)) {
            check_register(index, line);
            o.kind = Operand::Kind::reg;
            o.value = static_cast<std::uint32_t>(index);
            return o;
        }
        if (s[0] == '%') {
            std::string name = s.substr(1);
            if (name.size() > 2 && name.compare(name.size() - 2, 2, ".x") == 0) name.resize(name.size() - 2);
            static const std::pair<const char*, Special> specials[] = {
                {"tid", Special::tid},     {"ctaid", Special::ctaid},   {"ntid", Special::ntid},
                {"nctaid", Special::nctaid}, {"laneid", Special::laneid}, {"warpid", Special::warpid},
                {"cluster_ctarank", Special::cluster_ctarank}};
            for (const auto& [n, sp] : specials)
                if (name == n) {
                    o.kind = Operand::Kind::special;
                    o.value = static_cast<std::uint32_t>(sp);
                    return o;
                }
            fail(line, "unknown special register '" + s + "'");
        }
        if (is_identifier(s)) {
            const auto it = std::find(kernel_.params.begin(), kernel_.params.end(), s);
            if (it == kernel_.params.end()) fail(line, "unknown operand '" + s + "' (not a register or .param)");
            o.kind = Operand::Kind::param;
            o.value = static_cast<std::uint32_t>(it - kernel_.params.begin());
            return o;
        }
        o.kind = Operand::Kind::imm;
        const bool hex = s.find("0x") != std::string::npos || s.find("0X") != std::string::npos;
        const bool is_float = !hex && (s.find('.') != std::string::npos || s.find('e') != std::string::npos ||
                                       s.find("inf") != std::string::npos || s.find("nan") != std::string::npos);
        if (is_float) {
            std::string body = s;
            if (!body.empty() && (body.back() == 'f' || body.back() == 'F')) body.pop_back();
            char* end = nullptr;
            const float f = std::strtof(body.c_str(), &end);
            if (end != body.c_str() + body.size() || body.empty()) fail(line, "bad operand '" + s + "'");
            std::memcpy(&o.value, &f, 4);
            return o;
        }
        const long long v = parse_integer(s, line);
        if (v < -2147483648LL || v > 4294967295LL) fail(line, "immediate '" + s + "' does not fit in 32 bits");
        o.value = static_cast<std::uint32_t>(v);
        return o;
    }

    int parse_register(const std::string& s, int line) const {
        int index = 0;
        if (!parse_indexed(s, 'r', index)) fail(line, "expected a register, got '" + s + "'");
        check_register(index, line);
        return index;
    }

    int parse_predicate(const std::string& s, int line) const {
        int index = 0;
        if (!parse_indexed(s, 'p', index) || index >= kPredicateRegisters)
            fail(line, "expected a predicate p0..p7, got '" + s + "'");
        return index;
    }

    void check_register(int index, int line) const {
        if (kernel_.registers == 0) fail(line, "declare .reg N before using registers");
        if (index >= kernel_.registers)
            fail(line, "register r" + std::to_string(index) + " beyond .reg " + std::to_string(kernel_.registers));
    }

    // "[r1+8]", "[r1-4]", "[r1]", "[64]"
    void parse_address(const std::string& s, Instruction& in, int line) const {
        if (s.size() < 3 || s.front() != '[' || s.back() != ']') fail(line, "expected a memory operand [reg+offset]");
        const std::string body = trim(s.substr(1, s.size() - 2));
        std::size_t sign = body.find_first_of("+-", 1);
        const std::string base = trim(body.substr(0, sign));
        int index = 0;
        if (parse_indexed(base, 'r', index) || is_identifier(base)) {
            in.src[0] = parse_source(base, line);  // a register or a .param holding an address
            if (sign != std::string::npos) {
                long long off = parse_integer(trim(body.substr(sign + 1)), line);
                if (body[sign] == '-') off = -off;
                if (off < -(1LL << 24) || off > (1LL << 24)) fail(line, "address offset out of range");
                in.offset = static_cast<std::int32_t>(off);
            }
        } else {
            const long long a = parse_integer(body, line);
            if (a < 0 || a > 0xffffffffLL) fail(line, "address out of range");
            in.src[0] = {Operand::Kind::imm, static_cast<std::uint32_t>(a)};
        }
    }

    void parse_instruction(const std::string& text_in, int line) {
        Instruction in;
        in.line = line;
        std::string text = text_in;
        if (text[0] == '@') {
            const auto space = text.find_first_of(" \t");
            if (space == std::string::npos) fail(line, "guard without an instruction");
            std::string g = text.substr(1, space - 1);
            if (!g.empty() && g[0] == '!') {
                in.guard_negated = true;
                g = g.substr(1);
            }
            in.guard = static_cast<std::int8_t>(parse_predicate(g, line));
            text = trim(text.substr(space));
        }
        const auto space = text.find_first_of(" \t");
        const std::string mnemonic = text.substr(0, space);
        const std::string rest = space == std::string::npos ? "" : trim(text.substr(space));
        std::vector<std::string> ops = rest.empty() ? std::vector<std::string>{} : split(rest, ',');
        const std::vector<std::string> parts = split(mnemonic, '.');
        const std::string& base = parts[0];

        // Operand pattern: d = dest register, s = source (reg/imm/special/param), P = dest predicate,
        // Q = source predicate, A = memory address, L = label, R = register range base (mma).
        std::string pattern;
        auto simple = [&](Opcode op, Unit unit, const char* pat, bool fp = false) {
            if (parts.size() != 1) fail(line, "'" + mnemonic + "' takes no suffix");
            in.op = op;
            in.unit = unit;
            in.fp_payload = fp;
            pattern = pat;
        };
        if (base == "mov") simple(Opcode::mov, Unit::int_alu, "ds");
        else if (base == "add") simple(Opcode::add, Unit::int_alu, "dss");
        else if (base == "sub") simple(Opcode::sub, Unit::int_alu, "dss");
        else if (base == "mul") simple(Opcode::mul, Unit::int_alu, "dss");
        else if (base == "mad") simple(Opcode::mad, Unit::int_alu, "dsss");
        else if (base == "div") simple(Opcode::div, Unit::int_alu, "dss");
        else if (base == "rem") simple(Opcode::rem, Unit::int_alu, "dss");
        else if (base == "min") simple(Opcode::min, Unit::int_alu, "dss");
        else if (base == "max") simple(Opcode::max, Unit::int_alu, "dss");
        else if (base == "shl") simple(Opcode::shl, Unit::int_alu, "dss");
        else if (base == "shr") simple(Opcode::shr, Unit::int_alu, "dss");
        else if (base == "and") simple(Opcode::and_, Unit::int_alu, "dss");
        else if (base == "or") simple(Opcode::or_, Unit::int_alu, "dss");
        else if (base == "xor") simple(Opcode::xor_, Unit::int_alu, "dss");
        else if (base == "not") simple(Opcode::not_, Unit::int_alu, "ds");
        else if (base == "fadd") simple(Opcode::fadd, Unit::fp32, "dss", true);
        else if (base == "fsub") simple(Opcode::fsub, Unit::fp32, "dss", true);
        else if (base == "fmul") simple(Opcode::fmul, Unit::fp32, "dss", true);
        else if (base == "ffma") simple(Opcode::ffma, Unit::fp32, "dsss", true);
        else if (base == "fmin") simple(Opcode::fmin, Unit::fp32, "dss", true);
        else if (base == "fmax") simple(Opcode::fmax, Unit::fp32, "dss", true);
        else if (base == "i2f") simple(Opcode::i2f, Unit::fp32, "ds", true);
        else if (base == "f2i") simple(Opcode::f2i, Unit::fp32, "ds");
        else if (base == "selp") simple(Opcode::selp, Unit::int_alu, "dssQ");
        else if (base == "prmt") simple(Opcode::prmt, Unit::int_alu, "dsss");
        else if (base == "ex2") simple(Opcode::ex2, Unit::sfu, "ds", true);
        else if (base == "rcp") simple(Opcode::rcp, Unit::sfu, "ds", true);
        else if (base == "rsqrt") simple(Opcode::rsqrt, Unit::sfu, "ds", true);
        else if (base == "exit") simple(Opcode::exit, Unit::control, "");
        else if (base == "nop") simple(Opcode::nop, Unit::control, "");
        else if (base == "bra") simple(Opcode::bra, Unit::control, "L");
        else if (base == "bar") {
            if (parts.size() > 2 || (parts.size() == 2 && parts[1] != "sync")) fail(line, "expected bar.sync");
            in.op = Opcode::bar;
            in.unit = Unit::control;
        } else if (base == "setp") {
            static const char* cmps[] = {"eq", "ne", "lt", "le", "gt", "ge"};
            static const char* types[] = {"s32", "u32", "f32"};
            if (parts.size() != 3) fail(line, "expected setp.CMP.TYPE, e.g. setp.lt.s32");
            int c = -1, t = -1;
            for (int i = 0; i < 6; ++i)
                if (parts[1] == cmps[i]) c = i;
            for (int i = 0; i < 3; ++i)
                if (parts[2] == types[i]) t = i;
            if (c < 0) fail(line, "unknown comparison '" + parts[1] + "' (eq ne lt le gt ge)");
            if (t < 0) fail(line, "unknown compare type '" + parts[2] + "' (s32 u32 f32)");
            in.op = Opcode::setp;
            in.modifier = static_cast<std::uint8_t>(c);
            in.compare_type = static_cast<CompareType>(t);
            in.unit = t == 2 ? Unit::fp32 : Unit::int_alu;
            pattern = "Pss";
        } else if (base == "shfl") {
            if (parts.size() != 2) fail(line, "expected shfl.idx|up|down|bfly");
            const std::string& m = parts[1];
            ShuffleMode mode;
            if (m == "idx") mode = ShuffleMode::idx;
            else if (m == "up") mode = ShuffleMode::up;
            else if (m == "down") mode = ShuffleMode::down;
            else if (m == "bfly" || m == "xor") mode = ShuffleMode::bfly;
            else fail(line, "unknown shuffle mode '" + m + "'");
            in.op = Opcode::shfl;
            in.modifier = static_cast<std::uint8_t>(mode);
            in.unit = Unit::ldst;
            pattern = "dss";
        } else if (base == "ld" || base == "st") {
            if (parts.size() < 2 || parts.size() > 3 || (parts[1] != "global" && parts[1] != "shared") ||
                (parts.size() == 3 && parts[2] != "v2" && parts[2] != "v4"))
                fail(line, "expected " + base + ".global or " + base + ".shared, optionally with .v2 or .v4");
            const bool global = parts[1] == "global";
            in.op = base == "ld" ? (global ? Opcode::ld_global : Opcode::ld_shared)
                                 : (global ? Opcode::st_global : Opcode::st_shared);
            in.unit = Unit::ldst;
            in.vector = parts.size() == 3 ? (parts[2] == "v2" ? 2 : 4) : 1;
            pattern = base == "ld" ? "dA" : "As";
        } else if (base == "cvt") {
            // cvt.f32.f16.lo|hi, cvt.f32.bf16.lo|hi (unpack), cvt.f16x2.f32, cvt.bf16x2.f32 (pack)
            const std::string form = mnemonic.size() > 4 ? mnemonic.substr(4) : std::string();  // bare "cvt"
            static const std::pair<const char*, Conversion> forms[] = {
                {"f32.f16.lo", Conversion::f32_f16_lo},   {"f32.f16.hi", Conversion::f32_f16_hi},
                {"f32.bf16.lo", Conversion::f32_bf16_lo}, {"f32.bf16.hi", Conversion::f32_bf16_hi},
                {"f16x2.f32", Conversion::f16x2_f32},     {"bf16x2.f32", Conversion::bf16x2_f32},
                // PTX ISA "cvt" (Data Movement and Conversion Instructions), sm_89+ fp8 forms; the
                // source of the unpacking ones is a 16-bit half (.lo/.hi) of a 32-bit register.
                {"rn.f16x2.e4m3x2.lo", Conversion::f16x2_e4m3x2_lo}, {"rn.f16x2.e4m3x2.hi", Conversion::f16x2_e4m3x2_hi},
                {"rn.f16x2.e5m2x2.lo", Conversion::f16x2_e5m2x2_lo}, {"rn.f16x2.e5m2x2.hi", Conversion::f16x2_e5m2x2_hi},
                {"rn.satfinite.e4m3x2.f32", Conversion::e4m3x2_f32}, {"rn.satfinite.e5m2x2.f32", Conversion::e5m2x2_f32}};
            bool found = false;
            for (const auto& [n, c] : forms)
                if (form == n) {
                    in.modifier = static_cast<std::uint8_t>(c);
                    found = true;
                }
            if (!found)
                fail(line, "unknown conversion '" + mnemonic +
                               "' (cvt.f32.f16.lo|hi, cvt.f32.bf16.lo|hi, cvt.f16x2.f32, cvt.bf16x2.f32, "
                               "cvt.rn.f16x2.e4m3x2.lo|hi, cvt.rn.f16x2.e5m2x2.lo|hi, cvt.rn.satfinite.e4m3x2.f32, "
                               "cvt.rn.satfinite.e5m2x2.f32)");
            in.op = Opcode::cvt;
            in.unit = Unit::fp32;
            in.fp_payload = true;
            const auto c = static_cast<Conversion>(in.modifier);
            pattern = c == Conversion::f16x2_f32 || c == Conversion::bf16x2_f32 || c == Conversion::e4m3x2_f32 ||
                              c == Conversion::e5m2x2_f32
                          ? "dss"
                          : "ds";
        } else if (base == "mma") {
            // The int8 and fp8 forms also in PTX's full spelling (PTX ISA 9.7.14.5.10, mma.m16n8k32):
            // mma.m16n8k32.s8, mma.m16n8k32.e4m3 (both operands), mma.m16n8k32.e5m2.e4m3 (A's type,
            // then B's: the fp8 types mix, as .atype and .btype of the full form do).
            MmaType a_type = MmaType::f16, b_type = MmaType::f16;
            auto fp8_type = [](const std::string& t) -> std::optional<MmaType> {
                if (t == "e4m3") return MmaType::e4m3;
                if (t == "e5m2") return MmaType::e5m2;
                return std::nullopt;
            };
            const std::string full = "mma.sync.aligned.m16n8k32.row.col.";
            bool valid = false;
            if (parts.size() == 3 && parts[1] == "m16n8k16" && (parts[2] == "f16" || parts[2] == "bf16")) {
                a_type = b_type = parts[2] == "f16" ? MmaType::f16 : MmaType::bf16;
                valid = true;
            } else if (mnemonic == "mma.m16n8k32.s8" || mnemonic == full + "s32.s8.s8.s32") {
                a_type = b_type = MmaType::s8;
                valid = true;
            } else if ((parts.size() == 3 || parts.size() == 4) && parts[1] == "m16n8k32" &&
                       fp8_type(parts[2]) && fp8_type(parts.back())) {
                a_type = *fp8_type(parts[2]);
                b_type = *fp8_type(parts.back());
                valid = true;
            } else if (mnemonic.compare(0, full.size(), full) == 0) {
                const std::vector<std::string> types = split(mnemonic.substr(full.size()), '.');
                if (types.size() == 4 && types[0] == "f32" && types[3] == "f32" && fp8_type(types[1]) && fp8_type(types[2])) {
                    a_type = *fp8_type(types[1]);
                    b_type = *fp8_type(types[2]);
                    valid = true;
                }
            }
            if (!valid)
                fail(line, "expected mma.m16n8k16.f16, mma.m16n8k16.bf16, mma.m16n8k32.s8, mma.m16n8k32.e4m3, "
                           "mma.m16n8k32.e5m2 or mixed fp8 mma.m16n8k32.e4m3.e5m2 / .e5m2.e4m3");
            in.op = Opcode::mma;
            in.unit = Unit::tensor;
            in.modifier = static_cast<std::uint8_t>(a_type);
            in.b_type = static_cast<std::uint8_t>(b_type);
            in.fp_payload = true;  // payload (int8 data too): only the values depend on it
            pattern = "RRRR";
        } else if (base == "wgmma") {
            // PTX ISA 9.7.15 (warpgroup-level matrix instructions): wgmma.fence,
            // wgmma.mma_async.m64nNk16.f16|bf16 D, a, b, a_pitch, b_pitch[, imm-trans-b], the 8-bit forms
            // wgmma.mma_async.m64nNk32.ATYPE.BTYPE (the same operands), wgmma.commit_group,
            // wgmma.wait_group N.
            const std::string form = parts.size() > 1 ? parts[1] : "";
            if (form == "fence" && parts.size() == 2) {
                in.op = Opcode::wgmma_fence;
                in.unit = Unit::control;
            } else if (form == "commit_group" && parts.size() == 2) {
                in.op = Opcode::wgmma_commit;
                in.unit = Unit::control;
            } else if (form == "wait_group" && parts.size() == 2) {
                in.op = Opcode::wgmma_wait;
                in.unit = Unit::control;
                pattern = "s";
            } else if (form == "mma_async" && (parts.size() == 4 || parts.size() == 5)) {
                // PTX ISA 9.7.15.5.2 (wgmma.mma_async), its .shape / .atype / .btype lists:
                // k16 takes .f16 or .bf16 (one type for both operands), N = 8..256 in steps of 8;
                // k32 takes fp8 .e4m3 / .e5m2 with fp32 accumulators, A's and B's types chosen
                // independently, N as for k16, or integer .s8.s8 with .s32 accumulators, N = 8,
                // 16, 24, then 32..256 in steps of 16 (.u8 is not modelled).
                const std::string& shape = parts[2];
                const bool k32 = parts.size() == 5;
                const std::string k_suffix = k32 ? "k32" : "k16";
                int n_dim = 0;
                if (shape.size() > 7 && shape.compare(0, 4, "m64n") == 0 && shape.compare(shape.size() - 3, 3, k_suffix) == 0) {
                    const std::string digits = shape.substr(4, shape.size() - 7);
                    if (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
                        n_dim = std::stoi(digits);
                }
                if (n_dim < 8 || n_dim > 256 || n_dim % 8 != 0)
                    fail(line, "expected wgmma.mma_async.m64nN" + k_suffix + " with N a multiple of 8 from 8 to 256, got '" + shape + "'");
                MmaType a_type = MmaType::f16, b_type = MmaType::f16;
                if (!k32) {
                    if (parts[3] != "f16" && parts[3] != "bf16") fail(line, "wgmma.mma_async.m64nNk16 takes .f16 or .bf16 inputs");
                    a_type = b_type = parts[3] == "f16" ? MmaType::f16 : MmaType::bf16;
                } else {
                    auto eight_bit = [&](const std::string& t) {
                        if (t == "e4m3") return MmaType::e4m3;
                        if (t == "e5m2") return MmaType::e5m2;
                        if (t == "s8") return MmaType::s8;
                        fail(line, "wgmma.mma_async.m64nNk32 takes .e4m3, .e5m2 or .s8 operands, got '." + t + "'");
                        return MmaType::s8;
                    };
                    a_type = eight_bit(parts[3]);
                    b_type = eight_bit(parts[4]);
                    if ((a_type == MmaType::s8) != (b_type == MmaType::s8))
                        fail(line, "wgmma.mma_async.m64nNk32: .s8 pairs with .s8 only (fp8 types may mix)");
                    if (a_type == MmaType::s8 && n_dim > 24 && n_dim % 16 != 0)
                        fail(line, "wgmma.mma_async.m64nNk32.s8.s8: N must be 8, 16, 24 or a multiple of 16 up to 256, got " +
                                       std::to_string(n_dim));
                }
                in.op = Opcode::wgmma_mma;
                in.unit = Unit::tensor;
                in.modifier = static_cast<std::uint8_t>(a_type);
                in.b_type = static_cast<std::uint8_t>(b_type);
                in.wgmma_n = static_cast<std::uint16_t>(n_dim);
                in.fp_payload = true;
                pattern = "Rssii";
                // PTX's imm-trans-b, for .f16 / .bf16 only (PTX ISA 9.7.15.5.1): 1 = B N-major
                // (the default when omitted), 0 = K-major.
                if (ops.size() == 6) {
                    if (k32) fail(line, "wgmma.mma_async.m64nNk32 takes no transpose operand (PTX: K-major operands only)");
                    pattern = "RssiiT";
                }
            } else {
                fail(line, "unknown '" + mnemonic + "' (wgmma.fence, wgmma.mma_async.m64nNk16.f16|bf16, "
                                                     "wgmma.mma_async.m64nNk32.e4m3|e5m2.e4m3|e5m2, "
                                                     "wgmma.mma_async.m64nNk32.s8.s8, wgmma.commit_group, wgmma.wait_group)");
            }
        } else if (base == "mbarrier") {
            // PTX ISA 9.7.13.15 (mbarrier): init, arrive, arrive.expect_tx, and the blocking form of
            // the try_wait.parity loop.
            const std::string form = mnemonic.size() > 9 ? mnemonic.substr(9) : std::string();
            in.unit = Unit::ldst;
            if (form == "init") {
                in.op = Opcode::mbarrier_init;
                pattern = "As";
            } else if (form == "arrive") {
                in.op = Opcode::mbarrier_arrive;
                pattern = "A";
            } else if (form == "arrive.expect_tx") {
                in.op = Opcode::mbarrier_expect_tx;
                pattern = "As";
            } else if (form == "arrive.remote") {
                // PTX mbarrier.arrive.shared::cluster on a mapa address: the barrier at this
                // shared address in the cluster's block of rank src.
                in.op = Opcode::mbarrier_arrive_remote;
                pattern = "As";
            } else if (form == "wait.parity") {
                in.op = Opcode::mbarrier_wait;
                in.unit = Unit::control;
                pattern = "As";
            } else {
                fail(line, "unknown '" + mnemonic + "' (mbarrier.init, mbarrier.arrive, mbarrier.arrive.expect_tx, "
                                                     "mbarrier.wait.parity)");
            }
        } else if (base == "cp") {
            // PTX ISA 9.7.9.25 (cp.async.bulk.tensor), global -> shared, 2-D box given in the
            // mnemonic: cp.async.bulk.tensor.2d.ROWSxBYTES [dst], src, pitch, mbar[, rows, bytes].
            // The bounded form names the tensor's extent from the box's origin (the rows and the
            // bytes of each row inside it; PTX's tensor map holds the tensor's dimensions): what
            // lies outside lands as zeros, as TMA fills out-of-bounds elements.
            // The im2col form, cp.async.bulk.tensor.im2col.ROWSxBYTES [dst], tmap, mbar, pixel,
            // channel_bytes, offsets: PTX's .im2col load mode on an NHWC tensor, its map at the
            // global address tmap (Im2colMapWord); row i of the box is output pixel pixel + i
            // (n, oy, ox in row-major order), read from input pixel (oy * stride - pad + r *
            // dilation, ox * ... + s * ...) at channel_bytes on, with offsets = r << 16 | s (PTX's
            // im2colOffsets, 16 bits each); rows outside the image or past the pixels land as zeros.
            const std::string prefix = "cp.async.bulk.tensor.2d.", multicast = "multicast.", im2col = "cp.async.bulk.tensor.im2col.";
            const bool gather = mnemonic.compare(0, im2col.size(), im2col) == 0;
            std::string box = gather ? mnemonic.substr(im2col.size())
                              : mnemonic.compare(0, prefix.size(), prefix) == 0 ? mnemonic.substr(prefix.size()) : "";
            // .multicast: PTX's .multicast::cluster with every block of the cluster in ctaMask.
            const bool to_cluster = !gather && box.compare(0, multicast.size(), multicast) == 0;
            if (to_cluster) box = box.substr(multicast.size());
            in.modifier = to_cluster ? kTmaMulticast : 0;
            const auto x = box.find('x');
            long long rows = 0, row_bytes = 0;
            if (x != std::string::npos && x > 0 && x + 1 < box.size() &&
                std::all_of(box.begin(), box.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) || ch == 'x'; })) {
                rows = std::stoll(box.substr(0, x));
                row_bytes = std::stoll(box.substr(x + 1));
            }
            if (rows < 1 || rows > 256 || row_bytes < 16 || row_bytes > 1024 || row_bytes % 16 != 0)
                fail(line, "expected cp.async.bulk.tensor.2d[.multicast].ROWSxBYTES or cp.async.bulk.tensor.im2col.ROWSxBYTES with "
                           "1..256 rows of 16..1024 bytes (a multiple of 16), got '" + mnemonic + "'");
            in.op = Opcode::tma_load;
            in.unit = Unit::ldst;
            in.box_rows = static_cast<std::uint16_t>(rows);
            in.box_row_bytes = static_cast<std::uint16_t>(row_bytes);
            if (gather) {
                if (ops.size() != 6)
                    fail(line, "'" + mnemonic + "' takes 6 operands ([dst], tmap, mbar, pixel, channel_bytes, offsets), got " +
                                   std::to_string(ops.size()));
                in.modifier = kTmaIm2col;
                pattern = "Asssss";
            } else {
                if (ops.size() != 4 && ops.size() != 6)
                    fail(line, "'" + mnemonic + "' takes 4 operands ([dst], src, pitch, mbar) or 6 (and the tensor's rows and "
                               "bytes per row from src on), got " + std::to_string(ops.size()));
                if (ops.size() == 6) in.modifier |= kTmaBounded;
                pattern = ops.size() == 6 ? "Asssss" : "Asss";
            }
        } else {
            fail(line, "unknown instruction '" + mnemonic + "'");
        }

        if (ops.size() != pattern.size())
            fail(line, "'" + mnemonic + "' takes " + std::to_string(pattern.size()) + " operand(s), got " +
                           std::to_string(ops.size()));
        int next_src = 0;
        std::string label;
        for (std::size_t i = 0; i < pattern.size(); ++i) {
            const std::string& s = ops[i];
            switch (pattern[i]) {
                case 'd': in.dst = {Operand::Kind::reg, static_cast<std::uint32_t>(parse_register(s, line))}; break;
                case 's': in.src[next_src++] = parse_source(s, line); break;
                case 'P': in.dst = {Operand::Kind::pred, static_cast<std::uint32_t>(parse_predicate(s, line))}; break;
                case 'Q':
                    in.src[next_src++] = {Operand::Kind::pred, static_cast<std::uint32_t>(parse_predicate(s, line))};
                    break;
                case 'A':
                    parse_address(s, in, line);
                    next_src = 1;
                    break;
                case 'L':
                    if (!is_identifier(s)) fail(line, "expected a label, got '" + s + "'");
                    label = s;
                    break;
                case 'i': {
                    const long long v = parse_integer(s, line);
                    if (v < 16 || v > 4096 || v % 16 != 0)
                        fail(line, "wgmma operand pitch must be 16..4096 bytes, a multiple of 16, got " + s);
                    (next_src == 2 ? in.a_pitch : in.b_pitch) = static_cast<std::uint16_t>(v);
                    ++next_src;
                    break;
                }
                case 'T': {
                    const long long v = parse_integer(s, line);
                    if (v != 0 && v != 1) fail(line, "wgmma imm-trans-b must be 0 (B K-major) or 1 (B N-major), got " + s);
                    in.wgmma_trans_b = v == 1;
                    break;
                }
                case 'R': {
                    const int r = parse_register(s, line);
                    if (in.op == Opcode::wgmma_mma) {
                        const int width = in.wgmma_n / 2;  // fp32 / s32 accumulators per thread
                        if (r + width > kernel_.registers)
                            fail(line, "wgmma accumulator " + s + " needs " + std::to_string(width) + " registers from r" +
                                           std::to_string(r) + ", beyond .reg " + std::to_string(kernel_.registers));
                        in.dst = {Operand::Kind::reg, static_cast<std::uint32_t>(r)};
                        break;
                    }
                    const int width = i == 2 ? 2 : 4;  // d, a, c: 4 registers; b: 2
                    if (r + width > kernel_.registers)
                        fail(line, "mma operand " + s + " needs " + std::to_string(width) + " registers from r" +
                                       std::to_string(r) + ", beyond .reg " + std::to_string(kernel_.registers));
                    if (i == 0) in.dst = {Operand::Kind::reg, static_cast<std::uint32_t>(r)};
                    else in.src[i - 1] = {Operand::Kind::reg, static_cast<std::uint32_t>(r)};
                    break;
                }
            }
        }
        if (in.vector > 1) {
            // Vector memory ops move registers r..r+N-1: the value must be a register range.
            const bool load = in.op == Opcode::ld_global || in.op == Opcode::ld_shared;
            const Operand& range = load ? in.dst : in.src[1];
            if (range.kind != Operand::Kind::reg)
                fail(line, "'" + mnemonic + "' needs a register as its value operand");
            if (range.value + in.vector > static_cast<std::uint32_t>(kernel_.registers))
                fail(line, "'" + mnemonic + "' needs " + std::to_string(in.vector) + " registers from r" +
                               std::to_string(range.value) + ", beyond .reg " + std::to_string(kernel_.registers));
        }
        if (in.op == Opcode::wgmma_wait && (in.src[0].kind != Operand::Kind::imm || in.src[0].value > 7))
            fail(line, "wgmma.wait_group takes an immediate 0..7");
        if (in.op == Opcode::mma) {
            const std::uint32_t d = in.dst.value;
            for (int k = 0; k < 3; ++k) {
                const int w = k == 1 ? 2 : 4;
                const std::uint32_t s = in.src[k].value;
                if (s < d + 4 && d < s + static_cast<std::uint32_t>(w) && !(k == 2 && s == d))
                    fail(line, "mma destination overlaps an A or B operand");
            }
        }
        fill_scoreboard_lists(in);
        kernel_.code.push_back(in);
        branch_labels_.push_back(label);
    }

    static void fill_scoreboard_lists(Instruction& in) {
        std::vector<std::uint8_t> reads;  // once per instruction at assembly time
        auto add_read = [&](std::uint32_t r) {
            if (std::find(reads.begin(), reads.end(), r) == reads.end()) reads.push_back(static_cast<std::uint8_t>(r));
        };
        if (in.guard >= 0) in.predicates_read |= static_cast<std::uint8_t>(1u << in.guard);
        if (in.op == Opcode::mma) {
            for (std::uint32_t i = 0; i < 4; ++i) add_read(in.src[0].value + i);
            for (std::uint32_t i = 0; i < 2; ++i) add_read(in.src[1].value + i);
            for (std::uint32_t i = 0; i < 4; ++i) add_read(in.src[2].value + i);
            for (std::uint32_t i = 0; i < 4; ++i) in.writes[i] = static_cast<std::uint8_t>(in.dst.value + i);
            in.writes_count = 4;
        } else {
            for (const Operand& s : in.src) {
                if (s.kind == Operand::Kind::reg) add_read(s.value);
                if (s.kind == Operand::Kind::pred) in.predicates_read |= static_cast<std::uint8_t>(1u << s.value);
            }
            // A vector store reads v..v+N-1 (src[1] is v, added above), a vector load writes d..d+N-1.
            if (in.src[1].kind == Operand::Kind::reg && (in.op == Opcode::st_global || in.op == Opcode::st_shared))
                for (std::uint32_t i = 1; i < in.vector; ++i) add_read(in.src[1].value + i);
            // wgmma's accumulators are asynchronous: no scoreboard (wgmma.fence and
            // wgmma.wait_group order them, as PTX requires of programs).
            if (in.dst.kind == Operand::Kind::reg && in.op != Opcode::wgmma_mma) {
                for (std::uint32_t i = 0; i < in.vector; ++i)
                    in.writes[i] = static_cast<std::uint8_t>(in.dst.value + i);
                in.writes_count = in.vector;
            }
            if (in.dst.kind == Operand::Kind::pred) in.predicates_written |= static_cast<std::uint8_t>(1u << in.dst.value);
        }
        in.reads_count = static_cast<std::uint8_t>(std::min(reads.size(), sizeof(in.reads)));
        std::copy(reads.begin(), reads.begin() + in.reads_count, in.reads);
    }

    // True when a store writes at least one payload register.
    static bool stored_payload(const Instruction& in, const std::bitset<256>& reg) {
        if (in.src[1].kind != Operand::Kind::reg) return false;
        for (std::uint32_t i = 0; i < in.vector; ++i)
            if (reg[in.src[1].value + i]) return true;
        return false;
    }

    // Flow-insensitive taint analysis: a register or predicate is "payload" if a floating-point
    // payload instruction may have written it, directly or through integer ops, shuffles, or memory
    // (a load is payload when the kernel stores payload to that space). Skipping payload is safe
    // only if no guard, branch, exit, address or shuffle lane is payload.
    void check_fp_dependence() {
        std::bitset<256> reg;
        std::bitset<kPredicateRegisters> pred;
        bool global_tainted = false, shared_tainted = false;
        bool changed = true;
        auto src_tainted = [&](const Instruction& in) {
            for (int i = 0; i < in.reads_count; ++i)
                if (reg[in.reads[i]]) return true;
            for (int p = 0; p < kPredicateRegisters; ++p)
                if (((in.predicates_read >> p) & 1) && pred[p] && p != in.guard) return true;
            return false;
        };
        while (changed) {
            changed = false;
            for (const Instruction& in : kernel_.code) {
                bool t = in.fp_payload || src_tainted(in);
                if (in.op == Opcode::ld_global) t = global_tainted;
                if (in.op == Opcode::ld_shared) t = shared_tainted;
                if (in.op == Opcode::tma_load) {
                    if (global_tainted && !shared_tainted) shared_tainted = changed = true;
                    continue;
                }
                if (in.op == Opcode::wgmma_mma) {
                    for (std::uint32_t i = 0; i < in.wgmma_n / 2u; ++i)
                        if (!reg[in.dst.value + i]) reg[in.dst.value + i] = changed = true;
                    continue;
                }
                if (in.op == Opcode::st_global || in.op == Opcode::st_shared) {
                    const bool value_tainted = stored_payload(in, reg);
                    bool& space = in.op == Opcode::st_global ? global_tainted : shared_tainted;
                    if (value_tainted && !space) space = changed = true;
                    continue;
                }
                if (!t) continue;
                for (int i = 0; i < in.writes_count; ++i)
                    if (!reg[in.writes[i]]) reg[in.writes[i]] = changed = true;
                for (int p = 0; p < kPredicateRegisters; ++p)
                    if (((in.predicates_written >> p) & 1) && !pred[p]) pred[p] = changed = true;
            }
        }
        kernel_.fp_payload_skippable = true;
        for (const Instruction& in : kernel_.code) {
            std::string why;
            if (in.guard >= 0 && pred[in.guard]) why = "its guard predicate";
            const bool memory = in.op == Opcode::ld_global || in.op == Opcode::st_global ||
                                in.op == Opcode::ld_shared || in.op == Opcode::st_shared;
            if (memory && in.src[0].kind == Operand::Kind::reg && reg[in.src[0].value]) why = "its address";
            const bool asynchronous = in.op == Opcode::tma_load || in.op == Opcode::wgmma_mma ||
                                      in.op == Opcode::mbarrier_init || in.op == Opcode::mbarrier_arrive ||
                                      in.op == Opcode::mbarrier_expect_tx || in.op == Opcode::mbarrier_wait ||
                                      in.op == Opcode::mbarrier_arrive_remote;
            if (asynchronous)
                for (const Operand& o : in.src)
                    if (o.kind == Operand::Kind::reg && reg[o.value]) why = "an address, count or parity operand";
            if (in.op == Opcode::shfl && in.src[1].kind == Operand::Kind::reg && reg[in.src[1].value])
                why = "its source lane";
            if (!why.empty()) {
                kernel_.fp_payload_skippable = false;
                kernel_.fp_dependence = kernel_.where(in) + ": " + why + " depends on floating-point data";
                return;
            }
        }
        // Safe to skip: every instruction whose results are all payload computes nothing that
        // control flow or an address can see; loads and stores of payload keep their addresses.
        for (Instruction& in : kernel_.code) {
            if (in.op == Opcode::ld_global || in.op == Opcode::ld_shared) {
                in.payload_data = reg[in.dst.value];
                continue;
            }
            if (in.op == Opcode::tma_load) {
                in.payload_data = global_tainted;
                continue;
            }
            if (in.op == Opcode::st_global || in.op == Opcode::st_shared) {
                // A partly-payload vector store taints the whole space, so nothing reads its
                // non-payload words as anything but payload: skipping all of its data is safe.
                in.payload_data = stored_payload(in, reg);
                continue;
            }
            if (in.writes_count == 0 && in.predicates_written == 0) continue;
            bool all_payload = true;
            for (int i = 0; i < in.writes_count; ++i) all_payload &= reg[in.writes[i]];
            for (int p = 0; p < kPredicateRegisters; ++p)
                if ((in.predicates_written >> p) & 1) all_payload &= pred[static_cast<std::size_t>(p)];
            if (all_payload) in.fp_payload = true;
        }
    }

    Kernel kernel_;
    std::vector<std::string> branch_labels_;
    int last_line_ = 1;
};

}  // namespace

std::vector<int> immediate_post_dominators(const std::vector<Instruction>& code) {
    const int n = static_cast<int>(code.size());
    const int nodes = n + 1;  // node n is the virtual exit
    const int words = (nodes + 63) / 64;
    auto successors = [&](int i, int out[2]) {
        const Instruction& in = code[static_cast<std::size_t>(i)];
        const int next = i + 1;  // falling off the end is an exit (next == n)
        if (in.op == Opcode::bra) {
            out[0] = in.target;
            return in.guard >= 0 ? (out[1] = next, 2) : 1;
        }
        if (in.op == Opcode::exit) {
            out[0] = n;
            return in.guard >= 0 ? (out[1] = next, 2) : 1;
        }
        out[0] = next;
        return 1;
    };
    std::vector<std::uint64_t> pdom(static_cast<std::size_t>(nodes) * words, ~0ULL);
    auto set = [&](int node) { return &pdom[static_cast<std::size_t>(node) * words]; };
    std::fill(set(n), set(n) + words, 0ULL);
    set(n)[n / 64] |= 1ULL << (n % 64);
    std::vector<std::uint64_t> tmp(static_cast<std::size_t>(words));
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = n - 1; i >= 0; --i) {
            int succ[2];
            const int count = successors(i, succ);
            std::copy(set(succ[0]), set(succ[0]) + words, tmp.begin());
            for (int k = 1; k < count; ++k)
                for (int w = 0; w < words; ++w) tmp[static_cast<std::size_t>(w)] &= set(succ[k])[w];
            tmp[static_cast<std::size_t>(i / 64)] |= 1ULL << (i % 64);
            if (!std::equal(tmp.begin(), tmp.end(), set(i))) {
                std::copy(tmp.begin(), tmp.end(), set(i));
                changed = true;
            }
        }
    }
    auto size_of = [&](int node) {
        int c = 0;
        for (int w = 0; w < words; ++w) c += __builtin_popcountll(set(node)[w]);
        return c;
    };
    std::vector<int> sizes(static_cast<std::size_t>(nodes));
    for (int d = 0; d < nodes; ++d) sizes[static_cast<std::size_t>(d)] = size_of(d);
    std::vector<int> ipdom(static_cast<std::size_t>(n), n);
    for (int i = 0; i < n; ++i) {
        // Post-dominators form a chain; the immediate one is the strict post-dominator with the
        // largest post-dominator set (nearest to i).
        int best = n, best_size = -1;
        for (int d = 0; d < nodes; ++d) {
            if (d == i || !((set(i)[d / 64] >> (d % 64)) & 1)) continue;
            const int s = sizes[static_cast<std::size_t>(d)];
            if (s > best_size && s < sizes[static_cast<std::size_t>(i)]) {
                best = d;
                best_size = s;
            }
        }
        ipdom[static_cast<std::size_t>(i)] = best;
    }
    return ipdom;
}

Kernel assemble(const std::string& source, const std::string& file_name) {
    Parser parser(file_name);
    std::istringstream in(source);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) parser.parse_line(line, ++number);
    parser.set_last_line(std::max(number, 1));
    return parser.finish();
}

Kernel assemble_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw AssemblyError(path + ":1: cannot open kernel file");
    std::stringstream buffer;
    buffer << f.rdbuf();
    return assemble(buffer.str(), path);
}

const char* opcode_name(Opcode op) {
    static const char* names[] = {"mov",  "add",  "sub",   "mul",  "mad",  "div", "rem", "min",  "max",       "shl",
                                  "shr",  "and",  "or",    "xor",  "not",  "fadd", "fsub",      "fmul",
                                  "ffma", "fmin", "fmax",  "i2f",  "f2i",  "setp", "selp",      "ex2",
                                  "rcp",  "rsqrt", "shfl", "ld.global", "st.global", "ld.shared", "st.shared",
                                  "bar.sync", "bra", "exit", "mma", "nop", "cvt", "prmt",
                                  "wgmma.fence", "wgmma.mma_async", "wgmma.commit_group", "wgmma.wait_group",
                                  "mbarrier.init", "mbarrier.arrive", "mbarrier.arrive.expect_tx",
                                  "mbarrier.wait.parity", "cp.async.bulk.tensor.2d", "mbarrier.arrive.remote"};
    return names[static_cast<int>(op)];
}

}  // namespace accelsim::simt
