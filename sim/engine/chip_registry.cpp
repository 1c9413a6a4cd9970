#include "sim/engine/chip_registry.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "models/gpu/gpu_chip.h"
#include "models/tpu/tpu_chip_model.h"
#include "sim/input_error.h"
#include "sim/config/model_params.h"

namespace accelsim {

namespace {

std::string config_where(const ChipConfig& config) { return config.file.empty() ? "config" : config.file; }

// ---- kind "systolic": models/tpu ----

std::unique_ptr<ChipModel> make_systolic_chip(const ChipConfig& config, const RunOptions& options) {
    const tpu::TpuChipParams params = tpu_params_from_config(config);
    try {
        return std::make_unique<tpu::TpuChipModel>(params, tpu::TpuChipModelOptions{options.validate, options.systemc});
    } catch (const std::invalid_argument& e) {
        // MxuParams::validate and the chip's own checks name the key ("mxu.rows must be ...").
        throw InputError(config_where(config) + ": " + e.what());
    }
}

// ---- kind "simt": models/gpu ----

std::unique_ptr<ChipModel> make_simt_chip(const ChipConfig& config, const RunOptions& options) {
    const gpu::GpuChipParams params = gpu_params_from_config(config);
    try {
        return std::make_unique<gpu::GpuChip>(params, gpu::GpuChipOptions{options.validate, options.systemc, options.reuse_repeated_ops});
    } catch (const std::invalid_argument& e) {
        throw InputError(config_where(config) + ": " + e.what());
    }
}

struct Registry {
    std::mutex mutex;
    std::vector<std::pair<std::string, ChipFactory>> kinds;
};

Registry& registry() {
    // The built-in kinds: one line per chip kind.
    static Registry r{{}, {{"systolic", make_systolic_chip}, {"simt", make_simt_chip}}};
    return r;
}

}  // namespace

void register_chip_kind(const std::string& kind, ChipFactory factory) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (kind.empty()) throw std::logic_error("register_chip_kind: empty kind");
    for (const auto& [name, make] : r.kinds)
        if (name == kind) throw std::logic_error("register_chip_kind: kind '" + kind + "' is already registered");
    r.kinds.emplace_back(kind, std::move(factory));
}

std::vector<std::string> chip_kinds() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::vector<std::string> names;
    for (const auto& [name, make] : r.kinds) names.push_back(name);
    return names;
}

std::unique_ptr<ChipModel> make_chip(const ChipConfig& config, const RunOptions& options) {
    ChipFactory factory;
    {
        Registry& r = registry();
        std::lock_guard<std::mutex> lock(r.mutex);
        for (const auto& [name, make] : r.kinds)
            if (name == config.kind) factory = make;
    }
    if (!factory) {
        std::string known;
        for (const std::string& name : chip_kinds()) known += (known.empty() ? "" : ", ") + name;
        throw InputError(config_where(config) + ": kind = \"" + config.kind + "\" is not a chip kind this build knows (" +
                         known + ")");
    }
    return factory(config, options);
}

}  // namespace accelsim
