#pragma once
// The MXU's own Params from the validated config (the loader already checked every value).
#include "models/mxu/mxu.h"
#include "sim/config/chip_config.h"

namespace accelsim {

inline MxuParams mxu_params_from_config(const MxuConfig& c) {
    MxuParams p;
    p.rows = c.rows;
    p.cols = c.cols;
    p.dataflow = parse_mxu_dataflow(c.dataflow).value_or(MxuDataflow::ws);
    p.overlap_folds = c.overlap_folds;
    p.mode = parse_mxu_mode(c.mode).value_or(MxuMode::fast);
    return p;
}

}  // namespace accelsim
