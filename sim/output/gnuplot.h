#pragma once
// gnuplot as a child process, for the plots accelsim draws (`sweep plot`, `--plot-roofline`): the
// script goes in on stdin with its data inline, so no temporary files are left behind.
#include <string>

namespace accelsim {

// A gnuplot double-quoted literal; `markup` escapes enhanced-text characters (for titles and
// labels, where "mxu_rows" would otherwise print a subscript), not for file names.
std::string gnuplot_quote(const std::string& text, bool markup = true);

// The `set terminal` line for an output named *.svg or *.png; throws InputError naming `option`
// and the file for any other extension.
std::string gnuplot_terminal(const std::string& option, const std::string& output);

// True when a `gnuplot` executable is on PATH (checked before a long simulation, so a missing
// gnuplot fails at once).
bool gnuplot_installed();
inline constexpr const char* kGnuplotMissing =
    "gnuplot is not installed (Debian package gnuplot-nox; scripts/build.sh installs it)";

// Runs gnuplot on the script; returns an empty string or the reason it failed.
std::string run_gnuplot(const std::string& script);

}  // namespace accelsim
